import { CheckoutApplyRequest, CheckoutApplyResponse } from './checkout.ts'
import { DirectPaymentRequest } from './direct-payment.ts'
import { DirectPaymentResponse } from './direct-payment-response.ts'
import type { GatewayOperation } from './operation.ts'
import { PaymentQueryRequest, PaymentQueryResponse } from './payment-query.ts'
import { RefundQueryRequest, RefundRecord } from './refund-query.ts'
import {
  SubscriptionCancelRequest,
  SubscriptionCreateRequest,
  SubscriptionCreateResponse,
  SubscriptionUpdateRequest,
  SubscriptionUpdateResponse,
} from './subscription.ts'

/**
 * The gateway operations of the spec, all on `{base_url}/gateway`. A create is never re-sent blindly
 * (its unknown outcome is resolved by a query); queries may be retried; subscription update and cancel
 * change gateway state and are not retried automatically.
 */

/** Endpoint 1, create payment (direct), all 11 services. `response` is the lenient decoder; see `directPaymentResponseFor`. */
export const directPayment: GatewayOperation<DirectPaymentRequest, DirectPaymentResponse> = {
  name: 'directPayment',
  httpMethod: 'POST',
  retry: 'create',
  request: DirectPaymentRequest,
  response: DirectPaymentResponse,
}

/** Endpoint 2, payment query by merchant_order_id (query-string parameters). */
export const paymentQuery: GatewayOperation<PaymentQueryRequest, PaymentQueryResponse> = {
  name: 'paymentQuery',
  httpMethod: 'GET',
  retry: 'query',
  request: PaymentQueryRequest,
  response: PaymentQueryResponse,
}

/** Endpoint 3, refund query by merchant_refund_id (query-string parameters); `data` is the Refund record. */
export const refundQuery: GatewayOperation<RefundQueryRequest, RefundRecord> = {
  name: 'refundQuery',
  httpMethod: 'GET',
  retry: 'query',
  request: RefundQueryRequest,
  response: RefundRecord,
}

/** Endpoint 4, hosted checkout apply; `data.link_url` is the checkout page. */
export const checkoutApply: GatewayOperation<CheckoutApplyRequest, CheckoutApplyResponse> = {
  name: 'checkoutApply',
  httpMethod: 'POST',
  retry: 'create',
  request: CheckoutApplyRequest,
  response: CheckoutApplyResponse,
}

/** Endpoint 6, subscription create. */
export const subscriptionCreate: GatewayOperation<SubscriptionCreateRequest, SubscriptionCreateResponse> = {
  name: 'subscriptionCreate',
  httpMethod: 'POST',
  retry: 'create',
  request: SubscriptionCreateRequest,
  response: SubscriptionCreateResponse,
}

/** Endpoint 7, subscription update. */
export const subscriptionUpdate: GatewayOperation<SubscriptionUpdateRequest, SubscriptionUpdateResponse> = {
  name: 'subscriptionUpdate',
  httpMethod: 'POST',
  retry: 'command',
  request: SubscriptionUpdateRequest,
  response: SubscriptionUpdateResponse,
}

/** Endpoint 8, subscription cancel: the response is the envelope only, without `data`. */
export const subscriptionCancel: GatewayOperation<SubscriptionCancelRequest, null> = {
  name: 'subscriptionCancel',
  httpMethod: 'POST',
  retry: 'command',
  request: SubscriptionCancelRequest,
  response: null,
}

/** Every operation, for code that iterates over them (the sandbox's router, contract tests). */
export const gatewayOperations = [
  directPayment,
  paymentQuery,
  refundQuery,
  checkoutApply,
  subscriptionCreate,
  subscriptionUpdate,
  subscriptionCancel,
] as const
