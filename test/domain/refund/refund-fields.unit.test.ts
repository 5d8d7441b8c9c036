import { describe, expect, it } from 'vitest'
import { rejectCallback } from '../../../src/domain/events/common/callback-rejected.ts'
import { discrepancyObserved, type Mismatch } from '../../../src/domain/events/common/discrepancy-observed.ts'
import { notificationReceived } from '../../../src/domain/events/common/notification-received.ts'
import { notFoundObservationKey, queryNotFound } from '../../../src/domain/events/common/query-not-found.ts'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import type { RefundRecord } from '../../../src/domain/gateway/refund-query.ts'
import { classifyRefundStatus, DEFAULT_REFUND_STATUS_TABLE, type StatusTable } from '../../../src/domain/gateway/statuses.ts'
import { fold, refundObservationKey, refundRecorded, refundStatusObserved, refundTracked, type RefundCommand, type RefundEvent } from '../../../src/domain/refund/index.ts'
import { ORDER_ID } from '../order/builders.ts'
import { at, MERCHANT_ID, sat } from '../support/values.ts'
import { aPaidOrder, aRefundNotification, aRefundRecord, aRefundTracked, aTrackRefund, given, REFUND_ID, REFUND_ORDER_ID, refundNotified, refundQueried } from './builders.ts'

/*
 * Every identifier, amount and currency check of the refund decider, each shown by an answer that
 * differs in that one field only; rejections and events compared whole.
 */

const OTHER_MERCHANT = '140000000000000099'
const COMPLETE = new Date('2026-01-02T03:00:05.000Z')

const observedOf = (r: RefundRecord, source: 'query' | 'notification', observedAt: Date, traceId: string | null, table: StatusTable = DEFAULT_REFUND_STATUS_TABLE): RefundEvent =>
  refundStatusObserved.make({
    merchantId: r.merchant_id,
    merchantRefundId: r.merchant_refund_id,
    merchantOrderId: r.merchant_order_id,
    gatewayOrderId: r.order_id,
    refundOrderId: r.refund_order_id,
    statusCode: r.refund_status,
    classification: classifyRefundStatus(table, r.refund_status),
    amount: sat(4000n),
    currency: r.refund_currency,
    completeTime: COMPLETE,
    source,
    observedAt,
    observationKey: refundObservationKey(source, r),
    traceId,
  })

const recordedOf = (r: RefundRecord, source: 'query' | 'notification', observedAt: Date): RefundEvent =>
  refundRecorded.make({
    merchantId: r.merchant_id,
    merchantRefundId: r.merchant_refund_id,
    merchantOrderId: r.merchant_order_id,
    refundOrderId: r.refund_order_id,
    amount: sat(4000n),
    currency: r.refund_currency,
    completeTime: COMPLETE,
    source,
    observedAt,
    observationKey: refundObservationKey(source, r),
  })

const discrepancyOf = (r: RefundRecord, source: 'query' | 'notification', observedAt: Date, mismatches: ReadonlyArray<Mismatch>): RefundEvent =>
  discrepancyObserved.make({ source, observationKey: refundObservationKey(source, r), observedAt, statusCode: r.refund_status, mismatches: [...mismatches] })

/** A refund already observed and recorded (RS, 40.00 THB) by a query. */
const aRecordedRefund = (): ReadonlyArray<RefundEvent> => [aRefundTracked(), ...given(aRefundTracked()).when(refundQueried(aRefundRecord())).events()]

describe('TrackRefund', () => {
  it('records who tracked it and when', () => {
    given().when(aTrackRefund()).then([refundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId: REFUND_ID, merchantOrderId: ORDER_ID, trackedBy: 'merchant', trackedAt: at(10) })])
  })
  it('for another order: the rejection names the order it is tracked for', () => {
    given(aRefundTracked()).when(aTrackRefund({ merchantOrderId: 'ORDER-OTHER' })).thenRejectsWith({ _tag: 'RefundTrackedForAnotherOrder', merchantOrderId: ORDER_ID })
    given(aRefundTracked()).when(aTrackRefund({ trackedAt: at(99) })).thenNothing()
  })
})

describe('a query answer of a tracked refund', () => {
  it('that agrees: RefundStatusObserved and RefundRecorded, every field', () => {
    const r = aRefundRecord()
    given(aRefundTracked()).when(refundQueried(r)).then([observedOf(r, 'query', at(21), 'trace-rq'), recordedOf(r, 'query', at(21))])
  })

  it.each<readonly [string, Partial<RefundRecord>, Mismatch]>([
    ['merchant_id', { merchant_id: OTHER_MERCHANT }, { field: 'merchant_id', expected: MERCHANT_ID, observed: OTHER_MERCHANT }],
    ['merchant_order_id', { merchant_order_id: 'ORDER-OTHER' }, { field: 'merchant_order_id', expected: ORDER_ID, observed: 'ORDER-OTHER' }],
    ['currency', { refund_currency: 'USD' }, { field: 'currency', expected: 'THB', observed: 'USD' }],
  ])('with another %s: a discrepancy naming that field only', (_, change, m) => {
    const r = aRefundRecord(change)
    given(aRefundTracked()).when(refundQueried(r)).then([discrepancyOf(r, 'query', at(21), [m])])
  })

  it('the currency is not checked when satang does not know the order', () => {
    const r = aRefundRecord({ refund_currency: 'USD' })
    given(aRefundTracked())
      .when(refundQueried(r, { order: aPaidOrder({ currency: null }) }))
      .thenTypes('RefundStatusObserved', 'RefundRecorded')
  })

  it('once the gateway refund id is known, another one is a discrepancy', () => {
    const r = aRefundRecord({ refund_order_id: '202601020000000099' })
    given(...aRecordedRefund())
      .when(refundQueried(r, { at: at(30) }))
      .then([discrepancyOf(r, 'query', at(30), [{ field: 'refund_order_id', expected: REFUND_ORDER_ID, observed: '202601020000000099' }])])
  })

  it('once recorded, another amount is a discrepancy', () => {
    const n = aRefundNotification({ refund_amount: '40.01' })
    given(...aRecordedRefund())
      .when(refundNotified(n, { at: at(30) }))
      .then([
        notificationReceived.make({ kind: 'REFUND', observationKey: refundObservationKey('notification', n), receivedAt: at(30), payload: redactPayerData(n) }),
        discrepancyOf(n, 'notification', at(30), [{ field: 'amount', expected: '4000', observed: '4001' }]),
      ])
  })

  it('an amount that is not one: MalformedGatewayMessage naming refund_amount (nothing recorded to compare with)', () => {
    given(aRefundTracked())
      .when(refundQueried(aRefundRecord({ refund_amount: 'forty' })))
      .thenRejectsWith({ _tag: 'MalformedGatewayMessage', violations: [{ path: 'refund_amount', rule: 'must be an amount' }] })
  })

  it('zero refunded: recorded as 0.00 when nothing was paid either (the ledger posts nothing for it)', () => {
    const then = given(aRefundTracked()).when(refundQueried(aRefundRecord({ refund_amount: '0.00' }), { order: aPaidOrder({ paidAmount: 0n }) }))
    then.thenTypes('RefundStatusObserved', 'RefundRecorded')
    expect(then.events()[1]).toMatchObject({ data: { amount: 0n } })
  })

  it('more than refundable when the others already took more than was paid: expected is 0, not negative', () => {
    const r = aRefundRecord()
    given(aRefundTracked())
      .when(refundQueried(r, { order: aPaidOrder({ refundedByOthers: 12000n }) }))
      .then([discrepancyOf(r, 'query', at(21), [{ field: 'refundable_amount', expected: '0', observed: '4000' }])])
  })

  it('one satang over what is left is a discrepancy; exactly what is left is not', () => {
    given(aRefundTracked())
      .when(refundQueried(aRefundRecord({ refund_amount: '30.01' }), { order: aPaidOrder({ refundedByOthers: 7000n }) }))
      .thenTypes('DiscrepancyObserved')
    given(aRefundTracked())
      .when(refundQueried(aRefundRecord({ refund_amount: '30.00' }), { order: aPaidOrder({ refundedByOthers: 7000n }) }))
      .thenTypes('RefundStatusObserved', 'RefundRecorded')
  })

  it('the same answer again records nothing', () => {
    given(...aRecordedRefund()).when(refundQueried(aRefundRecord())).thenNothing()
  })
})

describe('a final refund status never regresses', () => {
  const table: StatusTable = { ...DEFAULT_REFUND_STATUS_TABLE, RP: { meaning: 'refund pending', outcome: 'pending' }, RF: { meaning: 'refund failed', outcome: 'failed' } }

  it('a known pending status after RS: the status stays; a query leaves nothing', () => {
    given(...aRecordedRefund())
      .when({ ...refundQueried(aRefundRecord({ refund_status: 'RP' }), { at: at(40) }), statusTable: table })
      .thenNothing()
  })

  it('a known pending status notified after RS: only the notification is kept (every callback becomes an event)', () => {
    const n = aRefundNotification({ refund_status: 'RP' })
    given(...aRecordedRefund())
      .when({ ...refundNotified(n, { at: at(40) }), statusTable: table })
      .then([notificationReceived.make({ kind: 'REFUND', observationKey: refundObservationKey('notification', n), receivedAt: at(40), payload: redactPayerData(n) })])
  })

  it('another final status after RS: a discrepancy of final_status, not applied', () => {
    const r = aRefundRecord({ refund_status: 'RF' })
    given(...aRecordedRefund())
      .when({ ...refundQueried(r, { at: at(40) }), statusTable: table })
      .then([discrepancyOf(r, 'query', at(40), [{ field: 'final_status', expected: 'RS', observed: 'RF' }])])
  })

  it('RS again by a notification: observed, not recorded twice', () => {
    const n = aRefundNotification()
    given(...aRecordedRefund())
      .when(refundNotified(n, { at: at(40) }))
      .then([
        notificationReceived.make({ kind: 'REFUND', observationKey: refundObservationKey('notification', n), receivedAt: at(40), payload: redactPayerData(n) }),
        observedOf(n, 'notification', at(40), null),
      ])
  })

  it('a failed final status is observed and records no refund', () => {
    const r = aRefundRecord({ refund_status: 'RF' })
    given(aRefundTracked())
      .when({ ...refundQueried(r), statusTable: table })
      .then([observedOf(r, 'query', at(21), 'trace-rq', table)])
  })
})

describe('a refund nobody tracked', () => {
  it('is tracked by the source that reported it, at the time it was observed', () => {
    const r = aRefundRecord()
    given()
      .when(refundQueried(r))
      .then([
        refundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId: REFUND_ID, merchantOrderId: ORDER_ID, trackedBy: 'query', trackedAt: at(21) }),
        observedOf(r, 'query', at(21), 'trace-rq'),
        recordedOf(r, 'query', at(21)),
      ])
  })
})

describe('a refund query that does not find the refund', () => {
  const notFound = (code = 404002): RefundCommand => ({ type: 'ObserveRefundNotFound', code, message: 'refund not found', traceId: 'trace-nf', observedAt: at(25) })

  it('about a tracked refund: kept once as QueryNotFound, whole', () => {
    given(aRefundTracked())
      .when(notFound())
      .then([
        queryNotFound.make({ kind: 'refund', code: 404002, message: 'refund not found', traceId: 'trace-nf', observationKey: notFoundObservationKey('refund', MERCHANT_ID, REFUND_ID, 404002), observedAt: at(25) }),
      ])
  })
  it('the same answer again: nothing; another code: another observation', () => {
    const once = given(aRefundTracked()).when(notFound()).events()
    given(aRefundTracked(), ...once).when(notFound()).thenNothing()
    given(aRefundTracked(), ...once).when(notFound(404003)).thenTypes('QueryNotFound')
  })
  it('about a refund nobody tracked: nothing', () => {
    given().when(notFound()).thenNothing()
  })
})


describe('callbacks refused, and what is only checked once the refund succeeded', () => {
  it('a forged notification: CallbackRejected naming the refund notification, whole', () => {
    const n = aRefundNotification()
    given(aRefundTracked())
      .when(refundNotified(n, { verified: false }))
      .then([rejectCallback({ callback: 'refund_notification', reason: 'bad_signature', detail: 'bad signature', violations: [], callbackId: 'req-r1', receivedAt: at(20), payload: n })])
  })
  it('a pending status is observed whatever its amount: what is refundable is checked only when the refund succeeded', () => {
    const table: StatusTable = { ...DEFAULT_REFUND_STATUS_TABLE, RP: { meaning: 'refund pending', outcome: 'pending' } }
    given(aRefundTracked())
      .when({ ...refundQueried(aRefundRecord({ refund_status: 'RP', refund_amount: '150.00' })), statusTable: table })
      .thenTypes('RefundStatusObserved')
  })
})

describe('the refund state, event by event', () => {
  const observed = (code: string, key: string): RefundEvent =>
    refundStatusObserved.make({
      merchantId: MERCHANT_ID,
      merchantRefundId: REFUND_ID,
      merchantOrderId: ORDER_ID,
      gatewayOrderId: 'G',
      refundOrderId: REFUND_ORDER_ID,
      statusCode: code,
      classification: classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, code),
      amount: sat(4000n),
      currency: 'THB',
      completeTime: null,
      source: 'query',
      observedAt: at(30),
      observationKey: key,
      traceId: null,
    })
  const recorded = (amount: bigint, key: string): RefundEvent =>
    refundRecorded.make({ merchantId: MERCHANT_ID, merchantRefundId: REFUND_ID, merchantOrderId: ORDER_ID, refundOrderId: REFUND_ORDER_ID, amount: sat(amount), currency: 'THB', completeTime: null, source: 'query', observedAt: at(31), observationKey: key })

  it('events before the refund is tracked change nothing', () => {
    expect(fold([observed('RS', 'a'), recorded(4000n, 'b')])).toEqual({ _tag: 'NoRefund' })
  })
  it('tracked: nothing observed, nothing recorded, nothing to review', () => {
    expect(fold([aRefundTracked()])).toEqual({
      _tag: 'Refund',
      merchantId: MERCHANT_ID,
      merchantRefundId: REFUND_ID,
      merchantOrderId: ORDER_ID,
      trackedBy: 'merchant',
      trackedAt: at(10),
      refundOrderId: null,
      status: null,
      recorded: null,
      observationKeys: new Set(),
      discrepancies: [],
      unclassifiedStatuses: [],
    })
  })
  it('a final status stays; a later observation is still remembered; an unknown code is kept for review', () => {
    const s = fold([aRefundTracked(), observed('RS', 'k1'), observed('R?', 'k2')])
    expect(s).toMatchObject({ status: { code: 'RS' }, unclassifiedStatuses: ['R?'], refundOrderId: REFUND_ORDER_ID })
    expect(s._tag === 'Refund' && [...s.observationKeys]).toEqual(['k1', 'k2'])
    expect(fold([aRefundTracked(), observed('R?', 'k1'), observed('RS', 'k2')])).toMatchObject({ status: { code: 'RS' } })
  })
  it('recorded once: a second RefundRecorded changes nothing', () => {
    expect(fold([aRefundTracked(), recorded(4000n, 'r1'), recorded(9999n, 'r2')])).toMatchObject({ recorded: { amount: 4000n, currency: 'THB', recordedAt: at(31) } })
  })
  it('tracked again: the first tracking stands', () => {
    expect(fold([aRefundTracked(), refundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId: REFUND_ID, merchantOrderId: 'OTHER', trackedBy: 'query', trackedAt: at(99) })])).toMatchObject({ merchantOrderId: ORDER_ID, trackedBy: 'merchant' })
  })
})
