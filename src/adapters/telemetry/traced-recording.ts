import type { Recording } from '../../application/index.ts'
import { inSpan, SpanStatusCode, tracingOn } from './tracing.ts'

/** The use cases traced, by group: each call is a span `usecase <group>.<name>` (the resolver's background work is not). */
const GROUPS = ['payments', 'refunds', 'subscriptions', 'callbacks'] as const

const tagOf = (r: unknown): string | undefined => (typeof r === 'object' && r !== null && '_tag' in r && typeof r._tag === 'string' ? r._tag : undefined)

const traced = <F extends (...args: never[]) => unknown>(name: string, fn: F): F =>
  ((...args: Parameters<F>) =>
    inSpan(`usecase ${name}`, { attributes: { 'satang.usecase': name } }, async (span) => {
      const result = await fn(...args)
      const tag = tagOf(result)
      if (tag !== undefined) span?.setAttribute('satang.usecase.result', tag)
      if (tag === 'Unavailable' || tag === 'GatewayUnavailable') span?.setStatus({ code: SpanStatusCode.ERROR, message: tag })
      return result
    })) as F

/** The recording use cases, each call a span of its own while tracing is on (unchanged while it is off). */
export const tracedRecording = (recording: Recording): Recording => {
  if (!tracingOn()) return recording
  const out: Record<string, unknown> = { ...recording, audit: traced('audit', recording.audit) }
  for (const group of GROUPS) {
    const members: Record<string, unknown> = { ...recording[group] }
    for (const [name, fn] of Object.entries(members)) if (typeof fn === 'function') members[name] = traced(`${group}.${name}`, fn as (...args: never[]) => unknown)
    out[group] = members
  }
  return out as Recording
}
