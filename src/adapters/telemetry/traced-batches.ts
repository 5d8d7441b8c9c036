import type { BatchItem } from '../../projections/projector.ts'
import { inSpan, linksTo, tracingOn } from './tracing.ts'

const traceparentOf = (item: BatchItem): string | undefined => {
  if (!item.ok) return undefined
  const tp = item.event.metadata['traceparent']
  return typeof tp === 'string' ? tp : undefined
}

/**
 * The projector's `aroundBatch` while tracing is on: each projection's batch a span of its own (a new
 * trace: one batch applies the events of many requests) linked to the span of each request whose
 * events it applies. Undefined while tracing is off (the projector then calls nothing around a batch).
 */
export const tracedProjectorBatch = (): (<T>(projection: string, items: ReadonlyArray<BatchItem>, apply: () => Promise<T>) => Promise<T>) | undefined =>
  tracingOn()
    ? (projection, items, apply) =>
        inSpan(`project ${projection}`, { root: true, links: linksTo(items.map(traceparentOf)), attributes: { 'satang.projection': projection, 'satang.event.count': items.length } }, () => apply())
    : undefined
