import * as t from 'io-ts'
import { checkedRecord, recordOf } from './checked-record.ts'
import { SignType } from './fields.ts'
import { paymentOrderKeyFields, paymentOrderOtherFields } from './payment-order.ts'
import { subscriptionFormFields } from './redirect-forms.ts'
import { refundRecordOptionalFields, refundRecordRequiredFields } from './refund-query.ts'
import { anyText, listOr, oneOf } from './text-codecs.ts'

/*
 * The payload sent to `notify_url` is "not shown". Our default (ARCHITECTURE.md): a JSON POST whose
 * fields are those of the matching redirect form — for payments and refunds the Payment order or
 * Refund record fields — plus `notify_type`, `sign_type` = RSA and `sign` over all the other fields.
 * Fields not named here are kept (they are signed).
 */

const NOTIFY_TYPES = ['PAYMENT', 'REFUND', 'SUBSCRIPTION'] as const
export const NotifyType = oneOf('NotifyType', NOTIFY_TYPES)
export type NotifyType = t.TypeOf<typeof NotifyType>

/** PAYMENT: the fields of the endpoint 5 form are required, the other Payment order fields optional. */
export const PaymentNotification = checkedRecord(
  recordOf('PaymentNotification', {
    required: { notify_type: oneOf('notify_type', ['PAYMENT']), ...paymentOrderKeyFields, sign_type: SignType, sign: anyText('sign') },
    optional: paymentOrderOtherFields,
  }).codec,
)
export type PaymentNotification = t.TypeOf<typeof PaymentNotification>

/** REFUND: the Refund record, with its own required/optional columns. */
export const RefundNotification = checkedRecord(
  recordOf('RefundNotification', {
    required: { notify_type: oneOf('notify_type', ['REFUND']), ...refundRecordRequiredFields, sign_type: SignType, sign: anyText('sign') },
    optional: refundRecordOptionalFields,
  }).codec,
)
export type RefundNotification = t.TypeOf<typeof RefundNotification>

/** SUBSCRIPTION: the fields of the endpoint 9 form (`type` says Created, Deducted, …). */
export const SubscriptionNotification = checkedRecord(
  recordOf('SubscriptionNotification', {
    required: {
      notify_type: oneOf('notify_type', ['SUBSCRIPTION']),
      ...subscriptionFormFields.required,
      sign_type: SignType,
      sign: anyText('sign'),
    },
    optional: subscriptionFormFields.optional,
  }).codec,
)
export type SubscriptionNotification = t.TypeOf<typeof SubscriptionNotification>

export type Notification = PaymentNotification | RefundNotification | SubscriptionNotification

/** Any notification, dispatched on `notify_type` so that the violations are those of the named kind only. */
export const Notification = new t.Type<Notification, t.OutputOf<typeof PaymentNotification> | t.OutputOf<typeof RefundNotification> | t.OutputOf<typeof SubscriptionNotification>, unknown>(
  'Notification',
  (u): u is Notification => PaymentNotification.is(u) || RefundNotification.is(u) || SubscriptionNotification.is(u),
  (u, c) => {
    if (!t.UnknownRecord.is(u)) return t.failure(u, c, 'must be an object')
    switch (u.notify_type) {
      case 'PAYMENT':
        return PaymentNotification.validate(u, c)
      case 'REFUND':
        return RefundNotification.validate(u, c)
      case 'SUBSCRIPTION':
        return SubscriptionNotification.validate(u, c)
      default:
        return t.failure(
          u.notify_type,
          t.appendContext(c, 'notify_type', NotifyType, u.notify_type),
          u.notify_type === undefined ? 'is required' : `must be ${listOr(NOTIFY_TYPES)}`,
        )
    }
  },
  (n) => {
    switch (n.notify_type) {
      case 'PAYMENT':
        return PaymentNotification.encode(n)
      case 'REFUND':
        return RefundNotification.encode(n)
      case 'SUBSCRIPTION':
        return SubscriptionNotification.encode(n)
    }
  },
)
