import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import { classifyPaymentStatus, DEFAULT_PAYMENT_STATUS_TABLE } from '../../../src/domain/gateway/statuses.ts'
import { fold, type Order, type OrderEvent } from '../../../src/domain/order/index.ts'
import { PaymentView, paymentView } from '../../../src/domain/order/view.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID, T0 } from '../support/values.ts'
import { aCheckoutAnswer, anAcceptedCheckout, anOrderCreated, aStatusObserved, ORDER_ID } from './builders.ts'

/* The payment as the merchant API shows it, compared whole. */

const orderOf = (events: ReadonlyArray<OrderEvent>): Order => {
  const s = fold(events)
  if (s._tag !== 'Order') throw new Error('no order')
  return s
}

const created = anOrderCreated()
const base = orderOf([created])

describe("the merchant's view of a payment", () => {
  it('an accepted checkout, then paid: every field, the stored create answer, the status with its source', () => {
    const events = [...anAcceptedCheckout(), aStatusObserved()]
    const view = paymentView(orderOf(events), events)
    expect(view).toStrictEqual({
      merchant_id: MERCHANT_ID,
      merchant_order_id: ORDER_ID,
      operation: 'checkout',
      service: 'svc.checkout.apply',
      payment_method: null,
      product_code: null,
      order_amount: '100.00',
      order_currency: 'THB',
      order_desc: 'Iced coffee',
      created_at: T0.toISOString(),
      request: { phase: 'accepted', accepted_at: at(1).toISOString() },
      gateway_order_id: GATEWAY_ORDER_ID,
      link_url: 'https://gateway.example/checkout/202601010000000001',
      gateway_response: { ...aCheckoutAnswer() },
      status: { code: 'PS', meaning: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PS').meaning, outcome: 'succeeded', final: true, source: 'notification', observed_at: at(5).toISOString() },
      paid: true,
      redirect_status: null,
      needs_review: false,
      unclassified_statuses: [],
      discrepancies: [],
      merchant_urls: { notify_url: 'https://merchant.example/notify', redirect_url: 'https://merchant.example/done', cancel_url: null },
    })
    expect(E.isRight(PaymentView.decode(view))).toBe(true)
  })

  it('a created order not yet requested: no gateway order, link, answer or status', () => {
    expect(paymentView(base, [created])).toMatchObject({
      request: { phase: 'not_requested' },
      gateway_order_id: null,
      link_url: null,
      gateway_response: null,
      status: null,
      paid: false,
      needs_review: false,
    })
  })

  it('each phase of the create request, with its own time and reason', () => {
    const phases: ReadonlyArray<[Order['request'], unknown]> = [
      [{ phase: 'requested', requestedAt: at(1) }, { phase: 'requested', requested_at: at(1).toISOString() }],
      [{ phase: 'failed', reason: 'gateway_rejected', failedAt: at(2) }, { phase: 'failed', reason: 'gateway_rejected', failed_at: at(2).toISOString() }],
      [{ phase: 'outcome_unknown', reason: 'timeout', since: at(3) }, { phase: 'outcome_unknown', reason: 'timeout', since: at(3).toISOString() }],
      [{ phase: 'resolved_by_observation', resolvedAt: at(4) }, { phase: 'resolved_by_observation', resolved_at: at(4).toISOString() }],
      [{ phase: 'accepted', acceptedAt: at(5), linkUrl: null }, { phase: 'accepted', accepted_at: at(5).toISOString() }],
    ]
    for (const [request, expected] of phases) {
      const view = paymentView({ ...base, request }, [created])
      expect(view.request).toStrictEqual(expected)
      expect(view.link_url).toBeNull()
    }
  })

  it('the last accepted answer is shown; review flags, the redirect status, unclassified codes and discrepancies', () => {
    const [c, r, accepted] = anAcceptedCheckout()
    if (c === undefined || r === undefined || accepted === undefined || accepted.type !== 'PaymentRequestAccepted') throw new Error('fixture')
    const later = { ...accepted, data: { ...accepted.data, response: redactPayerData({ order_id: 'second' }) } }
    const o: Order = {
      ...orderOf([c, r, accepted]),
      redirectStatus: 'PS',
      unclassifiedStatuses: ['ZZ', 'YY'],
      discrepancies: [{ source: 'query', observationKey: 'k', observedAt: at(9), statusCode: 'PS', mismatches: [{ field: 'amount', expected: '100.00', observed: '90.00' }] }],
    }
    const view = paymentView(o, [c, r, accepted, aStatusObserved({ statusCode: 'PI' }), later, aStatusObserved({ statusCode: 'PI', observedAt: at(8) })])
    expect(view.gateway_response).toStrictEqual({ order_id: 'second' })
    expect(view.redirect_status).toBe('PS')
    expect(view.needs_review).toBe(true)
    expect(view.unclassified_statuses).toStrictEqual(['ZZ', 'YY'])
    expect(view.discrepancies).toStrictEqual([{ source: 'query', observed_at: at(9).toISOString(), status_code: 'PS', mismatches: [{ field: 'amount', expected: '100.00', observed: '90.00' }] }])
    expect(view.paid).toBe(false)
    // read from the end of the list to its very first event
    expect(paymentView(o, [later]).gateway_response).toStrictEqual({ order_id: 'second' })
  })
})
