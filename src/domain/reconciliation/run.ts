import * as E from 'fp-ts/lib/Either.js'
import {
  itemKeyOf,
  reconciliationItemsChecked,
  reconciliationRunCompleted,
  reconciliationRunStarted,
  reconciliationRunSuperseded,
  type CheckedItem,
  type DaySummary,
  type OutcomeCounts,
  type OutcomeTotals,
  type ReconciliationBreakDetectedData,
  type ReconciliationBreakResolvedData,
  type ReconciliationItemHealedData,
  type ReconciliationRunCompletedData,
  type ReconciliationRunStartedData,
  type ReconciliationRunSupersededData,
  type RunEvent,
} from './events/index.ts'
import { reconciliationBreakDetected } from './events/reconciliation-break-detected.ts'
import { reconciliationBreakResolved } from './events/reconciliation-break-resolved.ts'
import { reconciliationItemHealed } from './events/reconciliation-item-healed.ts'
import { verdictOf, type Verdict } from './verdict.ts'

/*
 * The run aggregate: one stream per run. Its state is what the stream holds: the items checked (in
 * batches), the breaks detected and resolved, the items healed, and how it ended. A run killed
 * half-way is resumed from this state: an item already in a batch is never checked or counted again.
 */

type Batch = { readonly items: ReadonlyArray<CheckedItem>; readonly keys: ReadonlySet<string> }

export type Run = {
  readonly _tag: 'Run'
  readonly started: ReconciliationRunStartedData
  /** Kept per batch, so that evolving a batch copies nothing of the ones before. */
  readonly batches: ReadonlyArray<Batch>
  readonly detected: ReadonlyMap<string, ReconciliationBreakDetectedData>
  readonly resolved: ReadonlyMap<string, ReconciliationBreakResolvedData>
  readonly healed: ReadonlyArray<ReconciliationItemHealedData>
  readonly completed: ReconciliationRunCompletedData | null
  readonly superseded: ReconciliationRunSupersededData | null
}

export type RunState = { readonly _tag: 'NoRun' } | Run

export const initialRunState: RunState = { _tag: 'NoRun' }

/**
 * The keys of every batch of a run's `batches`, made once per list and carried to the list that adds
 * one batch to it (see `evolveRun`), so that asking whether an item is checked costs one lookup, not
 * one per batch. A list that lost its set to a longer one (another state evolved from it) makes its
 * own again when asked: every state answers for its own batches only.
 */
const checkedKeys = new WeakMap<ReadonlyArray<Batch>, Set<string>>()

const keysOf = (batches: ReadonlyArray<Batch>): ReadonlySet<string> => {
  let keys = checkedKeys.get(batches)
  // Stryker disable next-line ConditionalExpression: a set made afresh each time answers the same (the cache only saves time)
  if (keys === undefined) {
    keys = new Set()
    for (const b of batches) for (const k of b.keys) keys.add(k)
    // Stryker disable next-line CallExpression: a set not kept is only made again at the next question
    checkedKeys.set(batches, keys)
  }
  return keys
}

/** `batches` with `batch` after them; the keys set of `batches`, if made, moves to the new list. */
const withBatch = (batches: ReadonlyArray<Batch>, batch: Batch): ReadonlyArray<Batch> => {
  const next = [...batches, batch]
  const keys = checkedKeys.get(batches)
  // Stryker disable next-line ConditionalExpression,BlockStatement: a set not carried over is made by the longer list when it is asked
  if (keys !== undefined) {
    checkedKeys.delete(batches)
    for (const k of batch.keys) keys.add(k)
    // Stryker disable next-line CallExpression: likewise, the longer list then makes its own set
    checkedKeys.set(next, keys)
  }
  return next
}

export const isChecked = (r: Run, key: string): boolean => keysOf(r.batches).has(key)

export const checkedItems = (r: Run): ReadonlyArray<CheckedItem> => r.batches.flatMap((b) => b.items)

export const isOpen = (r: Run): boolean => r.completed === null && r.superseded === null

const withEntry = <V>(m: ReadonlyMap<string, V>, k: string, v: V): ReadonlyMap<string, V> => new Map([...m, [k, v]])

const evolveRun = (r: Run, e: RunEvent): Run => {
  switch (e.type) {
    case 'ReconciliationRunStarted':
      return r
    case 'ReconciliationItemsChecked':
      return { ...r, batches: withBatch(r.batches, { items: e.data.items, keys: new Set(e.data.items.map(itemKeyOf)) }) }
    case 'ReconciliationBreakDetected':
      return { ...r, detected: withEntry(r.detected, e.data.breakId, e.data) }
    case 'ReconciliationBreakResolved':
      return { ...r, resolved: withEntry(r.resolved, e.data.breakId, e.data) }
    case 'ReconciliationItemHealed':
      return { ...r, healed: [...r.healed, e.data] }
    case 'ReconciliationRunCompleted':
      return { ...r, completed: e.data }
    case 'ReconciliationRunSuperseded':
      return { ...r, superseded: e.data }
  }
}

/** The state after `e`; total. */
export const evolveRunState = (s: RunState, e: RunEvent): RunState => {
  if (s._tag === 'Run') return evolveRun(s, e)
  if (e.type !== 'ReconciliationRunStarted') return s
  return { _tag: 'Run', started: e.data, batches: [], detected: new Map(), resolved: new Map(), healed: [], completed: null, superseded: null }
}

// ---- counting ----

const emptyCounts = (): { counts: OutcomeCounts; totals: OutcomeTotals } => ({
  counts: { checked: 0, matched: 0, healed: 0, pending: 0, unchecked: 0, acknowledged: 0, breaks: 0, byClass: {} },
  totals: { checked: 0n, healed: 0n, atStake: 0n, unchecked: 0n },
})

/** Counts and totals of checked items. `breaks` counts open breaks (new or persisting); `byClass` every break class seen, unchecked ones as `query_failed`. */
export const countItems = (items: ReadonlyArray<CheckedItem>): { readonly counts: OutcomeCounts; readonly totals: OutcomeTotals; readonly verdict: Verdict } => {
  const { counts: c, totals: t } = emptyCounts()
  const byClass: Record<string, number> = {}
  let checked = 0
  let matched = 0
  let healed = 0
  let pending = 0
  let unchecked = 0
  let acknowledged = 0
  let breaks = 0
  let checkedSum = t.checked
  let healedSum = t.healed
  let atStake = t.atStake
  let uncheckedSum = t.unchecked
  for (const i of items) {
    checked += 1
    checkedSum += i.amount
    if (i.breakClass !== null && (i.outcome === 'break' || i.outcome === 'unchecked')) byClass[i.breakClass] = (byClass[i.breakClass] ?? 0) + 1
    switch (i.outcome) {
      case 'matched':
        matched += 1
        break
      case 'healed':
        healed += 1
        healedSum += i.amount
        break
      case 'pending':
        pending += 1
        break
      case 'unchecked':
        unchecked += 1
        uncheckedSum += i.amount
        break
      case 'acknowledged':
        acknowledged += 1
        break
      case 'break':
        breaks += 1
        atStake += i.atStake
        break
    }
  }
  const counts: OutcomeCounts = { ...c, checked, matched, healed, pending, unchecked, acknowledged, breaks, byClass }
  return { counts, totals: { checked: checkedSum, healed: healedSum, atStake, unchecked: uncheckedSum }, verdict: verdictOf({ unchecked, breaks, pending }) }
}

/** The summary of each day in `from..to` (Bangkok dates as yyyy-MM-dd; a day with no item is reconciled). */
export const daySummaries = (items: ReadonlyArray<CheckedItem>, days: ReadonlyArray<string>): ReadonlyArray<DaySummary> => {
  const byDay = new Map<string, CheckedItem[]>(days.map((d) => [d, []]))
  for (const i of items) byDay.get(i.day)?.push(i)
  return days.map((day) => {
    const { counts, totals, verdict } = countItems(byDay.get(day) ?? [])
    return { day, verdict, counts, totals }
  })
}

// ---- commands ----

export type StartRun = { readonly type: 'StartRun'; readonly started: ReconciliationRunStartedData }

/** One checked item with what the run records with it. */
export type ItemRecord = {
  readonly checked: CheckedItem
  readonly detect: ReconciliationBreakDetectedData | null
  readonly resolve: ReadonlyArray<ReconciliationBreakResolvedData>
  readonly healed: ReconciliationItemHealedData | null
}

export type RecordItems = { readonly type: 'RecordItems'; readonly items: ReadonlyArray<ItemRecord>; readonly at: Date }

/** `days`: the business days of the scope (the caller enumerates them from the scope's dates). */
export type CompleteRun = { readonly type: 'CompleteRun'; readonly days: ReadonlyArray<string>; readonly at: Date }

export type SupersedeRun = { readonly type: 'SupersedeRun'; readonly by: string; readonly reason: string; readonly at: Date }

export type RunCommand = StartRun | RecordItems | CompleteRun | SupersedeRun

export type RunRejection =
  | { readonly _tag: 'RunAlreadyStarted'; readonly runId: string }
  | { readonly _tag: 'NoSuchRun' }
  | { readonly _tag: 'RunClosed'; readonly runId: string; readonly how: 'completed' | 'superseded' }

type Decision = E.Either<RunRejection, ReadonlyArray<RunEvent>>

const closed = (r: Run): RunRejection | null =>
  r.completed !== null ? { _tag: 'RunClosed', runId: r.started.runId, how: 'completed' } : r.superseded !== null ? { _tag: 'RunClosed', runId: r.started.runId, how: 'superseded' } : null

const recordItems = (c: RecordItems, r: Run): Decision => {
  const shut = closed(r)
  if (shut !== null) return E.left(shut)
  const fresh: ItemRecord[] = []
  const keys = new Set<string>()
  for (const i of c.items) {
    const key = itemKeyOf(i.checked)
    if (isChecked(r, key) || keys.has(key)) continue
    keys.add(key)
    fresh.push(i)
  }
  if (fresh.length === 0) return E.right([])
  const detected = fresh.flatMap((i) => (i.detect === null || r.detected.has(i.detect.breakId) ? [] : [reconciliationBreakDetected.make(i.detect)]))
  const resolvedIds = new Set<string>()
  const resolved = fresh.flatMap((i) =>
    i.resolve.flatMap((x) => {
      if (r.resolved.has(x.breakId) || resolvedIds.has(x.breakId)) return []
      resolvedIds.add(x.breakId)
      return [reconciliationBreakResolved.make(x)]
    }),
  )
  const healed = fresh.flatMap((i) => (i.healed === null ? [] : [reconciliationItemHealed.make(i.healed)]))
  const batch = reconciliationItemsChecked.make({ runId: r.started.runId, batch: r.batches.length + 1, items: fresh.map((i) => i.checked), checkedAt: c.at })
  return E.right([...detected, ...resolved, ...healed, batch])
}

/** What a run stream holds about the run, as its completion records it. */
export const summarizeRun = (r: Run, days: ReadonlyArray<string>, at: Date): ReconciliationRunCompletedData => {
  const items = checkedItems(r)
  const { counts, totals, verdict } = countItems(items)
  return { runId: r.started.runId, verdict, counts, totals, days: [...daySummaries(items, days)], completedAt: at }
}

/** What a command means for a run stream: the events to append, or why it is refused. Pure. */
export const decideRun = (c: RunCommand, s: RunState): Decision => {
  switch (c.type) {
    case 'StartRun':
      if (s._tag === 'NoRun') return E.right([reconciliationRunStarted.make(c.started)])
      return s.started.runId === c.started.runId ? E.right([]) : E.left({ _tag: 'RunAlreadyStarted', runId: s.started.runId })
    case 'RecordItems':
      return s._tag === 'Run' ? recordItems(c, s) : E.left({ _tag: 'NoSuchRun' })
    case 'CompleteRun':
      if (s._tag === 'NoRun') return E.left({ _tag: 'NoSuchRun' })
      if (s.completed !== null) return E.right([])
      if (s.superseded !== null) return E.left({ _tag: 'RunClosed', runId: s.started.runId, how: 'superseded' })
      return E.right([reconciliationRunCompleted.make(summarizeRun(s, c.days, c.at))])
    case 'SupersedeRun':
      if (s._tag === 'NoRun') return E.left({ _tag: 'NoSuchRun' })
      if (!isOpen(s)) return E.right([])
      return E.right([reconciliationRunSuperseded.make({ runId: s.started.runId, supersededBy: c.by, reason: c.reason, supersededAt: c.at })])
  }
}

/** Breaks a run still counts as open at its end: detected by it and not resolved later in it. */
export const openBreaksOf = (r: Run): ReadonlyArray<ReconciliationBreakDetectedData> => [...r.detected.values()].filter((d) => !r.resolved.has(d.breakId))

