import type { SignatureResult } from '../events/metadata.ts'
import type { OutcomeUnknownReason, RequestFailure } from '../events/request-outcome.ts'
import type { CheckoutApplyRequest, CheckoutApplyResponse } from '../gateway/checkout.ts'
import type { DirectPaymentRequest } from '../gateway/direct-payment.ts'
import type { DirectPaymentResponse } from '../gateway/direct-payment-response.ts'
import type { PaymentNotification } from '../gateway/notification.ts'
import type { PaymentQueryResponse } from '../gateway/payment-query.ts'
import type { CheckoutRedirectForm } from '../gateway/redirect-forms.ts'
import type { StatusTable } from '../gateway/statuses.ts'
import type { Satang } from '../money.ts'
import type { MerchantUrls, OrderOperation } from './events/order-created.ts'

/*
 * Commands of the order aggregate. The clock (`…At`) and every id arrive on the command; gateway
 * messages arrive decoded by the gateway codecs; the status table is the configured one.
 */

/** A merchant asks for a payment (the merchant API's create direct payment / create checkout). */
export type CreateOrder = {
  readonly type: 'CreateOrder'
  readonly merchantId: string
  readonly storeId: string | null
  readonly merchantOrderId: string
  readonly operation: OrderOperation
  /** A direct service (`svc.thaiqr.pay`, …) or `svc.checkout.apply`. */
  readonly service: string
  readonly paymentMethod: string | null
  readonly productCode: string | null
  readonly amount: Satang
  readonly currency: string
  readonly orderDesc: string
  readonly merchantUrls: MerchantUrls
  readonly createdAt: Date
}

/** The create about to be sent: record it before sending. `body` is the request exactly as it will be signed and sent. */
export type RequestPayment = {
  readonly type: 'RequestPayment'
  readonly request:
    | { readonly operation: 'direct'; readonly body: DirectPaymentRequest }
    | { readonly operation: 'checkout'; readonly body: CheckoutApplyRequest }
  readonly requestedAt: Date
}

/** The gateway accepted the create: the envelope's `data` and `trace_id`. */
export type RecordPaymentAccepted = {
  readonly type: 'RecordPaymentAccepted'
  readonly response: DirectPaymentResponse | CheckoutApplyResponse
  readonly traceId: string
  readonly receivedAt: Date
  readonly statusTable: StatusTable
}

export type RecordPaymentRequestFailed = {
  readonly type: 'RecordPaymentRequestFailed'
  readonly failure: RequestFailure
  readonly failedAt: Date
}

export type RecordPaymentOutcomeUnknown = {
  readonly type: 'RecordPaymentOutcomeUnknown'
  readonly reason: OutcomeUnknownReason
  readonly httpStatus: number | null
  readonly traceId: string | null
  readonly since: Date
}

/** A payment query answered (endpoint 2): authority. */
export type ObservePaymentByQuery = {
  readonly type: 'ObservePaymentByQuery'
  readonly answer: PaymentQueryResponse
  readonly traceId: string | null
  readonly observedAt: Date
  readonly statusTable: StatusTable
}

/** A payment query answered "not found" (a configured not-found code): evidence, changes no status. */
export type ObservePaymentNotFound = {
  readonly type: 'ObservePaymentNotFound'
  readonly code: number
  readonly message: string
  readonly traceId: string
  readonly observedAt: Date
}

/** A PAYMENT notification, with the result of verifying its signature: authority when it verified. */
export type ReceivePaymentNotification = {
  readonly type: 'ReceivePaymentNotification'
  readonly notification: PaymentNotification
  readonly signature: SignatureResult
  /** This delivery attempt (the application's request id); keys the CallbackRejected of a bad signature. */
  readonly callbackId: string
  readonly receivedAt: Date
  readonly statusTable: StatusTable
}

/** The checkout redirect form (endpoint 5), with its signature result: evidence only. */
export type ReceiveCheckoutRedirect = {
  readonly type: 'ReceiveCheckoutRedirect'
  readonly form: CheckoutRedirectForm
  readonly signature: SignatureResult
  readonly callbackId: string
  readonly receivedAt: Date
}

export type OrderCommand =
  | CreateOrder
  | RequestPayment
  | RecordPaymentAccepted
  | RecordPaymentRequestFailed
  | RecordPaymentOutcomeUnknown
  | ObservePaymentByQuery
  | ObservePaymentNotFound
  | ReceivePaymentNotification
  | ReceiveCheckoutRedirect
