import type * as t from 'io-ts'
import { AmountText } from '../money.ts'
import { checkedRecord, recordOf } from './checked-record.ts'
import { Currency, MerchantSubscribeId, SignType, SubscriptionMerchantId } from './fields.ts'
import { paymentOrderKeyFields } from './payment-order.ts'
import { absentable, anyText, oneOf, text } from './text-codecs.ts'

/*
 * The forms the service POSTs to the merchant's `redirect_url`. The signature covers every field except
 * `sign_type` and `sign`, so fields these tables do not name are kept as sent (never stripped or
 * rejected): verification needs them. A redirect is evidence, not the final state (endpoints 5 and 9).
 */

/** Endpoint 5: the checkout redirect form. */
export const CheckoutRedirectForm = checkedRecord(
  recordOf('CheckoutRedirectForm', {
    required: { ...paymentOrderKeyFields, sign_type: SignType, sign: anyText('sign') },
    optional: {},
  }).codec,
)
export type CheckoutRedirectForm = t.TypeOf<typeof CheckoutRedirectForm>

/** Endpoint 9 `status`. */
export const SubscriptionRedirectStatus = oneOf('SubscriptionRedirectStatus', ['SUCCESS', 'FAIL'])

/** Endpoint 9 and Events 2: the subscription notification types. */
export const SubscriptionNotificationType = oneOf('SubscriptionNotificationType', [
  'Created',
  'Created_Deducted',
  'Updated',
  'Updated_Deducted',
  'Deducted',
])

/**
 * Fields of the endpoint 9 form. `merchant_id` is declared string(64) here, string(20) on the other
 * subscription pages and 18 digits in the conventions: the subscription rule (18 to 20 digits starting
 * with 14) applies.
 */
export const subscriptionFormFields = {
  required: {
    merchant_id: SubscriptionMerchantId,
    merchant_subscribe_id: MerchantSubscribeId,
    recurring_bill_id: text('recurring_bill_id', 20),
    status: SubscriptionRedirectStatus,
  },
  optional: {
    billing_amount: absentable(AmountText),
    billing_currency: absentable(Currency),
    type: absentable(SubscriptionNotificationType),
  },
}

/**
 * Endpoint 9: the subscription checkout redirect form (sent after a successful deduction). The spec
 * declares `sign` string(256), but an RSA-2048 signature in base64 is 344 characters (and endpoint 5
 * declares no length): the declared 256 cannot hold the spec's own signature, so `sign` is not capped.
 */
export const SubscriptionRedirectForm = checkedRecord(
  recordOf('SubscriptionRedirectForm', {
    required: { ...subscriptionFormFields.required, sign_type: SignType, sign: anyText('sign') },
    optional: subscriptionFormFields.optional,
  }).codec,
)
export type SubscriptionRedirectForm = t.TypeOf<typeof SubscriptionRedirectForm>
