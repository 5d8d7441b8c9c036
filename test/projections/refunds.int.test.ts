import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callbackRejected } from '../../src/domain/events/common/callback-rejected.ts'
import { eventDefinitions } from '../../src/domain/events/registry.ts'
import { classifyRefundStatus, DEFAULT_REFUND_STATUS_TABLE, extendStatusTable, type StatusTable } from '../../src/domain/gateway/statuses.ts'
import { decide, evolve, fold, initialRefundState, recordedAmountOf, refundStreamName, type ObserveRefundByQuery, type ReceiveRefundNotification, type RefundCommand, type RefundEvent, type RefundState } from '../../src/domain/refund/index.ts'
import { encodeRefundView } from '../../src/projections/refunds/state.ts'
import { foldRefundView, refundRowOf, refundsProjection } from '../../src/projections/refunds/projection.ts'
import type { ProjectedEvent } from '../../src/projections/types.ts'
import { ORDER_ID } from '../domain/order/builders.ts'
import { aPaidOrder, aRefundNotification, aRefundRecord, refundNotified, refundQueried } from '../domain/refund/builders.ts'
import { at, MERCHANT_ID, sat } from '../domain/support/values.ts'
import { applyInTransaction, bangkok, canonicalRows, makeEventFactory, projectionSchemas } from './support.ts'

const extended = extendStatusTable(DEFAULT_REFUND_STATUS_TABLE, {
  RP: { meaning: 'refund processing', outcome: 'pending' },
  RF: { meaning: 'refund failed', outcome: 'failed' },
})
const STATUS_TABLE: StatusTable = E.isRight(extended) ? extended.right : DEFAULT_REFUND_STATUS_TABLE


/** The row the table must hold for one refund stream: the row of the fold of its events, plus the generated and internal columns. */
const expectedRow = (stream: string, events: ReadonlyArray<ProjectedEvent>): Record<string, unknown> | null => {
  const view = foldRefundView(events)
  if (view === null) return null
  const row = refundRowOf(stream, view)
  return {
    ...row,
    tracked_at_bangkok: bangkok(row.tracked_at),
    completed_at_bangkok: bangkok(row.completed_at),
    recorded_at_bangkok: bangkok(row.recorded_at),
    projection_state: JSON.parse(JSON.stringify(encodeRefundView(view))) as unknown,
  }
}

const withoutKeys = (s: RefundState): RefundState => (s._tag === 'Refund' ? { ...s, observationKeys: new Set() } : s)

// ---- building refund streams with the domain's decide ----

/** Decides `commands` in order on one refund's state; refused commands decide nothing. */
const decideAll = (commands: ReadonlyArray<RefundCommand>, start: ReadonlyArray<RefundEvent> = []): Array<RefundEvent> => {
  const events = [...start]
  for (const c of commands) {
    const decided = decide(c, events.reduce(evolve, initialRefundState))
    if (E.isRight(decided)) events.push(...decided.right)
  }
  return events
}

const track = (merchantRefundId: string, minute = 10): RefundCommand => ({ type: 'TrackRefund', merchantId: MERCHANT_ID, merchantRefundId, merchantOrderId: ORDER_ID, trackedAt: at(minute) })

const notifiedWith = (merchantRefundId: string, status: string, o: { readonly minute?: number; readonly amount?: string; readonly refundOrderId?: string; readonly refundedByOthers?: bigint } = {}): ReceiveRefundNotification => ({
  ...refundNotified(
    aRefundNotification({ merchant_refund_id: merchantRefundId, refund_status: status, refund_amount: o.amount ?? '40.00', ...(o.refundOrderId === undefined ? {} : { refund_order_id: o.refundOrderId }) }),
    { at: at(o.minute ?? 20), order: aPaidOrder({ refundedByOthers: o.refundedByOthers ?? 0n }) },
  ),
  statusTable: STATUS_TABLE,
})

const queriedWith = (merchantRefundId: string, status: string, o: { readonly minute?: number; readonly amount?: string; readonly refundOrderId?: string; readonly refundedByOthers?: bigint } = {}): ObserveRefundByQuery => ({
  ...refundQueried(
    aRefundRecord({ merchant_refund_id: merchantRefundId, refund_status: status, refund_amount: o.amount ?? '40.00', ...(o.refundOrderId === undefined ? {} : { refund_order_id: o.refundOrderId }) }),
    { at: at(o.minute ?? 21), order: aPaidOrder({ refundedByOthers: o.refundedByOthers ?? 0n }) },
  ),
  statusTable: STATUS_TABLE,
})

describe('the refunds projection (real PostgreSQL)', () => {
  const schemas = projectionSchemas(refundsProjection)
  let pool: Pool
  const freshSchema = schemas.fresh

  beforeAll(() => {
    pool = schemas.pool()
  })
  afterAll(() => schemas.drop())

  it('a refund observed late, twice and out of order: the final status never regresses, the amount is recorded once', async () => {
    const schema = await freshSchema('refunds')
    const refundId = 'REFUND-LATE'
    const stream = refundStreamName(MERCHANT_ID, refundId)
    const decided = decideAll([
      track(refundId),
      queriedWith(refundId, 'RP', { minute: 15 }),
      notifiedWith(refundId, 'RS', { minute: 20 }),
      // The same notification delivered again, and a late query still saying RP: nothing new to record.
      notifiedWith(refundId, 'RS', { minute: 22 }),
      queriedWith(refundId, 'RP', { minute: 23 }),
      // A query confirming RS is recorded (another source), but changes nothing.
      queriedWith(refundId, 'RS', { minute: 30 }),
    ])
    expect(decided.map((e) => e.type)).toEqual([
      'RefundTracked',
      'RefundStatusObserved',
      'NotificationReceived',
      'RefundStatusObserved',
      'RefundRecorded',
      'RefundStatusObserved',
    ])
    // Late copies that reached the log anyway (an older observation appended after the final one): the fold ignores them.
    const late: ReadonlyArray<RefundEvent> = [
      eventDefinitions.RefundStatusObserved.make({
        merchantId: MERCHANT_ID,
        merchantRefundId: refundId,
        merchantOrderId: ORDER_ID,
        gatewayOrderId: '202601010000000001',
        refundOrderId: '202601020000000001',
        statusCode: 'RP',
        classification: classifyRefundStatus(STATUS_TABLE, 'RP'),
        amount: sat(4000n),
        currency: 'THB',
        completeTime: null,
        source: 'notification',
        observedAt: at(12),
        observationKey: 'late-rp',
        traceId: null,
      }),
      eventDefinitions.RefundRecorded.make({
        merchantId: MERCHANT_ID,
        merchantRefundId: refundId,
        merchantOrderId: ORDER_ID,
        refundOrderId: '202601020000000001',
        amount: sat(9999n),
        currency: 'THB',
        completeTime: null,
        source: 'query',
        observedAt: at(40),
        observationKey: 'late-recorded',
      }),
    ]
    const make = makeEventFactory()
    const events = [...decided, ...late].map((e) => make(stream, e))
    await applyInTransaction(pool, schema, refundsProjection, events)

    const [row] = await canonicalRows(pool, schema, 'refunds', 'stream_name')
    expect(row).toMatchObject({
      stream_name: stream,
      merchant_id: MERCHANT_ID,
      merchant_refund_id: refundId,
      merchant_order_id: ORDER_ID,
      refund_order_id: '202601020000000001',
      status_code: 'RS',
      status_class: 'succeeded',
      status_final: true,
      status_source: 'notification',
      status_observed_at: at(20).toISOString(),
      amount_satang: '4000',
      currency: 'THB',
      tracked_by: 'merchant',
      tracked_at: '2026-01-01T03:10:00.000Z',
      tracked_at_bangkok: '2026-01-01T10:10:00.000',
      // complete_time 2026-01-02 10:00:05 in Bangkok
      completed_at: '2026-01-02T03:00:05.000Z',
      completed_at_bangkok: '2026-01-02T10:00:05.000',
      recorded_at: at(20).toISOString(),
      notifications_seen: 1,
      queries_seen: 2,
      needs_review: false,
      open_discrepancies: 0,
      unclassified_statuses: [],
      last_event_position: events.at(-1)?.position,
      updated_at: events.at(-1)?.recordedAt.toISOString(),
    })
    expect(row).toEqual(expectedRow(stream, events))
    // The row agrees with the aggregate's own fold.
    const state = fold([...decided, ...late])
    expect(withoutKeys(foldRefundView(events)?.state ?? initialRefundState)).toEqual(withoutKeys(state))
  })

  it('one batch, one event per batch and random batches give identical rows (internal state included)', async () => {
    const refunds = ['REFUND-A', 'REFUND-B', 'REFUND-C']
    const make = makeEventFactory()
    const byRefund = [
      decideAll([track('REFUND-A'), queriedWith('REFUND-A', 'RP', { refundOrderId: 'RO-A' }), notifiedWith('REFUND-A', 'RS', { refundOrderId: 'RO-A', minute: 30 })]),
      decideAll([notifiedWith('REFUND-B', 'R?', { refundOrderId: 'RO-B' }), notifiedWith('REFUND-B', 'RF', { refundOrderId: 'RO-B', minute: 31 })]),
      decideAll([track('REFUND-C'), queriedWith('REFUND-C', 'RS', { refundOrderId: 'RO-C', amount: '90.00', refundedByOthers: 4000n, minute: 40 })]),
    ]
    // Interleaved across the three streams, in a fixed order.
    const events: ProjectedEvent[] = []
    for (let i = 0; i < Math.max(...byRefund.map((b) => b.length)); i += 1) {
      byRefund.forEach((list, k) => {
        const e = list[i]
        const id = refunds[k]
        if (e !== undefined && id !== undefined) events.push(make(refundStreamName(MERCHANT_ID, id), e))
      })
    }
    const one = await freshSchema('refunds_one')
    await applyInTransaction(pool, one, refundsProjection, events)
    const each = await freshSchema('refunds_each')
    for (const e of events) await applyInTransaction(pool, each, refundsProjection, [e])
    const split = await freshSchema('refunds_split')
    for (const batch of [events.slice(0, 3), events.slice(3, 4), events.slice(4)]) await applyInTransaction(pool, split, refundsProjection, batch)

    const rows = await canonicalRows(pool, one, 'refunds', 'stream_name')
    expect(rows).toHaveLength(3)
    expect(await canonicalRows(pool, each, 'refunds', 'stream_name')).toEqual(rows)
    expect(await canonicalRows(pool, split, 'refunds', 'stream_name')).toEqual(rows)
    expect(rows.map((r) => [r.merchant_refund_id, r.status_code, r.status_class, r.amount_satang, r.tracked_by, r.needs_review, r.open_discrepancies, r.unclassified_statuses])).toEqual([
      ['REFUND-A', 'RS', 'succeeded', '4000', 'merchant', false, 0, []],
      // Tracked from the gateway's notification; an unknown code, then a final failure.
      ['REFUND-B', 'RF', 'failed', null, 'notification', true, 0, ['R?']],
      // 90.00 asked back when only 60.00 is still refundable: a discrepancy, not applied.
      ['REFUND-C', null, 'pending', null, 'merchant', true, 1, []],
    ])
  })

  it('answers "refunds per order" by merchant_order_id', async () => {
    const schema = await freshSchema('refunds_order')
    const make = makeEventFactory()
    const events = [
      ...decideAll([track('REFUND-1'), notifiedWith('REFUND-1', 'RS', { refundOrderId: 'RO-1' })]).map((e) => make(refundStreamName(MERCHANT_ID, 'REFUND-1'), e)),
      ...decideAll([track('REFUND-2'), notifiedWith('REFUND-2', 'RS', { refundOrderId: 'RO-2', amount: '25.50', refundedByOthers: 4000n })]).map((e) =>
        make(refundStreamName(MERCHANT_ID, 'REFUND-2'), e),
      ),
      ...decideAll([track('REFUND-3'), queriedWith('REFUND-3', 'RP', { refundOrderId: 'RO-3' })]).map((e) => make(refundStreamName(MERCHANT_ID, 'REFUND-3'), e)),
    ]
    await applyInTransaction(pool, schema, refundsProjection, events)
    const { rows } = await pool.query<{ refunds: string; refunded_satang: string; pending: string }>(
      `select count(*) as refunds, coalesce(sum(amount_satang) filter (where status_class = 'succeeded'), 0) as refunded_satang,
              count(*) filter (where status_class = 'pending') as pending
         from "${schema}".refunds where merchant_id = $1 and merchant_order_id = $2`,
      [MERCHANT_ID, ORDER_ID],
    )
    expect(rows).toEqual([{ refunds: '3', refunded_satang: '6550', pending: '1' }])
  })

  it('events before the refund is tracked make no row; a callback rejected later changes only the position', async () => {
    const schema = await freshSchema('refunds_untracked')
    const stream = refundStreamName(MERCHANT_ID, 'REFUND-X')
    const make = makeEventFactory()
    const rejected = (id: string) =>
      callbackRejected.make({ callback: 'refund_notification', reason: 'bad_signature', detail: 'signature did not verify', violations: [], callbackId: id, receivedAt: at(5), payload: null })
    await applyInTransaction(pool, schema, refundsProjection, [make(stream, rejected('cb-1'))])
    expect(await canonicalRows(pool, schema, 'refunds', 'stream_name')).toEqual([])
    const tracked = decideAll([track('REFUND-X')]).map((e) => make(stream, e))
    const after = make(stream, rejected('cb-2'))
    await applyInTransaction(pool, schema, refundsProjection, [...tracked, after])
    const [row] = await canonicalRows(pool, schema, 'refunds', 'stream_name')
    expect(row).toMatchObject({ status_class: 'pending', status_code: null, notifications_seen: 0, last_event_position: after.position })
  })

  it('stops with a clear error on a kept state it cannot read, or on an event of another aggregate in a refund stream', async () => {
    const schema = await freshSchema('refunds_bad')
    const stream = refundStreamName(MERCHANT_ID, 'REFUND-B')
    const make = makeEventFactory()
    await applyInTransaction(pool, schema, refundsProjection, decideAll([track('REFUND-B')]).map((e) => make(stream, e)))
    await pool.query(`update "${schema}".refunds set projection_state = '{"version": 0}'`)
    const next = decideAll([notifiedWith('REFUND-B', 'RS')], decideAll([track('REFUND-B')])).slice(1)
    await expect(applyInTransaction(pool, schema, refundsProjection, next.map((e) => make(stream, e)))).rejects.toThrow(/REFUND-B.*rebuild/)

    const other = await freshSchema('refunds_foreign')
    const foreign = make(stream, eventDefinitions.SubscriptionCancelled.make({ requestSeq: 2, traceId: null, cancelledAt: at(3) }))
    await expect(applyInTransaction(pool, other, refundsProjection, [foreign])).rejects.toThrow(new RegExp(`${stream}.*position ${foreign.position}.*SubscriptionCancelled`))
  })

  it('property: for random observations of several refunds of one order, split into random batches, every row equals the row of the fold', async () => {
    const schema = await freshSchema('refunds_prop')
    let run = 0
    const stepArb = fc.record({
      refund: fc.nat({ max: 2 }),
      via: fc.constantFrom('track', 'notification', 'notification', 'query', 'query', 'forged', 'late'),
      status: fc.constantFrom('RS', 'RS', 'RP', 'RF', 'R?'),
      amount: fc.constantFrom('40.00', '40.00', '35.00', '150.00'),
      minute: fc.integer({ min: 1, max: 600 }),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 25 }), fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 10 }), async (steps, cuts) => {
        run += 1
        const ids = [0, 1, 2].map((k) => `R-${String(run)}-${String(k)}`)
        const streams = ids.map((id) => refundStreamName(MERCHANT_ID, id))
        const perStream: RefundEvent[][] = [[], [], []]
        const make = makeEventFactory()
        const log: ProjectedEvent[] = []
        for (const step of steps) {
          const id = ids[step.refund] ?? 'R'
          const stream = streams[step.refund] ?? 'refund-'
          const mine = perStream[step.refund] ?? []
          // What the order allows: paid 100.00, minus what the order's other refunds recorded.
          const refundedByOthers = perStream.filter((_, k) => k !== step.refund).reduce((sum, es) => sum + (recordedAmountOf(fold(es)) ?? 0n), 0n)
          const o = { minute: step.minute, amount: step.amount, refundOrderId: `RO-${id}`, refundedByOthers }
          let decided: ReadonlyArray<RefundEvent>
          if (step.via === 'late') {
            // An observation appended out of order, bypassing decide (as a late writer would).
            decided = mine.length === 0 ? [] : [eventDefinitions.RefundStatusObserved.make({ merchantId: MERCHANT_ID, merchantRefundId: id, merchantOrderId: ORDER_ID, gatewayOrderId: 'G', refundOrderId: `RO-${id}`, statusCode: step.status, classification: classifyRefundStatus(STATUS_TABLE, step.status), amount: sat(4000n), currency: 'THB', completeTime: at(step.minute), source: 'query', observedAt: at(step.minute), observationKey: `late-${String(step.minute)}`, traceId: null })]
          } else {
            const command: RefundCommand =
              step.via === 'track'
                ? track(id, step.minute)
                : step.via === 'query'
                  ? queriedWith(id, step.status, o)
                  : step.via === 'forged'
                    ? { ...notifiedWith(id, step.status, o), signature: { verified: false, reason: 'bad signature' } }
                    : notifiedWith(id, step.status, o)
            decided = decideAll([command], mine).slice(mine.length)
          }
          mine.push(...decided)
          for (const e of decided) log.push(make(stream, e))
        }
        // Random batches, in log order.
        let from = 0
        for (let i = 0; from < log.length; i += 1) {
          const size = cuts[i % cuts.length] ?? 1
          await applyInTransaction(pool, schema, refundsProjection, log.slice(from, from + size))
          from += size
        }
        const expected = streams.map((s) => expectedRow(s, log.filter((e) => e.streamName === s))).filter((r) => r !== null)
        expect(await canonicalRows(pool, schema, 'refunds', 'stream_name', streams)).toEqual(expected)
        // The view's state is the aggregate's fold.
        streams.forEach((s, k) => {
          const view = foldRefundView(log.filter((e) => e.streamName === s))
          expect(withoutKeys(view?.state ?? initialRefundState)).toEqual(withoutKeys(fold(perStream[k] ?? [])))
        })
      }),
      { numRuns: 40 },
    )
  }, 120_000)
})
