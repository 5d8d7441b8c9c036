import * as t from 'io-ts'
import { BangkokDateTimeText } from '../bangkok-time.ts'
import { AmountText } from '../money.ts'
import { checkedRecord, onlyFields, recordOf } from './checked-record.ts'
import { Customer, Products } from './customer.ts'
import { ChargeAmount, Currency, GatewayOrderId, HttpUrl, MerchantId, MerchantOrderId, RequestCurrency, StatusCode, Version } from './fields.ts'
import { CHECKOUT_APPLY_SERVICE } from './services.ts'
import { oneOf, text } from './text-codecs.ts'

/** Enumerations: `interest_absorb` (installment merchants only). */
export const InterestAbsorb = oneOf('InterestAbsorb', ['MERCHANT', 'USER'])

const request = recordOf('CheckoutApplyRequest', {
  required: {
    version: Version,
    service: oneOf('service', [CHECKOUT_APPLY_SERVICE]),
    merchant_id: MerchantId,
    merchant_order_id: MerchantOrderId,
    order_amount: ChargeAmount,
    order_currency: RequestCurrency,
    order_desc: text('order_desc', 256),
    customer: Customer,
  },
  optional: {
    store_id: MerchantId,
    product_code: text('product_code', 32),
    // Any method may be named here ("if given, the payer gets that method page"): only its length is checked.
    payment_method: text('payment_method', 32),
    products: Products,
    notify_url: HttpUrl,
    redirect_url: HttpUrl,
    cancel_url: HttpUrl,
    interest_absorb: InterestAbsorb,
    // "list of string" without a length: each id is a bound account id, string(18) as in endpoint 1.
    link_account_id: t.array(text('link_account_id', 18), 'a list of strings'),
  },
})

/** Endpoint 4 request body (`svc.checkout.apply`). Unknown fields are rejected. */
export const CheckoutApplyRequest = checkedRecord(request.codec, [onlyFields(() => ({ fields: request.fields, owner: CHECKOUT_APPLY_SERVICE }))])
export type CheckoutApplyRequest = t.TypeOf<typeof CheckoutApplyRequest>

/** Endpoint 4 response `data`: all required; `link_url` is the checkout page the payer is sent to. */
export const CheckoutApplyResponse = checkedRecord(
  t.type(
    {
      merchant_id: MerchantId,
      merchant_order_id: MerchantOrderId,
      order_id: GatewayOrderId,
      order_status: StatusCode,
      order_amount: AmountText,
      order_currency: Currency,
      create_time: BangkokDateTimeText,
      link_url: text('link_url', 256),
    },
    'CheckoutApplyResponse',
  ),
)
export type CheckoutApplyResponse = t.TypeOf<typeof CheckoutApplyResponse>
