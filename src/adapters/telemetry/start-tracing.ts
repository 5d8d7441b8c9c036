import { context, propagation, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import type { Logger } from '../../logger.ts'
import { EnterableContextManager } from './context.ts'
import type { SamplerName } from './settings.ts'
import { setActiveTracing, type Tracing, type TracingSettings } from './tracing.ts'

// Loaded only when tracing is on (tracing.ts imports it dynamically): the SDK and the exporters take
// seconds to load on a busy machine, which an untraced process does not pay.

const samplerOf = (name: SamplerName, ratio: number): Sampler => {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio)
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
    default:
      return name satisfies never
  }
}

/** The OpenTelemetry SDK started: exporter, sampler, resource, and the global registrations. */
export const startSdk = (settings: TracingSettings, url: string, log: Logger): Tracing => {
  const exporter = settings.protocol === 'http/json' ? new JsonExporter({ url }) : new ProtobufExporter({ url })
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: settings.serviceVersion }),
    sampler: samplerOf(settings.sampler, settings.samplerRatio),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: settings.scheduleDelayMs })],
  })
  const contexts = new EnterableContextManager()
  context.setGlobalContextManager(contexts)
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  trace.setGlobalTracerProvider(provider)
  setActiveTracing(provider.getTracer('satang', settings.serviceVersion), contexts)
  log.info({ endpoint: new URL(url).origin, protocol: settings.protocol, serviceName: settings.serviceName, sampler: settings.sampler }, 'OpenTelemetry tracing on')
  return {
    enabled: true,
    shutdown: async () => {
      await provider.shutdown().catch((e: unknown) => log.warn({ err: e }, 'OpenTelemetry: the last spans could not be sent'))
      trace.disable()
      propagation.disable()
      context.disable()
      setActiveTracing(undefined)
    },
  }
}

