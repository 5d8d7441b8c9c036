import type { SignatureResult } from '../events/metadata.ts'
import type { OutcomeUnknownReason, RequestFailure } from '../events/request-outcome.ts'
import type { SubscriptionNotification } from '../gateway/notification.ts'
import type { SubscriptionRedirectForm } from '../gateway/redirect-forms.ts'
import type {
  SubscriptionCancelRequest,
  SubscriptionCreateRequest,
  SubscriptionCreateResponse,
  SubscriptionUpdateRequest,
  SubscriptionUpdateResponse,
} from '../gateway/subscription.ts'
import type { SubscriptionMerchantUrls } from './events/subscription-requested.ts'

/** A create about to be sent (endpoint 6); record it before sending. `request` is the body as it will be sent. */
export type RequestSubscription = {
  readonly type: 'RequestSubscription'
  readonly request: SubscriptionCreateRequest
  readonly merchantUrls: SubscriptionMerchantUrls
  readonly requestedAt: Date
}

/** An update about to be sent (endpoint 7). */
export type RequestSubscriptionUpdate = {
  readonly type: 'RequestSubscriptionUpdate'
  readonly request: SubscriptionUpdateRequest
  readonly requestedAt: Date
}

/** A cancel about to be sent (endpoint 8). Deciding no events means there is nothing to send (already cancelled). */
export type RequestSubscriptionCancel = {
  readonly type: 'RequestSubscriptionCancel'
  readonly request: SubscriptionCancelRequest
  readonly requestedAt: Date
}

export type RecordSubscriptionCreated = {
  readonly type: 'RecordSubscriptionCreated'
  readonly response: SubscriptionCreateResponse
  readonly traceId: string
  readonly receivedAt: Date
}

export type RecordSubscriptionUpdated = {
  readonly type: 'RecordSubscriptionUpdated'
  readonly response: SubscriptionUpdateResponse
  readonly traceId: string
  readonly receivedAt: Date
}

export type RecordSubscriptionCancelled = {
  readonly type: 'RecordSubscriptionCancelled'
  readonly traceId: string | null
  readonly receivedAt: Date
}

/** The pending request definitely did not take effect. */
export type RecordSubscriptionRequestFailed = {
  readonly type: 'RecordSubscriptionRequestFailed'
  readonly failure: RequestFailure
  readonly failedAt: Date
}

export type RecordSubscriptionOutcomeUnknown = {
  readonly type: 'RecordSubscriptionOutcomeUnknown'
  readonly reason: OutcomeUnknownReason
  readonly httpStatus: number | null
  readonly traceId: string | null
  readonly since: Date
}

/** A SUBSCRIPTION notification with its signature result: authority when it verified. */
export type ReceiveSubscriptionNotification = {
  readonly type: 'ReceiveSubscriptionNotification'
  readonly notification: SubscriptionNotification
  readonly signature: SignatureResult
  readonly callbackId: string
  readonly receivedAt: Date
}

/** The subscription redirect form (endpoint 9) with its signature result: evidence only. */
export type ReceiveSubscriptionRedirect = {
  readonly type: 'ReceiveSubscriptionRedirect'
  readonly form: SubscriptionRedirectForm
  readonly signature: SignatureResult
  readonly callbackId: string
  readonly receivedAt: Date
}

export type SubscriptionCommand =
  | RequestSubscription
  | RequestSubscriptionUpdate
  | RequestSubscriptionCancel
  | RecordSubscriptionCreated
  | RecordSubscriptionUpdated
  | RecordSubscriptionCancelled
  | RecordSubscriptionRequestFailed
  | RecordSubscriptionOutcomeUnknown
  | ReceiveSubscriptionNotification
  | ReceiveSubscriptionRedirect
