import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decideAcknowledge, evolveBreakState, initialBreakState } from '../../../src/domain/reconciliation/acknowledge.ts'
import type { CheckedItem, ReconciliationBreakDetectedData, ReconciliationRunStartedData } from '../../../src/domain/reconciliation/events/index.ts'
import { decideRun, evolveRunState, initialRunState, type ItemRecord, type RunCommand } from '../../../src/domain/reconciliation/run.ts'
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
