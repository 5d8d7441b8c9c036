import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { CheckoutApplyRequest, CheckoutApplyResponse } from '../../domain/gateway/checkout.ts'
import type { DirectPaymentResponse } from '../../domain/gateway/direct-payment-response.ts'
import type { DirectPaymentRequest } from '../../domain/gateway/direct-payment.ts'
import type { GatewayOperation } from '../../domain/gateway/operation.ts'
import {
  checkoutApply,
  directPayment,
  paymentQuery,
  refundQuery,
  subscriptionCancel,
  subscriptionCreate,
  subscriptionUpdate,
} from '../../domain/gateway/operations.ts'
import type { PaymentQueryRequest, PaymentQueryResponse } from '../../domain/gateway/payment-query.ts'
import type { RefundQueryRequest, RefundRecord } from '../../domain/gateway/refund-query.ts'
import {
  CHECKOUT_APPLY_SERVICE,
  PAYMENT_QUERY_SERVICE,
  REFUND_QUERY_SERVICE,
  SUBSCRIPTION_CANCEL_SERVICE,
  SUBSCRIPTION_CREATE_SERVICE,
  SUBSCRIPTION_UPDATE_SERVICE,
} from '../../domain/gateway/services.ts'
import type {
  SubscriptionCancelRequest,
  SubscriptionCreateRequest,
  SubscriptionCreateResponse,
  SubscriptionUpdateRequest,
  SubscriptionUpdateResponse,
} from '../../domain/gateway/subscription.ts'
import type { GatewayError } from './errors.ts'
import type { GatewayResult } from './result.ts'
import { PROTOCOL_VERSION } from './request.ts'

/** A request without the fields the client fills in itself: `version`, and `service` where it is fixed. */
type Fields<R, Filled extends string> = Omit<R, Filled>

type Call<Res> = TE.TaskEither<GatewayError, GatewayResult<Res>>

/** Sends one operation (`GatewayClient.call`). */
export type Send = <Req, Res>(operation: GatewayOperation<Req, Res>, request: NoInfer<Req>) => Call<Res>

/** One method per operation a merchant calls; each adds `version` (and `service` where it is fixed). */
export type MerchantCalls = {
  /** Endpoint 1, for all 11 direct services: `service` names the channel. */
  readonly createDirectPayment: (request: Fields<DirectPaymentRequest, 'version'>) => Call<DirectPaymentResponse>
  readonly queryPayment: (request: Fields<PaymentQueryRequest, 'version' | 'service'>) => Call<PaymentQueryResponse>
  readonly queryRefund: (request: Fields<RefundQueryRequest, 'version' | 'service'>) => Call<RefundRecord>
  readonly applyCheckout: (request: Fields<CheckoutApplyRequest, 'version' | 'service'>) => Call<CheckoutApplyResponse>
  readonly createSubscription: (request: Fields<SubscriptionCreateRequest, 'version' | 'service'>) => Call<SubscriptionCreateResponse>
  readonly updateSubscription: (request: Fields<SubscriptionUpdateRequest, 'version' | 'service'>) => Call<SubscriptionUpdateResponse>
  readonly cancelSubscription: (request: Fields<SubscriptionCancelRequest, 'version' | 'service'>) => Call<null>
}

/** The convenience methods over `send`, with the spec's operations (src/domain/gateway/operations.ts). */
export const merchantCalls = (send: Send): MerchantCalls => ({
  createDirectPayment: (r) => send(directPayment, { ...r, version: PROTOCOL_VERSION }),
  queryPayment: (r) => send(paymentQuery, { ...r, version: PROTOCOL_VERSION, service: PAYMENT_QUERY_SERVICE }),
  queryRefund: (r) => send(refundQuery, { ...r, version: PROTOCOL_VERSION, service: REFUND_QUERY_SERVICE }),
  applyCheckout: (r) => send(checkoutApply, { ...r, version: PROTOCOL_VERSION, service: CHECKOUT_APPLY_SERVICE }),
  createSubscription: (r) => send(subscriptionCreate, { ...r, version: PROTOCOL_VERSION, service: SUBSCRIPTION_CREATE_SERVICE }),
  updateSubscription: (r) => send(subscriptionUpdate, { ...r, version: PROTOCOL_VERSION, service: SUBSCRIPTION_UPDATE_SERVICE }),
  cancelSubscription: (r) => send(subscriptionCancel, { ...r, version: PROTOCOL_VERSION, service: SUBSCRIPTION_CANCEL_SERVICE }),
})
