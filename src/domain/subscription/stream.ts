import * as E from 'fp-ts/lib/Either.js'
import { bangkokDateOf, formatCalendarDate, parseCalendarDate } from '../bangkok-time.ts'
import { keyOf } from '../events/natural-key.ts'
import type { SubscriptionEvent } from './events/index.ts'

/** The stream of one subscription: `subscription-<merchant_id>-<merchant_subscribe_id>`. */
export const subscriptionStreamName = (merchantId: string, merchantSubscribeId: string): string => `subscription-${merchantId}-${merchantSubscribeId}`

// `s`: the id may hold line breaks (\n, \r, U+2028, U+2029 are text the gateway allows), which `.` alone does not match.
const SUBSCRIPTION_STREAM = /^subscription-(14\d{16,18})-(.+)$/s

export const parseSubscriptionStreamName = (stream: string): { readonly merchantId: string; readonly merchantSubscribeId: string } | null => {
  const m = SUBSCRIPTION_STREAM.exec(stream)
  return m === null || m[1] === undefined || m[2] === undefined ? null : { merchantId: m[1], merchantSubscribeId: m[2] }
}

/** The fields of a subscription notification or redirect form (endpoint 9) that identify it. */
export type SubscriptionCallbackFields = {
  readonly merchant_id: string
  readonly merchant_subscribe_id: string
  readonly recurring_bill_id: string
  readonly status: string
  readonly type?: string | null
}

/**
 * The date a subscription callback is about: its `billing_date` when it carries one (a field the spec
 * does not name, which the sandbox adds to deductions), else the Bangkok date it was received. The
 * gateway charges a subscription at most once a day (retries are "on the following day"), so the date
 * tells two identical-looking deductions apart.
 */
export const callbackDateOf = (fields: Readonly<Record<string, unknown>>, receivedAt: Date): string => {
  const billingDate = fields.billing_date
  if (typeof billingDate === 'string' && E.isRight(parseCalendarDate(billingDate))) return billingDate
  return formatCalendarDate(bangkokDateOf(receivedAt))
}

/** The natural key of a subscription callback: source + gateway ids + type + status + date. */
export const subscriptionObservationKey = (origin: 'notification' | 'redirect', f: SubscriptionCallbackFields, date: string): string =>
  keyOf(origin, f.merchant_id, f.merchant_subscribe_id, f.recurring_bill_id, f.type ?? '', f.status, date)

/** Whether a subscription event is a claim: a step of a create, update or cancel request's cycle (see `isOrderClaim`). */
export const isSubscriptionClaim = (e: SubscriptionEvent): boolean => {
  switch (e.type) {
    case 'SubscriptionRequested':
    case 'SubscriptionCreated':
    case 'SubscriptionUpdated':
    case 'SubscriptionCancelled':
    case 'SubscriptionRequestFailed':
    case 'SubscriptionOutcomeUnknown':
      return true
    case 'SubscriptionActivated':
    case 'SubscriptionCharged':
    case 'SubscriptionChargeFailed':
    case 'SubscriptionSuspended':
    case 'NotificationReceived':
    case 'RedirectReceived':
    case 'DiscrepancyObserved':
    case 'CallbackRejected':
      return false
  }
}

/** The natural key of an event of the subscription stream `stream` (see `orderEventNaturalKey`). */
export const subscriptionEventNaturalKey = (stream: string, e: SubscriptionEvent): string => {
  switch (e.type) {
    case 'SubscriptionRequested':
    case 'SubscriptionCreated':
    case 'SubscriptionUpdated':
    case 'SubscriptionCancelled':
    case 'SubscriptionRequestFailed':
    case 'SubscriptionOutcomeUnknown':
      return keyOf(stream, e.type, String(e.data.requestSeq))
    case 'SubscriptionActivated':
    case 'SubscriptionCharged':
    case 'SubscriptionChargeFailed':
    case 'SubscriptionSuspended':
    case 'NotificationReceived':
    case 'RedirectReceived':
    case 'DiscrepancyObserved':
      return keyOf(stream, e.type, e.data.observationKey)
    case 'CallbackRejected':
      return keyOf(stream, e.type, e.data.callbackId)
  }
}
