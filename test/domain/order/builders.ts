import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import type { CheckoutApplyRequest, CheckoutApplyResponse } from '../../../src/domain/gateway/checkout.ts'
import type { DirectPaymentRequest } from '../../../src/domain/gateway/direct-payment.ts'
import type { PaymentNotification } from '../../../src/domain/gateway/notification.ts'
import type { PaymentQueryResponse } from '../../../src/domain/gateway/payment-query.ts'
import type { CheckoutRedirectForm } from '../../../src/domain/gateway/redirect-forms.ts'
import { classifyPaymentStatus, DEFAULT_PAYMENT_STATUS_TABLE, type StatusTable } from '../../../src/domain/gateway/statuses.ts'
import {
  decide,
  evolve,
  initialOrderState,
  orderCreated,
  paymentObservationKey,
  paymentRequestAccepted,
  paymentRequested,
  statusObserved,
  type CreateOrder,
  type ObservePaymentByQuery,
  type OrderCreatedData,
  type OrderEvent,
  type ReceiveCheckoutRedirect,
  type ReceivePaymentNotification,
  type StatusObservedData,
} from '../../../src/domain/order/index.ts'
import { deciderSpec } from '../support/decider-spec.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID, PAYER, sat, T0 } from '../support/values.ts'

export const ORDER_ID = 'ORDER-2026_0001'

export const given = deciderSpec({ initialState: initialOrderState, evolve, decide })

/** Our callback URLs, which satang sends in place of the merchant's. */
const SATANG_NOTIFY = 'https://satang.example/callbacks/notify'

export const aCreateOrder = (o: Partial<CreateOrder> = {}): CreateOrder => ({
  type: 'CreateOrder',
  merchantId: MERCHANT_ID,
  storeId: null,
  merchantOrderId: ORDER_ID,
  operation: 'checkout',
  service: 'svc.checkout.apply',
  paymentMethod: null,
  productCode: null,
  amount: sat(10000n),
  currency: 'THB',
  orderDesc: 'Iced coffee',
  merchantUrls: { notifyUrl: 'https://merchant.example/notify', redirectUrl: 'https://merchant.example/done', cancelUrl: null },
  createdAt: T0,
  ...o,
})

export const anOrderCreated = (o: Partial<OrderCreatedData> = {}): OrderEvent => {
  const { type: _, ...c } = aCreateOrder()
  return orderCreated.make({ ...c, ...o })
}

export const aCheckoutBody = (o: Partial<CheckoutApplyRequest> = {}): CheckoutApplyRequest => ({
  version: 'v1',
  service: 'svc.checkout.apply',
  merchant_id: MERCHANT_ID,
  merchant_order_id: ORDER_ID,
  order_amount: '100.00',
  order_currency: 'THB',
  order_desc: 'Iced coffee',
  customer: { ...PAYER },
  notify_url: SATANG_NOTIFY,
  redirect_url: 'https://satang.example/callbacks/checkout',
  ...o,
})

export const aDirectBody = (o: Partial<DirectPaymentRequest> = {}): DirectPaymentRequest => ({
  version: 'v1',
  service: 'svc.mobile.banking.pay',
  merchant_id: MERCHANT_ID,
  merchant_order_id: ORDER_ID,
  order_amount: '100',
  order_currency: 'THB',
  order_desc: 'Iced coffee',
  payment_method: 'BANKAPP_A_NOTIFICATION',
  mobile_number: '0898765432',
  customer: { ...PAYER },
  notify_url: SATANG_NOTIFY,
  ...o,
})

export const aPaymentRequested = (): OrderEvent =>
  paymentRequested.make({ operation: 'checkout', service: 'svc.checkout.apply', request: redactPayerData(aCheckoutBody()), requestedAt: at(1) })

export const aCheckoutAnswer = (o: Partial<CheckoutApplyResponse> = {}): CheckoutApplyResponse => ({
  merchant_id: MERCHANT_ID,
  merchant_order_id: ORDER_ID,
  order_id: GATEWAY_ORDER_ID,
  order_status: 'PI',
  order_amount: '100.00',
  order_currency: 'THB',
  create_time: '2026-01-01 10:01:00',
  link_url: 'https://gateway.example/checkout/202601010000000001',
  ...o,
})

export const aPaymentRequestAccepted = (): OrderEvent =>
  paymentRequestAccepted.make({
    gatewayOrderId: GATEWAY_ORDER_ID,
    statusCode: 'PI',
    classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PI'),
    amount: sat(10000n),
    currency: 'THB',
    createTime: at(1),
    linkUrl: 'https://gateway.example/checkout/202601010000000001',
    traceId: 'trace-create',
    response: redactPayerData(aCheckoutAnswer()),
    receivedAt: at(1),
  })

export const aStatusObserved = (o: Partial<StatusObservedData> = {}): OrderEvent => {
  const source = o.source ?? 'notification'
  const statusCode = o.statusCode ?? 'PS'
  return statusObserved.make({
    merchantId: MERCHANT_ID,
    merchantOrderId: ORDER_ID,
    gatewayOrderId: GATEWAY_ORDER_ID,
    statusCode,
    classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, statusCode),
    amount: sat(10000n),
    currency: 'THB',
    completeTime: null,
    source,
    observedAt: at(5),
    observationKey: paymentObservationKey(source, { merchant_id: MERCHANT_ID, merchant_order_id: ORDER_ID, order_id: GATEWAY_ORDER_ID, order_status: statusCode }),
    traceId: null,
    ...o,
  })
}

/** The order as it stands after a checkout was accepted by the gateway. */
export const anAcceptedCheckout = (): ReadonlyArray<OrderEvent> => [anOrderCreated(), aPaymentRequested(), aPaymentRequestAccepted()]

const orderFields = (status: string) => ({
  merchant_id: MERCHANT_ID,
  merchant_order_id: ORDER_ID,
  order_id: GATEWAY_ORDER_ID,
  order_status: status,
  order_amount: '100.00',
  order_currency: 'THB',
})

export const aPaymentNotification = (o: Partial<PaymentNotification> = {}): PaymentNotification => ({
  notify_type: 'PAYMENT',
  ...orderFields('PS'),
  order_desc: 'Iced coffee',
  customer: { ...PAYER },
  create_time: '2026-01-01 10:01:00',
  complete_time: '2026-01-01 10:04:00',
  sign_type: 'RSA',
  sign: 'c2lnbmF0dXJl',
  ...o,
})

export const aQueryAnswer = (o: Partial<PaymentQueryResponse> = {}): PaymentQueryResponse => ({
  ...orderFields('PS'),
  order_desc: 'Iced coffee',
  create_time: '2026-01-01 10:01:00',
  complete_time: '2026-01-01 10:04:00',
  customer: { ...PAYER },
  ...o,
})

export const aRedirectForm = (o: Partial<CheckoutRedirectForm> = {}): CheckoutRedirectForm => ({ ...orderFields('PS'), sign_type: 'RSA', sign: 'c2lnbmF0dXJl', ...o })

export const notified = (
  notification: PaymentNotification,
  o: { readonly verified?: boolean; readonly at?: Date; readonly statusTable?: StatusTable } = {},
): ReceivePaymentNotification => ({
  type: 'ReceivePaymentNotification',
  notification,
  signature: o.verified === false ? { verified: false, reason: 'signature does not match the gateway key' } : { verified: true },
  callbackId: 'req-1',
  receivedAt: o.at ?? at(5),
  statusTable: o.statusTable ?? DEFAULT_PAYMENT_STATUS_TABLE,
})

export const queried = (answer: PaymentQueryResponse, o: { readonly at?: Date; readonly statusTable?: StatusTable } = {}): ObservePaymentByQuery => ({
  type: 'ObservePaymentByQuery',
  answer,
  traceId: 'trace-query',
  observedAt: o.at ?? at(6),
  statusTable: o.statusTable ?? DEFAULT_PAYMENT_STATUS_TABLE,
})

export const redirected = (form: CheckoutRedirectForm, o: { readonly verified?: boolean } = {}): ReceiveCheckoutRedirect => ({
  type: 'ReceiveCheckoutRedirect',
  form,
  signature: o.verified === false ? { verified: false, reason: 'bad signature' } : { verified: true },
  callbackId: 'req-2',
  receivedAt: at(4),
})
