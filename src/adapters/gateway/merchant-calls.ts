import type { GatewayCall, GatewayPort } from '../../application/ports/gateway.ts'
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
import {
  CHECKOUT_APPLY_SERVICE,
  PAYMENT_QUERY_SERVICE,
  REFUND_QUERY_SERVICE,
  SUBSCRIPTION_CANCEL_SERVICE,
  SUBSCRIPTION_CREATE_SERVICE,
  SUBSCRIPTION_UPDATE_SERVICE,
} from '../../domain/gateway/services.ts'
import { PROTOCOL_VERSION } from './request.ts'

/** Sends one operation (`GatewayClient.call`). */
export type Send = <Req, Res>(operation: GatewayOperation<Req, Res>, request: NoInfer<Req>) => GatewayCall<Res>

/** The convenience methods over `send`, with the spec's operations (src/domain/gateway/operations.ts). */
export const merchantCalls = (send: Send): GatewayPort => ({
  createDirectPayment: (r) => send(directPayment, { ...r, version: PROTOCOL_VERSION }),
  queryPayment: (r) => send(paymentQuery, { ...r, version: PROTOCOL_VERSION, service: PAYMENT_QUERY_SERVICE }),
  queryRefund: (r) => send(refundQuery, { ...r, version: PROTOCOL_VERSION, service: REFUND_QUERY_SERVICE }),
  applyCheckout: (r) => send(checkoutApply, { ...r, version: PROTOCOL_VERSION, service: CHECKOUT_APPLY_SERVICE }),
  createSubscription: (r) => send(subscriptionCreate, { ...r, version: PROTOCOL_VERSION, service: SUBSCRIPTION_CREATE_SERVICE }),
  updateSubscription: (r) => send(subscriptionUpdate, { ...r, version: PROTOCOL_VERSION, service: SUBSCRIPTION_UPDATE_SERVICE }),
  cancelSubscription: (r) => send(subscriptionCancel, { ...r, version: PROTOCOL_VERSION, service: SUBSCRIPTION_CANCEL_SERVICE }),
})
