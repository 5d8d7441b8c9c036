import type * as t from 'io-ts'
import { oneOf } from '../gateway/text-codecs.ts'
import type { BreakClass, ItemOutcome } from './break-class.ts'
import { breakClassOf, type Comparison } from './comparison.ts'

/**
 * A break's lifecycle: `new` the first run it appears in, `persisting` while later runs still see it,
 * `resolved` when a later run finds the item consistent (automatically, with the evidence), or
 * `acknowledged` when a person closes it with a reason.
 */
export const BREAK_STATUSES = ['new', 'persisting', 'resolved', 'acknowledged'] as const
export const BreakStatus = oneOf('BreakStatus', BREAK_STATUSES)
export type BreakStatus = t.TypeOf<typeof BreakStatus>

/** A break not resolved yet, as the read model keeps it. */
export type KnownBreak = {
  readonly breakId: string
  readonly class: BreakClass
  readonly status: 'new' | 'persisting' | 'acknowledged'
  readonly firstSeenAt: Date
  readonly firstSeenRunId: string
}

export type Detection = { readonly breakId: string; readonly class: BreakClass; readonly status: 'new' | 'persisting'; readonly firstSeenAt: Date; readonly firstSeenRunId: string }
export type Resolving = { readonly breakId: string; readonly class: BreakClass; readonly resolution: 'consistent' | 'healed' | 'reclassified' }

/**
 * What a run records for one item: its outcome, the break the outcome refers to (detected now, or the
 * acknowledged one still seen), the break it detects (if any) and the breaks it resolves.
 */
export type LifecycleStep = {
  readonly outcome: ItemOutcome
  readonly breakId: string | null
  readonly detect: Detection | null
  readonly resolve: ReadonlyArray<Resolving>
}

/**
 * The lifecycle step of one item, given its verdict and the breaks of the item not resolved yet. Pure.
 * - consistent (matched, pending, healed): every known break of the item is resolved;
 * - unchecked: a `query_failed` break (new or persisting); the other breaks stay as they are, since
 *   nothing is known about them;
 * - a break: the known break of the same class persists (or stays acknowledged), a new one is opened
 *   otherwise, and known breaks of other classes are resolved as reclassified.
 */
export const lifecycleStep = (
  c: Comparison,
  known: ReadonlyArray<KnownBreak>,
  run: { readonly runId: string; readonly at: Date; readonly newBreakId: (cls: BreakClass) => string },
): LifecycleStep => {
  const cls = breakClassOf(c)
  if (cls === null) {
    const outcome: ItemOutcome = c._tag === 'Heal' ? 'healed' : c._tag === 'Pending' ? 'pending' : 'matched'
    return { outcome, breakId: null, detect: null, resolve: known.map((b) => ({ breakId: b.breakId, class: b.class, resolution: c._tag === 'Heal' ? 'healed' : 'consistent' })) }
  }
  const same = known.find((b) => b.class === cls)
  const others = cls === 'query_failed' ? [] : known.filter((b) => b.class !== cls).map((b): Resolving => ({ breakId: b.breakId, class: b.class, resolution: 'reclassified' }))
  // An acknowledged break stays closed while the item shows it; an item that could not be checked is
  // unchecked all the same (an acknowledgement never stands in for a check).
  if (same?.status === 'acknowledged') return { outcome: cls === 'query_failed' ? 'unchecked' : 'acknowledged', breakId: same.breakId, detect: null, resolve: others }
  const detect: Detection =
    same === undefined
      ? { breakId: run.newBreakId(cls), class: cls, status: 'new', firstSeenAt: run.at, firstSeenRunId: run.runId }
      : { breakId: same.breakId, class: cls, status: 'persisting', firstSeenAt: same.firstSeenAt, firstSeenRunId: same.firstSeenRunId }
  return { outcome: cls === 'query_failed' ? 'unchecked' : 'break', breakId: detect.breakId, detect, resolve: others }
}
