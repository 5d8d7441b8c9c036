import type * as t from 'io-ts'
import { BangkokDateTimeText } from '../bangkok-time.ts'
import { AmountText } from '../money.ts'
import { checkedRecord, onlyFields, recordOf } from './checked-record.ts'
import { Currency, GatewayOrderId, MerchantId, MerchantOrderId, MerchantRefundId, StatusCode, Version } from './fields.ts'
import { REFUND_QUERY_SERVICE } from './services.ts'
import { absentable, oneOf, text } from './text-codecs.ts'

const request = recordOf('RefundQueryRequest', {
  required: {
    version: Version,
    service: oneOf('service', [REFUND_QUERY_SERVICE]),
    merchant_id: MerchantId,
    merchant_refund_id: MerchantRefundId,
  },
  optional: {},
})

/** Endpoint 3 query parameters (GET): all four required, nothing else. */
export const RefundQueryRequest = checkedRecord(request.codec, [onlyFields(() => ({ fields: request.fields, owner: REFUND_QUERY_SERVICE }))])
export type RefundQueryRequest = t.TypeOf<typeof RefundQueryRequest>

/** Required fields of the Refund record resource. */
export const refundRecordRequiredFields = {
  merchant_id: MerchantId,
  merchant_refund_id: MerchantRefundId,
  merchant_order_id: MerchantOrderId,
  order_id: GatewayOrderId,
  refund_order_id: GatewayOrderId,
  refund_amount: AmountText,
  refund_currency: Currency,
  refund_status: StatusCode,
  create_time: BangkokDateTimeText,
}

/** Optional fields of the Refund record resource (may come as null or ""). */
export const refundRecordOptionalFields = {
  refund_reason: absentable(text('refund_reason', 256)),
  // An echo of what the merchant registered: only its declared length is checked.
  notify_url: absentable(text('notify_url', 256)),
  complete_time: absentable(BangkokDateTimeText),
}

/** Refund record, the endpoint 3 response `data`. Fields the table does not name are kept. */
export const RefundRecord = checkedRecord(
  recordOf('RefundRecord', { required: refundRecordRequiredFields, optional: refundRecordOptionalFields }).codec,
)
export type RefundRecord = t.TypeOf<typeof RefundRecord>
