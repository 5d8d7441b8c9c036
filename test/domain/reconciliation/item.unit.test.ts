import { describe, expect, it } from 'vitest'
import { classifyPaymentStatus, classifyRefundStatus, DEFAULT_PAYMENT_STATUS_TABLE, DEFAULT_REFUND_STATUS_TABLE } from '../../../src/domain/gateway/statuses.ts'
import { awaitsOutcome, fold, needsReview, paidAmountOf, type Order, type PaymentRequestPhase } from '../../../src/domain/order/index.ts'
import { paymentItemOf, refundItemOf, statusViewOf } from '../../../src/domain/reconciliation/item.ts'
import { fold as foldRefund, type Refund } from '../../../src/domain/refund/index.ts'
import { anAcceptedCheckout, ORDER_ID } from '../order/builders.ts'
import { aRefundTracked, REFUND_ID } from '../refund/builders.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID, sat, T0 } from '../support/values.ts'

/** The items a reconciliation run reads from aggregate state, built through their own functions. */

const anOrder = (o: Partial<Order> = {}): Order => {
  const s = fold(anAcceptedCheckout())
  if (s._tag !== 'Order') throw new Error('no order')
  return { ...s, ...o }
}

const aRefund = (o: Partial<Refund> = {}): Refund => {
  const s = foldRefund([aRefundTracked()])
  if (s._tag !== 'Refund') throw new Error('no refund')
  return { ...s, ...o }
}

const STREAM = `order-${MERCHANT_ID}-${ORDER_ID}`

describe('statusViewOf', () => {
  it('a known final status is final and known, with its outcome', () => {
    expect(statusViewOf(classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PS'))).toEqual({ code: 'PS', final: true, outcome: 'succeeded', known: true })
    expect(statusViewOf(classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, 'RS'))).toEqual({ code: 'RS', final: true, outcome: 'succeeded', known: true })
    expect(statusViewOf({ code: 'PF', meaning: 'failed', outcome: 'failed', final: true, needsReview: false })).toEqual({ code: 'PF', final: true, outcome: 'failed', known: true })
  })

  it('a known pending status is neither final nor unknown', () => {
    expect(statusViewOf(classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PI'))).toEqual({ code: 'PI', final: false, outcome: 'pending', known: true })
  })

  it('an unknown code is not known and never final, even if its classification says final', () => {
    expect(statusViewOf(classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'ZZ'))).toEqual({ code: 'ZZ', final: false, outcome: 'pending', known: false })
    expect(statusViewOf({ code: 'ZZ', meaning: 'odd', outcome: 'succeeded', final: true, needsReview: true })).toEqual({ code: 'ZZ', final: false, outcome: 'succeeded', known: false })
  })
})

describe('paymentItemOf', () => {
  it('an accepted order: every field read from the order, since the create was accepted', () => {
    const o = anOrder()
    expect(paymentItemOf(STREAM, o, { total: 4000n, ids: ['R-1', 'R-2'] })).toEqual({
      kind: 'payment',
      merchantId: MERCHANT_ID,
      merchantOrderId: ORDER_ID,
      stream: STREAM,
      amount: sat(10000n),
      currency: 'THB',
      phase: 'accepted',
      createdAt: T0,
      since: at(1),
      status: { code: 'PI', final: false, outcome: 'pending', known: true },
      statusSource: 'api_response',
      statusObservedAt: at(1),
      gatewayOrderId: GATEWAY_ORDER_ID,
      refunded: 4000n,
      refundIds: ['R-1', 'R-2'],
    })
  })

  it('an order with no status yet has no status, source or observation time', () => {
    const item = paymentItemOf(STREAM, anOrder({ status: null, request: { phase: 'requested', requestedAt: at(2) } }), { total: 0n, ids: [] })
    expect(item).toMatchObject({ status: null, statusSource: null, statusObservedAt: null, phase: 'requested', since: at(2), refunded: 0n, refundIds: [] })
  })

  const phases: ReadonlyArray<readonly [PaymentRequestPhase, Date]> = [
    [{ phase: 'accepted', acceptedAt: at(11), linkUrl: null }, at(11)],
    [{ phase: 'requested', requestedAt: at(12) }, at(12)],
    [{ phase: 'outcome_unknown', reason: 'timeout', since: at(13) }, at(13)],
    [{ phase: 'resolved_by_observation', resolvedAt: at(14) }, at(14)],
    [{ phase: 'failed', reason: 'gateway_rejected', failedAt: at(15) }, at(15)],
  ]
  it.each(phases)('since: the time of the phase %j', (request, since) => {
    expect(paymentItemOf(STREAM, anOrder({ request }), { total: 0n, ids: [] })).toMatchObject({ phase: request.phase, since })
  })

  it('since of an order never requested: its first observation, or its creation when nothing was observed', () => {
    const observed = anOrder({ request: { phase: 'not_requested' }, status: { code: 'PS', classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PS'), source: 'query', observedAt: at(30) } })
    expect(paymentItemOf(STREAM, observed, { total: 0n, ids: [] })).toMatchObject({ since: at(30), statusSource: 'query', statusObservedAt: at(30) })
    expect(paymentItemOf(STREAM, anOrder({ request: { phase: 'not_requested' }, status: null }), { total: 0n, ids: [] }).since).toEqual(T0)
  })
})

describe('refundItemOf', () => {
  const RSTREAM = `refund-${MERCHANT_ID}-${REFUND_ID}`

  it('a tracked refund with nothing observed: every field read from the refund and the order context', () => {
    expect(refundItemOf(RSTREAM, aRefund(), { known: true, currency: 'THB' })).toEqual({
      kind: 'refund',
      merchantId: MERCHANT_ID,
      merchantRefundId: REFUND_ID,
      merchantOrderId: ORDER_ID,
      stream: RSTREAM,
      trackedAt: at(10),
      trackedBy: 'merchant',
      status: null,
      statusSource: null,
      statusObservedAt: null,
      recorded: null,
      orderKnown: true,
      orderCurrency: 'THB',
    })
  })

  it('a recorded refund: its status view, source, observation time and recorded amount (without its time)', () => {
    const r = aRefund({
      status: { code: 'RS', classification: classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, 'RS'), source: 'notification', observedAt: at(20) },
      recorded: { amount: sat(4000n), currency: 'THB', recordedAt: at(21) },
    })
    expect(refundItemOf(RSTREAM, r, { known: false, currency: null })).toMatchObject({
      status: { code: 'RS', final: true, outcome: 'succeeded', known: true },
      statusSource: 'notification',
      statusObservedAt: at(20),
      recorded: { amount: sat(4000n), currency: 'THB' },
      orderKnown: false,
      orderCurrency: null,
    })
    expect(refundItemOf(RSTREAM, r, { known: false, currency: null }).recorded).toStrictEqual({ amount: sat(4000n), currency: 'THB' })
  })
})

describe('order state helpers', () => {
  it('paid amount, awaiting an outcome and review: only for an order, each on its own condition', () => {
    expect([paidAmountOf({ _tag: 'NoOrder' }), awaitsOutcome({ _tag: 'NoOrder' }), needsReview({ _tag: 'NoOrder' })]).toEqual([null, false, false])
    expect(paidAmountOf(anOrder())).toBeNull()
    expect(paidAmountOf(anOrder({ status: { code: 'PS', classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PS'), source: 'query', observedAt: at(3) } }))).toBe(10000n)
    expect([awaitsOutcome(anOrder()), awaitsOutcome(anOrder({ request: { phase: 'requested', requestedAt: at(1) } })), awaitsOutcome(anOrder({ request: { phase: 'outcome_unknown', reason: 'timeout', since: at(1) } }))]).toEqual([false, true, true])
    expect([needsReview(anOrder()), needsReview(anOrder({ unclassifiedStatuses: ['ZZ'] })), needsReview(anOrder({ discrepancies: [{ source: 'query', observationKey: 'k', observedAt: at(1), statusCode: 'PS', mismatches: [] }] }))]).toEqual([false, true, true])
  })
})
