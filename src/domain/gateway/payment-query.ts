import type * as t from 'io-ts'
import { checkedRecord, onlyFields, recordOf, type CrossCheck } from './checked-record.ts'
import { MerchantId, MerchantOrderId, Version } from './fields.ts'
import { creationTimeCheck, paymentOrderKeyFields, paymentOrderOtherFields } from './payment-order.ts'
import { PAYMENT_QUERY_SERVICE } from './services.ts'
import { oneOf } from './text-codecs.ts'

const request = recordOf('PaymentQueryRequest', {
  required: {
    version: Version,
    service: oneOf('service', [PAYMENT_QUERY_SERVICE]),
    merchant_id: MerchantId,
    merchant_order_id: MerchantOrderId,
  },
  optional: {},
})

/** Endpoint 2 query parameters (GET): all four required, nothing else. */
export const PaymentQueryRequest = checkedRecord(request.codec, [onlyFields(() => ({ fields: request.fields, owner: PAYMENT_QUERY_SERVICE }))])
export type PaymentQueryRequest = t.TypeOf<typeof PaymentQueryRequest>

const response = recordOf('PaymentQueryResponse', { required: paymentOrderKeyFields, optional: paymentOrderOtherFields })

const orderDescCheck: CrossCheck = (input) => (input.order_desc === undefined ? [{ path: 'order_desc', rule: 'is required' }] : [])

/**
 * Endpoint 2 response `data`: merchant_id, merchant_order_id, order_id, order_status, order_amount,
 * order_currency, order_desc and create_time required; product_code, payment_method, customer, products
 * and complete_time optional. Fields the table does not name are kept, not rejected.
 */
export const PaymentQueryResponse = checkedRecord(response.codec, [orderDescCheck, creationTimeCheck])
export type PaymentQueryResponse = t.TypeOf<typeof PaymentQueryResponse>
