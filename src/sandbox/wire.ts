import type { SandboxOrder, SandboxRefund, SandboxSubscription } from './state.ts'

/*
 * The sandbox's records as the gateway's wire fields: the Payment order of queries and notifications,
 * the endpoint 5 and 9 forms (unsigned here), the Refund record.
 */

type Fields = Record<string, unknown>
/** Notification fields are flat text (the notifier adds `notify_type`, `sign_type` and `sign`). */
type TextFields = Record<string, string>

const optional = <V>(name: string, value: V | undefined): Record<string, V> => (value === undefined ? {} : { [name]: value })

/** Endpoint 5: the fields of the checkout redirect form, before `sign_type` and `sign`. */
export const checkoutFormFields = (o: SandboxOrder): TextFields => ({
  merchant_id: o.merchantId,
  merchant_order_id: o.merchantOrderId,
  order_id: o.orderId,
  order_amount: o.amount,
  order_status: o.status,
  order_currency: o.currency,
})

/** Endpoint 2 response `data`: the required fields, then the optional ones the order has. */
export const paymentQueryData = (o: SandboxOrder): Fields => ({
  ...checkoutFormFields(o),
  order_desc: o.description,
  create_time: o.createTime,
  ...optional('product_code', o.productCode),
  ...optional('payment_method', o.paymentMethod),
  ...optional('customer', o.customer),
  ...optional('products', o.products),
  ...optional('complete_time', o.completeTime),
})

/** A PAYMENT notification: the endpoint 5 fields and the other order fields (no payer data). */
export const paymentNotification = (o: SandboxOrder): TextFields => ({
  ...checkoutFormFields(o),
  order_desc: o.description,
  create_time: o.createTime,
  ...optional('product_code', o.productCode),
  ...optional('payment_method', o.paymentMethod),
  ...optional('complete_time', o.completeTime),
})

/** The Refund record (endpoint 3 response `data`). */
export const refundRecord = (r: SandboxRefund): TextFields => ({
  merchant_id: r.merchantId,
  merchant_refund_id: r.merchantRefundId,
  merchant_order_id: r.merchantOrderId,
  order_id: r.orderId,
  refund_order_id: r.refundOrderId,
  refund_amount: r.amount,
  refund_currency: r.currency,
  refund_status: r.status,
  ...optional('refund_reason', r.reason),
  ...optional('notify_url', r.notifyUrl),
  create_time: r.createTime,
  ...optional('complete_time', r.completeTime),
})

/** A REFUND notification: the Refund record. */
export const refundNotification = (r: SandboxRefund): TextFields => refundRecord(r)

export type SubscriptionEventType = 'Created' | 'Created_Deducted' | 'Updated' | 'Updated_Deducted' | 'Deducted'

/** Endpoint 9: the fields of the subscription redirect form, before `sign_type` and `sign`. */
export const subscriptionFormFields = (s: SandboxSubscription, type: SubscriptionEventType, status: 'SUCCESS' | 'FAIL'): TextFields => ({
  merchant_id: s.merchantId,
  merchant_subscribe_id: s.merchantSubscribeId,
  recurring_bill_id: s.recurringBillId,
  status,
  billing_amount: s.billingAmount,
  billing_currency: s.billingCurrency,
  type,
})

/**
 * A SUBSCRIPTION notification: the endpoint 9 fields plus `recurring_bill_status` (our addition, so the
 * merchant learns of SUSPEND), and for a deduction the billing `billing_date` it was for.
 */
export const subscriptionNotification = (
  s: SandboxSubscription,
  type: SubscriptionEventType,
  status: 'SUCCESS' | 'FAIL',
  billingDate?: string,
): TextFields => ({
  ...subscriptionFormFields(s, type, status),
  recurring_bill_status: s.status,
  ...optional('billing_date', billingDate),
})
