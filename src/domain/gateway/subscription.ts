import * as t from 'io-ts'
import { BangkokDateTimeText, CalendarDateText } from '../bangkok-time.ts'
import { checkedRecord, onlyFields, recordOf, type CrossCheck, type FieldIssue } from './checked-record.ts'
import { Customer } from './customer.ts'
import { ChargeAmount, digits, HttpUrl, MerchantSubscribeId, RequestCurrency, SubscriptionMerchantId, Version } from './fields.ts'
import { SUBSCRIPTION_CANCEL_SERVICE, SUBSCRIPTION_CREATE_SERVICE, SUBSCRIPTION_UPDATE_SERVICE } from './services.ts'
import { SubscriptionStatus } from './statuses.ts'
import { absentable, matches, oneOf, text } from './text-codecs.ts'

/** Enumerations: `interval_type`. */
export const IntervalType = oneOf('IntervalType', ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'])
export type IntervalType = t.TypeOf<typeof IntervalType>

/** Enumerations and Limits 5: `retry` Y (a failed charge is retried the next day, at most 3 attempts) or N. */
export const Retry = oneOf('Retry', ['Y', 'N'])

/** Limits 3: `interval` by `interval_type`. */
export const INTERVAL_LIMITS: Readonly<Record<IntervalType, { readonly min: number; readonly max: number }>> = {
  DAILY: { min: 7, max: 365 },
  WEEKLY: { min: 1, max: 4 },
  MONTHLY: { min: 1, max: 12 },
  YEARLY: { min: 1, max: 1 },
}

/**
 * The spec contradicts itself: `interval` is declared string(2), but Limits allow DAILY up to 365,
 * which has 3 digits. We accept a digit string of up to 3 characters, and 3 only when interval_type
 * is DAILY (intervalCheck).
 */
const Interval = digits('interval', 3)

/** Subscription: `total_terms` string(10), a count (digits), minimum 2 (Limits 4). */
const TotalTerms = text(
  'total_terms',
  10,
  matches(/^\d*$/, 'must contain only digits'),
  (s) => (/^\d+$/.test(s) && Number(s) < 2 ? 'must be at least 2' : undefined),
)

const intervalCheck: CrossCheck = (input) => {
  const { interval_type: type, interval } = input
  if (!IntervalType.is(type) || typeof interval !== 'string' || !/^\d{1,3}$/.test(interval)) return []
  const issues: FieldIssue[] = []
  if (type !== 'DAILY' && interval.length > 2) {
    issues.push({ path: 'interval', rule: 'must be at most 2 characters (3 are accepted only when interval_type is DAILY)' })
  }
  const n = Number(interval)
  const { min, max } = INTERVAL_LIMITS[type]
  if (n < min || n > max) {
    const range = min === max ? String(min) : `between ${String(min)} and ${String(max)}`
    issues.push({ path: 'interval', rule: `must be ${range} when interval_type is ${type}` })
  }
  return issues
}

/** The plan fields that create and update share (update requires the same fields as create). */
const planFields = {
  version: Version,
  merchant_id: SubscriptionMerchantId,
  merchant_subscribe_id: MerchantSubscribeId,
  plan_name: text('plan_name', 255),
  interval_type: IntervalType,
  interval: Interval,
  total_terms: TotalTerms,
  billing_amount: ChargeAmount,
  billing_currency: RequestCurrency,
  retry: Retry,
}
const planOptionalFields = {
  plan_desc: text('plan_desc', 256),
  // yyyy-MM-dd, a real calendar date; absent means "starts at once".
  start_date: CalendarDateText,
}

const create = recordOf('SubscriptionCreateRequest', {
  required: { ...planFields, service: oneOf('service', [SUBSCRIPTION_CREATE_SERVICE]), customer: Customer },
  optional: { ...planOptionalFields, store_id: SubscriptionMerchantId, notify_url: HttpUrl, redirect_url: HttpUrl },
})

/** Endpoint 6 request body (`svc.recurring.create`). */
export const SubscriptionCreateRequest = checkedRecord(create.codec, [
  intervalCheck,
  onlyFields(() => ({ fields: create.fields, owner: SUBSCRIPTION_CREATE_SERVICE })),
])
export type SubscriptionCreateRequest = t.TypeOf<typeof SubscriptionCreateRequest>

const update = recordOf('SubscriptionUpdateRequest', {
  required: { ...planFields, service: oneOf('service', [SUBSCRIPTION_UPDATE_SERVICE]) },
  optional: planOptionalFields,
})

/** Endpoint 7 request body (`svc.recurring.update`): no customer, store_id, notify_url or redirect_url. */
export const SubscriptionUpdateRequest = checkedRecord(update.codec, [
  intervalCheck,
  onlyFields(() => ({ fields: update.fields, owner: SUBSCRIPTION_UPDATE_SERVICE })),
])
export type SubscriptionUpdateRequest = t.TypeOf<typeof SubscriptionUpdateRequest>

const cancel = recordOf('SubscriptionCancelRequest', {
  required: {
    version: Version,
    service: oneOf('service', [SUBSCRIPTION_CANCEL_SERVICE]),
    merchant_id: SubscriptionMerchantId,
    merchant_subscribe_id: MerchantSubscribeId,
  },
  optional: {},
})

/** Endpoint 8 request body (`svc.recurring.cancel`): four fields, all required. */
export const SubscriptionCancelRequest = checkedRecord(cancel.codec, [onlyFields(() => ({ fields: cancel.fields, owner: SUBSCRIPTION_CANCEL_SERVICE }))])
export type SubscriptionCancelRequest = t.TypeOf<typeof SubscriptionCancelRequest>

const responseFields = {
  merchant_id: SubscriptionMerchantId,
  merchant_subscribe_id: MerchantSubscribeId,
  recurring_bill_id: text('recurring_bill_id', 20),
  recurring_bill_status: SubscriptionStatus,
  link_url: text('link_url', 256),
}

/** Endpoint 6 response `data`: all six fields required. */
export const SubscriptionCreateResponse = checkedRecord(
  t.type({ ...responseFields, create_time: BangkokDateTimeText }, 'SubscriptionCreateResponse'),
)
export type SubscriptionCreateResponse = t.TypeOf<typeof SubscriptionCreateResponse>

/** Endpoint 7 response `data`: `create_time` is declared required but absent from the sample, so it is optional. */
export const SubscriptionUpdateResponse = checkedRecord(
  recordOf('SubscriptionUpdateResponse', { required: responseFields, optional: { create_time: absentable(BangkokDateTimeText) } }).codec,
)
export type SubscriptionUpdateResponse = t.TypeOf<typeof SubscriptionUpdateResponse>
