import { describe, expect, it } from 'vitest'
import { paymentGatewayView, paymentSatangView, refundGatewayView, refundSatangView } from '../../../src/domain/reconciliation/views.ts'
import { GATEWAY_ORDER_ID, MERCHANT_ID, sat, T0 } from '../support/values.ts'
import { aPaymentItem, aRecordedRefund, aRefundItem, failed, found, notFound, refundFound, status } from './builders.ts'

/* What a reconciliation break keeps of each side, compared whole (the break's satang_view and gateway_view). */

describe("the views a reconciliation break keeps", () => {
  it("satang's view of a payment: ids, phase, status with its source, amounts as digit strings, refunds", () => {
    expect(paymentSatangView(aPaymentItem({ refunded: sat(2500n), refundIds: ['REF-1', 'REF-2'] }))).toStrictEqual({
      merchant_order_id: 'ORD-1',
      gateway_order_id: GATEWAY_ORDER_ID,
      request_phase: 'accepted',
      status: { code: 'PI', final: false, outcome: 'pending', known: true },
      status_source: 'api_response',
      amount_satang: '10000',
      currency: 'THB',
      refunded_satang: '2500',
      refund_ids: ['REF-1', 'REF-2'],
      created_at: T0.toISOString(),
    })
    expect(paymentSatangView(aPaymentItem({ status: null, statusSource: null, gatewayOrderId: null }))).toMatchObject({ status: null, status_source: null, gateway_order_id: null })
  })

  it("satang's view of a refund: recorded amount and currency, else none and the order's currency", () => {
    expect(refundSatangView(aRecordedRefund())).toStrictEqual({
      merchant_refund_id: 'REF-1',
      merchant_order_id: 'ORD-1',
      tracked_by: 'merchant',
      status: { code: 'RS', final: true, outcome: 'succeeded', known: true },
      status_source: 'notification',
      amount_satang: '4000',
      currency: 'THB',
      order_known: true,
    })
    expect(refundSatangView(aRefundItem({ orderCurrency: 'USD', orderKnown: false }))).toStrictEqual({
      merchant_refund_id: 'REF-1',
      merchant_order_id: 'ORD-1',
      tracked_by: 'merchant',
      status: null,
      status_source: null,
      amount_satang: null,
      currency: 'USD',
      order_known: false,
    })
    expect(refundSatangView(aRecordedRefund({ recorded: { amount: sat(1n), currency: 'JPY' }, orderCurrency: 'THB' }))).toMatchObject({ amount_satang: '1', currency: 'JPY' })
  })

  it("the gateway's view of a payment: the record it holds, not found with its code and trace, or no answer with why", () => {
    expect(paymentGatewayView(found())).toStrictEqual({
      answered: true,
      found: true,
      order_id: GATEWAY_ORDER_ID,
      status: { code: 'PS', final: true, outcome: 'succeeded', known: true },
      order_amount: '100.00',
      amount_satang: '10000',
      currency: 'THB',
      complete_time: '2026-01-01T03:05:00.000Z',
      trace_id: 'trace-1',
    })
    expect(paymentGatewayView(found({ amount: null, amountText: 'abc', completeTime: null, traceId: null, status: status('XX') }))).toStrictEqual({
      answered: true,
      found: true,
      order_id: GATEWAY_ORDER_ID,
      status: { code: 'XX', final: false, outcome: 'pending', known: false },
      order_amount: 'abc',
      amount_satang: null,
      currency: 'THB',
      complete_time: null,
      trace_id: null,
    })
    expect(paymentGatewayView(notFound)).toStrictEqual({ answered: true, found: false, code: 404001, message: 'not found', trace_id: 'trace-nf' })
    expect(paymentGatewayView(failed)).toStrictEqual({ answered: false, reason: 'TransportFailed: timeout after 4 attempts' })
  })

  it("the gateway's view of a refund", () => {
    expect(refundGatewayView(refundFound())).toStrictEqual({
      answered: true,
      found: true,
      refund_order_id: '202601010000000099',
      merchant_order_id: 'ORD-1',
      status: { code: 'RS', final: true, outcome: 'succeeded', known: true },
      refund_amount: '40.00',
      amount_satang: '4000',
      currency: 'THB',
      trace_id: 'trace-r',
    })
    expect(refundGatewayView(refundFound({ amount: null, amountText: '', traceId: null }))).toMatchObject({ amount_satang: null, refund_amount: '', trace_id: null })
    expect(refundGatewayView(notFound)).toStrictEqual({ answered: true, found: false, code: 404001, message: 'not found', trace_id: 'trace-nf' })
    expect(refundGatewayView(failed)).toStrictEqual({ answered: false, reason: 'TransportFailed: timeout after 4 attempts' })
  })

  it('the merchant is not part of a view (the break names it)', () => {
    expect(JSON.stringify(paymentSatangView(aPaymentItem()))).not.toContain(MERCHANT_ID)
  })
})
