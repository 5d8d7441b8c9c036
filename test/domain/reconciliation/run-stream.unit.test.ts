import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  reconciliationBreakDetected,
  reconciliationBreakResolved,
  reconciliationItemHealed,
  reconciliationItemsChecked,
  reconciliationRunCompleted,
  reconciliationRunStarted,
  reconciliationRunSuperseded,
  type CheckedItem,
  type ReconciliationBreakDetectedData,
  type ReconciliationBreakResolvedData,
  type ReconciliationItemHealedData,
  type ReconciliationRunStartedData,
  type RunEvent,
} from '../../../src/domain/reconciliation/events/index.ts'
import { checkedItems, countItems, daySummaries, decideRun, evolveRunState, initialRunState, isChecked, isOpen, openBreaksOf, type ItemRecord, type Run, type RunState } from '../../../src/domain/reconciliation/run.ts'
import { deciderSpec } from '../support/decider-spec.ts'
import { at, MERCHANT_ID } from '../support/values.ts'

/** The run stream: its state event by event, its counts outcome by outcome, and every refusal whole. */

const given = deciderSpec({ initialState: initialRunState, evolve: evolveRunState, decide: decideRun })

const started: ReconciliationRunStartedData = {
  runId: 'run-1',
  merchantId: MERCHANT_ID,
  scope: { kind: 'days', from: '2026-01-01', to: '2026-01-02' },
  parameters: { concurrency: 16, asOf: at(0), notFoundGraceMs: 3_600_000, stalePendingMs: 86_400_000, chargeGraceMs: 86_400_000 },
  startedBy: { trigger: 'cli', actor: null },
  itemsInScope: 3,
  startedAt: at(0),
}
const ref = (id: string) => ({ kind: 'payment' as const, id, merchantOrderId: id, merchantRefundId: null, merchantSubscribeId: null, stream: `order-${MERCHANT_ID}-${id}` })
const item = (id: string, o: Partial<CheckedItem> = {}): CheckedItem => ({ kind: 'payment', id, day: '2026-01-01', outcome: 'matched', breakClass: null, breakId: null, amount: 10000n, atStake: 0n, ...o })
const detected = (id: string): ReconciliationBreakDetectedData => ({
  runId: 'run-1',
  breakId: `b-${id}`,
  class: 'amount_mismatch',
  status: 'new',
  item: ref(id),
  day: '2026-01-01',
  satangView: {},
  gatewayView: {},
  amountAtStake: 500n,
  detail: 'x',
  firstSeenAt: at(1),
  firstSeenRunId: 'run-1',
  detectedAt: at(1),
  evidence: { traceId: null, observationKey: null },
})
const resolved = (id: string): ReconciliationBreakResolvedData => ({ runId: 'run-1', breakId: `b-${id}`, class: 'amount_mismatch', item: ref(id), resolution: 'consistent', resolvedAt: at(2), evidence: { traceId: 't', observationKey: null } })
const healed = (id: string): ReconciliationItemHealedData => ({ runId: 'run-1', item: ref(id), day: '2026-01-01', from: 'PI', to: 'PS', amount: 10000n, healedAt: at(2), evidence: { traceId: 't', observationKey: 'k' } })
const record = (checked: CheckedItem, o: Partial<ItemRecord> = {}): ItemRecord => ({ checked, detect: null, resolve: [], healed: null, ...o })

const runOf = (events: ReadonlyArray<RunEvent>): Run => {
  const s = events.reduce<RunState>(evolveRunState, initialRunState)
  if (s._tag !== 'Run') throw new Error('no run')
  return s
}

describe('the run state, event by event', () => {
  it('nothing before the run starts, and events before it change nothing', () => {
    expect(evolveRunState(initialRunState, reconciliationRunSuperseded.make({ runId: 'run-1', supersededBy: 'x', reason: 'y', supersededAt: at(1) }))).toEqual(initialRunState)
  })
  it('started: an open run with nothing in it', () => {
    const r = runOf([reconciliationRunStarted.make(started)])
    expect(r).toEqual({ _tag: 'Run', started, batches: [], detected: new Map(), resolved: new Map(), healed: [], completed: null, superseded: null })
    expect(isOpen(r)).toBe(true)
    // Started again: the first start stands.
    expect(runOf([reconciliationRunStarted.make(started), reconciliationRunStarted.make({ ...started, runId: 'other' })]).started).toEqual(started)
  })
  it('batches, breaks detected and resolved, items healed: each kept, none replacing another', () => {
    const r = runOf([
      reconciliationRunStarted.make(started),
      reconciliationItemsChecked.make({ runId: 'run-1', batch: 1, items: [item('A'), item('B')], checkedAt: at(1) }),
      reconciliationItemsChecked.make({ runId: 'run-1', batch: 2, items: [item('C')], checkedAt: at(2) }),
      reconciliationBreakDetected.make(detected('A')),
      reconciliationBreakDetected.make(detected('B')),
      reconciliationBreakResolved.make(resolved('A')),
      reconciliationBreakResolved.make(resolved('C')),
      reconciliationItemHealed.make(healed('A')),
      reconciliationItemHealed.make(healed('B')),
    ])
    expect(checkedItems(r).map((i) => i.id)).toEqual(['A', 'B', 'C'])
    expect([isChecked(r, 'payment:A'), isChecked(r, 'payment:C'), isChecked(r, 'payment:D'), isChecked(r, 'refund:A')]).toEqual([true, true, false, false])
    expect([...r.detected.keys()]).toEqual(['b-A', 'b-B'])
    expect([...r.resolved.keys()]).toEqual(['b-A', 'b-C'])
    expect(r.resolved.get('b-A')).toEqual(resolved('A'))
    expect(r.healed).toEqual([healed('A'), healed('B')])
    expect(openBreaksOf(r)).toEqual([detected('B')])
  })
  it('completed or superseded: closed, with what closed it', () => {
    const base = [reconciliationRunStarted.make(started)]
    const superseded = runOf([...base, reconciliationRunSuperseded.make({ runId: 'run-1', supersededBy: 'run-2', reason: 'dead', supersededAt: at(5) })])
    expect(superseded.superseded).toEqual({ runId: 'run-1', supersededBy: 'run-2', reason: 'dead', supersededAt: at(5) })
    expect(isOpen(superseded)).toBe(false)
    const completed = given(...base).when({ type: 'CompleteRun', days: [], at: at(3) }).state()
    expect(completed._tag === 'Run' && isOpen(completed)).toBe(false)
  })
})

describe('countItems: every outcome counted in its own place', () => {
  it('one item of each outcome', () => {
    const items = [
      item('M'),
      item('H', { outcome: 'healed', amount: 200n }),
      item('P', { outcome: 'pending', amount: 300n }),
      item('U', { outcome: 'unchecked', breakClass: 'query_failed', amount: 400n, atStake: 400n }),
      item('K', { outcome: 'acknowledged', breakClass: 'amount_mismatch', amount: 500n, atStake: 50n }),
      item('B', { outcome: 'break', breakClass: 'amount_mismatch', amount: 600n, atStake: 60n }),
      item('B2', { outcome: 'break', breakClass: 'missing_charge', amount: 700n, atStake: 70n }),
    ]
    expect(countItems(items)).toEqual({
      counts: { checked: 7, matched: 1, healed: 1, pending: 1, unchecked: 1, acknowledged: 1, breaks: 2, byClass: { query_failed: 1, amount_mismatch: 1, missing_charge: 1 } },
      totals: { checked: 12700n, healed: 200n, atStake: 130n, unchecked: 400n },
      verdict: 'incomplete',
    })
  })
  it('a break or an unchecked item without a class counts under no class', () => {
    expect(countItems([item('B', { outcome: 'break' }), item('U', { outcome: 'unchecked' })]).counts.byClass).toEqual({})
  })
  it('no items: reconciled, all zero', () => {
    expect(countItems([])).toEqual({
      counts: { checked: 0, matched: 0, healed: 0, pending: 0, unchecked: 0, acknowledged: 0, breaks: 0, byClass: {} },
      totals: { checked: 0n, healed: 0n, atStake: 0n, unchecked: 0n },
      verdict: 'reconciled',
    })
  })
  it('the verdict: breaks before pending', () => {
    expect(countItems([item('P', { outcome: 'pending' }), item('B', { outcome: 'break', breakClass: 'amount_mismatch' })]).verdict).toBe('breaks')
    expect(countItems([item('P', { outcome: 'pending' })]).verdict).toBe('reconciled_with_pending')
  })
  it('days: each day of the scope, one with no item reconciled; items of other days left out', () => {
    const days = daySummaries([item('A', { day: '2026-01-02', outcome: 'pending' }), item('X', { day: '2025-12-31' })], ['2026-01-01', '2026-01-02'])
    expect(days.map((d) => [d.day, d.verdict, d.counts.checked])).toEqual([
      ['2026-01-01', 'reconciled', 0],
      ['2026-01-02', 'reconciled_with_pending', 1],
    ])
  })
})

describe('decideRun: every refusal whole', () => {
  const start = given().when({ type: 'StartRun', started }).events()
  const superseded = [...start, reconciliationRunSuperseded.make({ runId: 'run-1', supersededBy: 'run-2', reason: 'dead', supersededAt: at(5) })]
  const completed = [...start, ...given(...start).when({ type: 'CompleteRun', days: [], at: at(3) }).events()]

  it('a run started under another id', () => {
    given(...start).when({ type: 'StartRun', started: { ...started, runId: 'run-2' } }).thenRejectsWith({ _tag: 'RunAlreadyStarted', runId: 'run-1' })
  })
  it('no run: items, completion and supersession are refused', () => {
    given().when({ type: 'RecordItems', items: [record(item('A'))], at: at(1) }).thenRejectsWith({ _tag: 'NoSuchRun' })
    given().when({ type: 'CompleteRun', days: [], at: at(1) }).thenRejectsWith({ _tag: 'NoSuchRun' })
    given().when({ type: 'SupersedeRun', by: 'x', reason: 'y', at: at(1) }).thenRejectsWith({ _tag: 'NoSuchRun' })
  })
  it('a closed run takes no items, saying how it closed', () => {
    given(...completed).when({ type: 'RecordItems', items: [record(item('A'))], at: at(4) }).thenRejectsWith({ _tag: 'RunClosed', runId: 'run-1', how: 'completed' })
    given(...superseded).when({ type: 'RecordItems', items: [record(item('A'))], at: at(6) }).thenRejectsWith({ _tag: 'RunClosed', runId: 'run-1', how: 'superseded' })
  })
  it('a superseded run cannot complete; a completed one completes once and is not superseded', () => {
    given(...superseded).when({ type: 'CompleteRun', days: [], at: at(6) }).thenRejectsWith({ _tag: 'RunClosed', runId: 'run-1', how: 'superseded' })
    given(...completed).when({ type: 'CompleteRun', days: [], at: at(6) }).thenNothing()
    given(...completed).when({ type: 'SupersedeRun', by: 'run-2', reason: 'x', at: at(6) }).thenNothing()
  })
  it('supersede: the whole event', () => {
    given(...start)
      .when({ type: 'SupersedeRun', by: 'run-2', reason: 'another scope', at: at(3) })
      .then([reconciliationRunSuperseded.make({ runId: 'run-1', supersededBy: 'run-2', reason: 'another scope', supersededAt: at(3) })])
  })
  it('complete: the whole summary', () => {
    given(...start)
      .when({ type: 'CompleteRun', days: ['2026-01-01'], at: at(3) })
      .then([
        reconciliationRunCompleted.make({
          runId: 'run-1',
          verdict: 'reconciled',
          counts: { checked: 0, matched: 0, healed: 0, pending: 0, unchecked: 0, acknowledged: 0, breaks: 0, byClass: {} },
          totals: { checked: 0n, healed: 0n, atStake: 0n, unchecked: 0n },
          days: [{ day: '2026-01-01', verdict: 'reconciled', counts: { checked: 0, matched: 0, healed: 0, pending: 0, unchecked: 0, acknowledged: 0, breaks: 0, byClass: {} }, totals: { checked: 0n, healed: 0n, atStake: 0n, unchecked: 0n } }],
          completedAt: at(3),
        }),
      ])
  })
  it('a batch: its breaks, resolutions (each once) and heals before its items, in that order, whole', () => {
    const items = [
      record(item('A'), { detect: detected('A'), resolve: [resolved('X'), resolved('Y')], healed: healed('A') }),
      record(item('B'), { resolve: [resolved('X')] }),
      // The same item twice in one batch is one item.
      record(item('A'), { detect: detected('A2') }),
    ]
    given(...start)
      .when({ type: 'RecordItems', items, at: at(1) })
      .then([
        reconciliationBreakDetected.make(detected('A')),
        reconciliationBreakResolved.make(resolved('X')),
        reconciliationBreakResolved.make(resolved('Y')),
        reconciliationItemHealed.make(healed('A')),
        reconciliationItemsChecked.make({ runId: 'run-1', batch: 1, items: [item('A'), item('B')], checkedAt: at(1) }),
      ])
  })
  it('a break resolved or detected in an earlier batch is not recorded again', () => {
    const first = given(...start)
      .when({ type: 'RecordItems', items: [record(item('A'), { detect: detected('Z'), resolve: [resolved('X')] })], at: at(1) })
      .events()
    const second = given(...start, ...first).when({ type: 'RecordItems', items: [record(item('B'), { detect: detected('Z'), resolve: [resolved('X')] })], at: at(2) })
    second.then([reconciliationItemsChecked.make({ runId: 'run-1', batch: 2, items: [item('B')], checkedAt: at(2) })])
    expect(E.isRight(second.result)).toBe(true)
  })
})
