import { describe, expect, it } from 'vitest'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import { notificationReceived } from '../../../src/domain/events/common/notification-received.ts'
import { classifyRefundStatus, DEFAULT_REFUND_STATUS_TABLE } from '../../../src/domain/gateway/statuses.ts'
import { fold as foldOrder } from '../../../src/domain/order/index.ts'
import {
  fold,
  needsReview,
  parseRefundStreamName,
  recordedAmountOf,
  refundEventNaturalKey,
  refundObservationKey,
  refundOrderContext,
  refundRecorded,
  refundStatusObserved,
  refundStreamName,
  refundTracked,
  type Refund,
  type RefundState,
} from '../../../src/domain/refund/index.ts'
import { anAcceptedCheckout, aStatusObserved, ORDER_ID } from '../order/builders.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID, sat } from '../support/values.ts'
import { aPaidOrder, aRefundNotification, aRefundRecord, aRefundTracked, aTrackRefund, given, REFUND_ID, REFUND_ORDER_ID, refundNotified, refundQueried } from './builders.ts'

const refund = (s: RefundState): Refund => {
  if (s._tag !== 'Refund') throw new Error('expected a refund')
  return s
}

describe('stream names', () => {
  it('refund-<merchant_id>-<merchant_refund_id>', () => {
    expect(refundStreamName(MERCHANT_ID, 'R-1')).toBe('refund-140000000000000001-R-1')
    expect(parseRefundStreamName('refund-140000000000000001-R-1')).toEqual({ merchantId: MERCHANT_ID, merchantRefundId: 'R-1' })
  })
})

describe('TrackRefund', () => {
  it('registers a merchant_refund_id for an order', () => {
    given().when(aTrackRefund()).then([aRefundTracked()])
  })
  it('again for the same order changes nothing; for another order it is refused', () => {
    given(aRefundTracked()).when(aTrackRefund({ trackedAt: at(11) })).thenNothing()
    given(aRefundTracked()).when(aTrackRefund({ merchantOrderId: 'ORDER-OTHER' })).thenRejects('RefundTrackedForAnotherOrder')
  })
})

describe('RS observed: RefundRecorded once', () => {
  it('a verified RS notification records the observation and the refund', () => {
    const n = aRefundNotification()
    const key = refundObservationKey('notification', n)
    const completeTime = new Date('2026-01-02T03:00:05.000Z')
    const then = given(aRefundTracked()).when(refundNotified(n))
    then.then([
      notificationReceived.make({ kind: 'REFUND', observationKey: key, receivedAt: at(20), payload: redactPayerData(n) }),
      refundStatusObserved.make({
        merchantId: MERCHANT_ID,
        merchantRefundId: REFUND_ID,
        merchantOrderId: ORDER_ID,
        gatewayOrderId: GATEWAY_ORDER_ID,
        refundOrderId: REFUND_ORDER_ID,
        statusCode: 'RS',
        classification: classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, 'RS'),
        amount: sat(4000n),
        currency: 'THB',
        completeTime,
        source: 'notification',
        observedAt: at(20),
        observationKey: key,
        traceId: null,
      }),
      refundRecorded.make({
        merchantId: MERCHANT_ID,
        merchantRefundId: REFUND_ID,
        merchantOrderId: ORDER_ID,
        refundOrderId: REFUND_ORDER_ID,
        amount: sat(4000n),
        currency: 'THB',
        completeTime,
        source: 'notification',
        observedAt: at(20),
        observationKey: key,
      }),
    ])
    expect(recordedAmountOf(then.state())).toBe(4000n)
  })
  it('the same notification again: nothing; the query confirming it: an observation, not a second RefundRecorded', () => {
    const first = given(aRefundTracked()).when(refundNotified(aRefundNotification())).events()
    given(aRefundTracked(), ...first).when(refundNotified(aRefundNotification(), { at: at(30) })).thenNothing()
    given(aRefundTracked(), ...first).when(refundQueried(aRefundRecord())).thenTypes('RefundStatusObserved')
  })
  it('a refund nobody tracked is tracked from the observation (the gateway is the authority on refunds)', () => {
    const then = given().when(refundQueried(aRefundRecord()))
    then.thenTypes('RefundTracked', 'RefundStatusObserved', 'RefundRecorded')
    expect(then.events()[0]).toEqual(
      refundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId: REFUND_ID, merchantOrderId: ORDER_ID, trackedBy: 'query', trackedAt: at(21) }),
    )
  })
  it('a status not yet final is observed without recording the refund; RS after it records it', () => {
    const pending = given(aRefundTracked()).when(refundQueried(aRefundRecord({ refund_status: 'RP' })))
    pending.thenTypes('RefundStatusObserved')
    expect(refund(pending.state()).recorded).toBeNull()
    expect(needsReview(pending.state())).toBe(true) // RP is not in the table: flagged for review
    given(aRefundTracked(), ...pending.events()).when(refundNotified(aRefundNotification())).thenTypes('NotificationReceived', 'RefundStatusObserved', 'RefundRecorded')
  })
  it('a final status never regresses', () => {
    const recorded = given(aRefundTracked()).when(refundNotified(aRefundNotification())).events()
    given(aRefundTracked(), ...recorded).when(refundQueried(aRefundRecord({ refund_status: 'RP' }))).thenTypes('RefundStatusObserved') // unknown: kept
    expect(refund(fold([aRefundTracked(), ...recorded])).status?.code).toBe('RS')
  })
})

describe('a refund amount above what is still refundable is a discrepancy, never applied', () => {
  it('more than the order paid', () => {
    const then = given(aRefundTracked()).when(refundNotified(aRefundNotification({ refund_amount: '100.01' })))
    then.thenTypes('NotificationReceived', 'DiscrepancyObserved')
    expect(then.events()[1]).toMatchObject({ data: { mismatches: [{ field: 'refundable_amount', expected: '10000', observed: '10001' }] } })
    expect(refund(then.state()).recorded).toBeNull()
    expect(needsReview(then.state())).toBe(true)
  })
  it('more than was paid minus the other refunds already recorded', () => {
    const then = given(aRefundTracked()).when(refundQueried(aRefundRecord({ refund_amount: '40.00' }), { order: aPaidOrder({ refundedByOthers: 7000n }) }))
    expect(then.events()).toMatchObject([{ type: 'DiscrepancyObserved', data: { mismatches: [{ field: 'refundable_amount', expected: '3000', observed: '4000' }] } }])
  })
  it('a refund of an order satang does not know as paid', () => {
    given(aRefundTracked()).when(refundQueried(aRefundRecord(), { order: aPaidOrder({ paidAmount: null }) })).thenTypes('DiscrepancyObserved')
  })
  it('exactly what is left is fine', () => {
    given(aRefundTracked()).when(refundQueried(aRefundRecord({ refund_amount: '30.00' }), { order: aPaidOrder({ refundedByOthers: 7000n }) })).thenTypes('RefundStatusObserved', 'RefundRecorded')
  })
  it('another currency or another order is a discrepancy too', () => {
    const then = given(aRefundTracked()).when(refundQueried(aRefundRecord({ refund_currency: 'USD', merchant_order_id: 'ORDER-OTHER' })))
    expect(then.events()).toMatchObject([
      {
        type: 'DiscrepancyObserved',
        data: {
          mismatches: [
            { field: 'merchant_order_id', expected: ORDER_ID, observed: 'ORDER-OTHER' },
            { field: 'currency', expected: 'THB', observed: 'USD' },
          ],
        },
      },
    ])
  })
  it('once the order is paid, a later observation of the same refund records it', () => {
    const flagged = given(aRefundTracked()).when(refundNotified(aRefundNotification(), { order: aPaidOrder({ paidAmount: null }) })).events()
    given(aRefundTracked(), ...flagged).when(refundQueried(aRefundRecord())).thenTypes('RefundStatusObserved', 'RefundRecorded')
  })
})

describe('refundOrderContext', () => {
  it('is what the order paid and what its other refunds took back', () => {
    const paid = foldOrder([...anAcceptedCheckout(), aStatusObserved({ statusCode: 'PS' })])
    const other = fold([aRefundTracked(), ...given(aRefundTracked()).when(refundQueried(aRefundRecord({ refund_amount: '25.00' }))).events()])
    expect(refundOrderContext(paid, [other, fold([])])).toEqual({ paidAmount: 10000n, currency: 'THB', refundedByOthers: 2500n })
    expect(refundOrderContext(foldOrder(anAcceptedCheckout()), [])).toEqual({ paidAmount: null, currency: 'THB', refundedByOthers: 0n })
  })
})

describe('callbacks whose signature does not verify', () => {
  it('only CallbackRejected, no state change', () => {
    const then = given(aRefundTracked()).when(refundNotified(aRefundNotification(), { verified: false }))
    then.thenTypes('CallbackRejected')
    expect(then.state()).toEqual(fold([aRefundTracked()]))
  })
})

describe('natural keys', () => {
  it('are distinct within the stream', () => {
    const stream = refundStreamName(MERCHANT_ID, REFUND_ID)
    const events = [aRefundTracked(), ...given(aRefundTracked()).when(refundNotified(aRefundNotification())).events()]
    const keys = events.map((e) => refundEventNaturalKey(stream, e))
    expect(new Set(keys).size).toBe(keys.length)
  })
})
