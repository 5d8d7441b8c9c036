import { tracingStarted, type Tracing, type TracingSettings } from '../adapters/telemetry/tracing.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'

/** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or {OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces; undefined = tracing off. */
export const tracesUrlOf = (config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>): string | undefined =>
  config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (config.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`)

/** The tracing settings of a process running `role` (`all` for `satang up`), from the standard OTEL_* variables. */
export const tracingSettingsOf = (config: Config, role: string, version: string): TracingSettings => ({
  url: tracesUrlOf(config),
  protocol: config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
  serviceName: config.OTEL_SERVICE_NAME ?? `satang-${role}`,
  serviceVersion: version,
  sampler: config.OTEL_TRACES_SAMPLER,
  samplerRatio: config.OTEL_TRACES_SAMPLER_ARG ?? 1,
  resourceAttributes: config.OTEL_RESOURCE_ATTRIBUTES ?? {},
  scheduleDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
})

/** Starts tracing when `settings.url` is set (the SDK and exporters are loaded only then); one per process. */
export const startTracing = async (settings: TracingSettings, log: Logger): Promise<Tracing> => {
  if (settings.url === undefined) return { enabled: false, shutdown: async () => undefined }
  if (tracingStarted()) throw new Error('tracing is already started in this process')
  const { startSdk } = await import('../adapters/telemetry/start-tracing.ts')
  return startSdk(settings, settings.url, log)
}

/** Starts this process's tracing (off unless an OTLP endpoint is configured). */
export const startProcessTracing = (config: Config, role: string, version: string, log: Logger): Promise<Tracing> => startTracing(tracingSettingsOf(config, role, version), log)
