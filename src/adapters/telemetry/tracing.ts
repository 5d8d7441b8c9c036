import { context, propagation, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api'
import type { EnterableContextManager } from './context.ts'
import type { OtlpProtocol, SamplerName } from './settings.ts'

/**
 * OpenTelemetry tracing of one satang process: off unless an OTLP endpoint is configured (the standard
 * `OTEL_*` variables, decoded with the rest of the configuration and passed here by the composition
 * root). While off nothing is registered and the decorators of this folder are not installed, so an
 * untraced process does no tracing work at all.
 */


export type TracingSettings = {
  /** Where spans are sent (the full `…/v1/traces` URL); undefined = tracing off. */
  readonly url: string | undefined
  readonly protocol: OtlpProtocol
  readonly serviceName: string
  readonly serviceVersion: string
  readonly sampler: SamplerName
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  readonly samplerRatio: number
  readonly resourceAttributes: Readonly<Record<string, string>>
  /** How long finished spans wait to be sent in a batch, in ms. */
  readonly scheduleDelayMs: number
}

export type Tracing = {
  readonly enabled: boolean
  /** Sends the spans still buffered and unregisters the tracer. */
  readonly shutdown: () => Promise<void>
}

type Active = { readonly tracer: Tracer; readonly contexts: EnterableContextManager }
let active: Active | undefined

/** Whether this process traces; the decorators are installed only when it does. */
export const tracingOn = (): boolean => active !== undefined

/** Registers the tracer of a started tracing (start-tracing.ts), or clears it on its shutdown. */
export const setActiveTracing = (tracer: Tracer | undefined, contexts?: EnterableContextManager): void => {
  active = tracer === undefined || contexts === undefined ? undefined : { tracer, contexts }
}

/** Whether a tracing is started in this process already (one per process; start-tracing.ts). */
export const tracingStarted = (): boolean => active !== undefined

/** The W3C `traceparent` of the span current now, when tracing is on and a span is current. */
export const currentTraceparent = (): string | undefined => {
  if (active === undefined) return undefined
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return carrier['traceparent']
}

/** The context an incoming `traceparent` (and `tracestate`) header describes; the root context without one. */
export const contextFromHeaders = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>): Context => {
  const traceparent = headers['traceparent']
  if (typeof traceparent !== 'string') return ROOT_CONTEXT
  const tracestate = headers['tracestate']
  return propagation.extract(ROOT_CONTEXT, typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent })
}

/** Links to the spans of these `traceparent`s (each once, at most `max`); malformed ones are left out. */
export const linksTo = (traceparents: Iterable<string | undefined>, max = 128): Link[] => {
  const seen = new Set<string>()
  const links: Link[] = []
  for (const tp of traceparents) {
    if (tp === undefined || seen.has(tp) || links.length >= max) continue
    seen.add(tp)
    const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent: tp }))
    if (spanContext !== undefined && trace.isSpanContextValid(spanContext)) links.push({ context: spanContext })
  }
  return links
}

export type SpanOptions = { readonly kind?: SpanKind; readonly attributes?: Attributes; readonly links?: Link[]; readonly root?: boolean; readonly parent?: Context }

/** Starts a span (a child of the current one unless `root` or `parent`); undefined while tracing is off. */
export const startSpan = (name: string, options: SpanOptions = {}): Span | undefined => {
  if (active === undefined) return undefined
  const parent = options.parent ?? context.active()
  return active.tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes === undefined ? {} : { attributes: options.attributes }), ...(options.links === undefined ? {} : { links: options.links }), ...(options.root === true ? { root: true } : {}) },
    parent,
  )
}

/** Makes `span` current for the rest of this execution and the asynchronous work it starts. */
export const enterSpan = (span: Span, parent: Context = ROOT_CONTEXT): void => {
  active?.contexts.enter(trace.setSpan(parent, span))
}

/** Runs `fn` inside a new span, ending it when `fn` settles (an error status when it throws). */
export const inSpan = async <T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> => {
  const span = startSpan(name, options)
  if (span === undefined) return fn(undefined)
  return context.with(trace.setSpan(options.parent ?? context.active(), span), async () => {
    try {
      return await fn(span)
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : 'failed' })
      throw e
    } finally {
      span.end()
    }
  })
}

export { SpanKind, SpanStatusCode, type Span }
