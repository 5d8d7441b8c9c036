import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decideAcknowledge, evolveBreakState, initialBreakState } from '../../../src/domain/reconciliation/acknowledge.ts'
import type { CheckedItem, ReconciliationBreakDetectedData, ReconciliationRunStartedData, RunEvent } from '../../../src/domain/reconciliation/events/index.ts'
import { decideRun, evolveRunState, initialRunState, isChecked, type ItemRecord, type Run, type RunCommand, type RunState } from '../../../src/domain/reconciliation/run.ts'
import { deciderSpec } from '../support/decider-spec.ts'
import { at, MERCHANT_ID } from '../support/values.ts'

const given = deciderSpec({ initialState: initialRunState, evolve: evolveRunState, decide: decideRun })
const acknowledging = deciderSpec({ initialState: initialBreakState, evolve: evolveBreakState, decide: decideAcknowledge })

const started: ReconciliationRunStartedData = {
  runId: 'run-1',
  merchantId: MERCHANT_ID,
  scope: { kind: 'days', from: '2026-01-01', to: '2026-01-01' },
  parameters: { concurrency: 16, asOf: at(0), notFoundGraceMs: 3_600_000, stalePendingMs: 86_400_000, chargeGraceMs: 86_400_000 },
  startedBy: { trigger: 'cli', actor: null },
  itemsInScope: 3,
  startedAt: at(0),
}
const start: RunCommand = { type: 'StartRun', started }

const item = (id: string, o: Partial<CheckedItem> = {}): CheckedItem => ({ kind: 'payment', id, day: '2026-01-01', outcome: 'matched', breakClass: null, breakId: null, amount: 10000n, atStake: 0n, ...o })
const detected = (id: string): ReconciliationBreakDetectedData => ({
  runId: 'run-1',
  breakId: `b-${id}`,
  class: 'amount_mismatch',
  status: 'new',
  item: { kind: 'payment', id, merchantOrderId: id, merchantRefundId: null, merchantSubscribeId: null, stream: `order-${MERCHANT_ID}-${id}` },
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
const record = (checked: CheckedItem, detect: ReconciliationBreakDetectedData | null = null): ItemRecord => ({ checked, detect, resolve: [], healed: null })

describe('the run stream', () => {
  const started1 = given().when(start).events()
  it('given nothing, when started, then RunStarted; starting the same run again records nothing', () => {
    expect(started1.map((e) => e.type)).toEqual(['ReconciliationRunStarted'])
    given(...started1).when(start).thenNothing()
    given(...started1).when({ type: 'StartRun', started: { ...started, runId: 'run-2' } }).thenRejects('RunAlreadyStarted')
  })
  it('a batch records its breaks with its items atomically, numbered', () => {
    given(...started1)
      .when({ type: 'RecordItems', items: [record(item('A')), record(item('B', { outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b-B', atStake: 500n }), detected('B'))], at: at(1) })
      .thenTypes('ReconciliationBreakDetected', 'ReconciliationItemsChecked')
  })
  it('a resumed run never records an item (or its break) twice', () => {
    const first = given(...started1).when({ type: 'RecordItems', items: [record(item('B', { outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b-B' }), detected('B'))], at: at(1) }).events()
    given(...started1, ...first).when({ type: 'RecordItems', items: [record(item('B', { outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b-B' }), detected('B'))], at: at(2) }).thenNothing()
    const second = given(...started1, ...first).when({ type: 'RecordItems', items: [record(item('B')), record(item('C'))], at: at(2) }).events()
    expect(second).toHaveLength(1)
    expect(second[0]).toMatchObject({ type: 'ReconciliationItemsChecked', data: { batch: 2, items: [{ id: 'C' }] } })
  })
  it('completion counts what the stream holds, with the verdict of the run and of each day', () => {
    const batch = given(...started1)
      .when({
        type: 'RecordItems',
        items: [
          record(item('A')),
          record(item('B', { outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b-B', atStake: 500n }), detected('B')),
          record(item('C', { outcome: 'pending', day: '2025-12-31' })),
        ],
        at: at(1),
      })
      .events()
    const [completed] = given(...started1, ...batch).when({ type: 'CompleteRun', days: ['2026-01-01'], at: at(2) }).events()
    expect(completed).toMatchObject({
      type: 'ReconciliationRunCompleted',
      data: {
        verdict: 'breaks',
        counts: { checked: 3, matched: 1, pending: 1, breaks: 1, unchecked: 0, byClass: { amount_mismatch: 1 } },
        totals: { checked: 30000n, atStake: 500n },
        days: [{ day: '2026-01-01', verdict: 'breaks', counts: { checked: 2 } }],
      },
    })
  })
  it('a completed run takes no more items; a dead run is superseded once', () => {
    const done = given(...started1).when({ type: 'CompleteRun', days: [], at: at(2) }).events()
    given(...started1, ...done).when({ type: 'RecordItems', items: [record(item('A'))], at: at(3) }).thenRejects('RunClosed')
    const superseded = given(...started1).when({ type: 'SupersedeRun', by: 'run-2', reason: 'another scope', at: at(3) }).events()
    expect(superseded.map((e) => e.type)).toEqual(['ReconciliationRunSuperseded'])
    given(...started1, ...superseded).when({ type: 'SupersedeRun', by: 'run-3', reason: 'x', at: at(4) }).thenNothing()
  })
})

describe('acknowledging a break', () => {
  const ack = { type: 'AcknowledgeBreak', breakId: 'b-1', current: { class: 'amount_mismatch', status: 'new' }, actor: 'finance@ops', reason: 'gateway fee, agreed with the bank', at: at(5) } as const
  it('records the actor and the reason once', () => {
    const events = acknowledging().when(ack).events()
    expect(events).toEqual([{ type: 'ReconciliationBreakAcknowledged', data: { breakId: 'b-1', class: 'amount_mismatch', actor: 'finance@ops', reason: 'gateway fee, agreed with the bank', acknowledgedAt: at(5) } }])
    acknowledging(...events).when({ ...ack, reason: 'again' }).thenNothing()
  })
  it('refuses an unknown break, a resolved one and an empty reason', () => {
    acknowledging().when({ ...ack, current: null }).thenRejects('NoSuchBreak')
    acknowledging().when({ ...ack, current: { class: 'amount_mismatch', status: 'resolved' } }).thenRejects('BreakResolved')
    expect(E.isLeft(decideAcknowledge({ ...ack, reason: '  ' }, initialBreakState))).toBe(true)
  })
})

describe('which items a run has checked (isChecked)', () => {
  const startedEvents = given().when(start).events()
  const fold = (s: RunState, events: ReadonlyArray<RunEvent>): RunState => events.reduce(evolveRunState, s)
  const asRun = (s: RunState): Run => {
    if (s._tag !== 'Run') throw new Error('no run')
    return s
  }
  const batchOf = (s: RunState, ids: ReadonlyArray<string>, n: number): RunState => {
    const decided = decideRun({ type: 'RecordItems', items: ids.map((id) => record(item(id))), at: at(n) }, s)
    if (E.isLeft(decided)) throw new Error(decided.left._tag)
    return fold(s, decided.right)
  }
  const base = fold(initialRunState, startedEvents)

  it('knows the items of every batch, first and last, and no other', () => {
    const r = asRun(batchOf(batchOf(batchOf(base, ['A', 'B'], 1), ['C'], 2), ['D'], 3))
    expect(['A', 'B', 'C', 'D'].map((id) => isChecked(r, `payment:${id}`))).toEqual([true, true, true, true])
    expect(isChecked(r, 'payment:E')).toBe(false)
    expect(isChecked(r, 'refund:A')).toBe(false)
    expect(isChecked(asRun(base), 'payment:A')).toBe(false)
  })

  it('a state asked before a later batch still answers for its own batches only, and the later state for all of its own', () => {
    const one = asRun(batchOf(base, ['A'], 1))
    expect(isChecked(one, 'payment:A')).toBe(true)
    const two = asRun(batchOf(one, ['B'], 2))
    expect(isChecked(two, 'payment:A')).toBe(true)
    expect(isChecked(two, 'payment:B')).toBe(true)
    expect(isChecked(one, 'payment:B')).toBe(false)
    expect(isChecked(one, 'payment:A')).toBe(true)
    const three = asRun(batchOf(two, ['C'], 3))
    expect([isChecked(three, 'payment:A'), isChecked(three, 'payment:B'), isChecked(three, 'payment:C')]).toEqual([true, true, true])
    expect(isChecked(two, 'payment:C')).toBe(false)
  })

  it('two states evolved from one state each know their own batch only', () => {
    const parent = asRun(batchOf(base, ['A'], 1))
    expect(isChecked(parent, 'payment:A')).toBe(true)
    const left = asRun(batchOf(parent, ['L'], 2))
    const right = asRun(batchOf(parent, ['R'], 2))
    expect([isChecked(left, 'payment:L'), isChecked(left, 'payment:R'), isChecked(left, 'payment:A')]).toEqual([true, false, true])
    expect([isChecked(right, 'payment:R'), isChecked(right, 'payment:L'), isChecked(right, 'payment:A')]).toEqual([true, false, true])
    expect([isChecked(parent, 'payment:L'), isChecked(parent, 'payment:R')]).toEqual([false, false])
  })

  it('an item of an earlier batch is not recorded again, however many batches came between', () => {
    let s = base
    for (let n = 1; n <= 5; n++) s = batchOf(s, [`I${String(n)}`], n)
    const again = decideRun({ type: 'RecordItems', items: [record(item('I1')), record(item('I5')), record(item('I6'))], at: at(9) }, s)
    expect(E.isRight(again) && again.right.flatMap((e) => (e.type === 'ReconciliationItemsChecked' ? e.data.items.map((i) => i.id) : []))).toEqual(['I6'])
  })
})
