import { describe, expect, it } from 'vitest'
import { CheckoutApplyResponse } from '../../../src/domain/gateway/checkout.ts'
import { DirectPaymentResponse } from '../../../src/domain/gateway/direct-payment-response.ts'
import { DirectPaymentRequest } from '../../../src/domain/gateway/direct-payment.ts'
import * as gateway from '../../../src/domain/gateway/index.ts'
import {
  checkoutApply,
  directPayment,
  gatewayOperations,
  paymentQuery,
  refundQuery,
  subscriptionCancel,
  subscriptionCreate,
  subscriptionUpdate,
} from '../../../src/domain/gateway/operations.ts'
import { PaymentQueryRequest } from '../../../src/domain/gateway/payment-query.ts'
import { RefundRecord } from '../../../src/domain/gateway/refund-query.ts'
import { SubscriptionCancelRequest, SubscriptionCreateResponse, SubscriptionUpdateResponse } from '../../../src/domain/gateway/subscription.ts'
import { aDirectPayment, MERCHANT_ID, violations } from './builders.ts'

describe('gateway operations', () => {
  it.each([
    [directPayment, 'POST', 'create'],
    [paymentQuery, 'GET', 'query'],
    [refundQuery, 'GET', 'query'],
    [checkoutApply, 'POST', 'create'],
    [subscriptionCreate, 'POST', 'create'],
    [subscriptionUpdate, 'POST', 'command'],
    [subscriptionCancel, 'POST', 'command'],
  ] as const)('%#: method and retry class', (op, httpMethod, retry) => {
    expect({ httpMethod: op.httpMethod, retry: op.retry }).toEqual({ httpMethod, retry })
  })
  it('wires the codecs of each endpoint', () => {
    expect(directPayment.request).toBe(DirectPaymentRequest)
    expect(directPayment.response).toBe(DirectPaymentResponse)
    expect(paymentQuery.request).toBe(PaymentQueryRequest)
    expect(refundQuery.response).toBe(RefundRecord)
    expect(checkoutApply.response).toBe(CheckoutApplyResponse)
    expect(subscriptionCreate.response).toBe(SubscriptionCreateResponse)
    expect(subscriptionUpdate.response).toBe(SubscriptionUpdateResponse)
    expect(subscriptionCancel.request).toBe(SubscriptionCancelRequest)
    expect(subscriptionCancel.response).toBeNull()
  })
  it('lists every operation once, with unique names', () => {
    expect(gatewayOperations.map((o) => o.name)).toEqual([
      'directPayment', 'paymentQuery', 'refundQuery', 'checkoutApply', 'subscriptionCreate', 'subscriptionUpdate', 'subscriptionCancel',
    ])
  })
  it('request codecs decode and encode the signed wire fields unchanged', () => {
    const body = aDirectPayment('svc.thaiqr.pay', 'THAI_QR')
    const r = directPayment.request.decode(body)
    expect(r._tag === 'Right' && directPayment.request.encode(r.right)).toEqual(body)
    const query = { version: 'v1', service: 'svc.payment.query', merchant_id: MERCHANT_ID, merchant_order_id: 'O-1' }
    expect(violations(paymentQuery.request, query)).toEqual([])
  })
  it('index re-exports the public names', () => {
    expect(gateway.directPayment).toBe(directPayment)
    expect(gateway.expectedDirectResponseFields).toBeTypeOf('function')
    expect(gateway.classifyPaymentStatus).toBeTypeOf('function')
    expect(gateway.Notification).toBeDefined()
    expect(gateway.Envelope).toBeTypeOf('function')
  })
})
