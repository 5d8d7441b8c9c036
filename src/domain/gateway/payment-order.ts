import { BangkokDateTimeText } from '../bangkok-time.ts'
import { AmountText } from '../money.ts'
import { oneOfRequired } from './checked-record.ts'
import { Customer, Products } from './customer.ts'
import { Currency, GatewayOrderId, MerchantId, MerchantOrderId, StatusCode } from './fields.ts'
import { absentable, text, textWith } from './text-codecs.ts'

/** Payment order fields that identify the order and its state (also the fields of the endpoint 5 form). */
export const paymentOrderKeyFields = {
  merchant_id: MerchantId,
  merchant_order_id: MerchantOrderId,
  order_id: GatewayOrderId,
  order_status: StatusCode,
  order_amount: AmountText,
  order_currency: Currency,
}

/** The other fields of the Payment order resource, as the gateway sends them (optional, may be null or ""). */
export const paymentOrderOtherFields = {
  // A wallet_a.offline order may have been created with order_info only, so an empty description is accepted.
  order_desc: absentable(textWith('order_desc', [], true)),
  // Len "32 (64 in the query response)": we accept the larger value wherever the gateway sends it.
  product_code: absentable(text('product_code', 64)),
  payment_method: absentable(text('payment_method', 64)),
  customer: absentable(Customer),
  products: absentable(Products),
  create_time: absentable(BangkokDateTimeText),
  // "On wallet_a offline payments the field is named order_create_time".
  order_create_time: absentable(BangkokDateTimeText),
  complete_time: absentable(BangkokDateTimeText),
  due_date: absentable(BangkokDateTimeText),
}

/** `create_time` is required; `order_create_time` (wallet_a offline) is accepted in its place. */
export const creationTimeCheck = oneOfRequired(['create_time', 'order_create_time'], 'is required (order_create_time is accepted in its place)')
