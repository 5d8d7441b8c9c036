import type * as t from 'io-ts'
import { checkedRecord, onlyFields, recordOf, type CrossCheck, type FieldIssue } from './checked-record.ts'
import { Card, Client, Customer, Products } from './customer.ts'
import { describeCase, methodRule } from './direct-payment-methods.ts'
import { ChargeAmount, HttpUrl, MerchantId, MerchantOrderId, RequestCurrency, ThaiMobileNumber, Version } from './fields.ts'
import { DirectService, isDirectService } from './services.ts'
import { anyText, text } from './text-codecs.ts'

const WALLET_A_OFFLINE = 'svc.wallet_a.offline.pay'

/** Endpoint 1 request body, with the Len column of its table. */
const direct = recordOf('DirectPaymentRequest', {
  required: {
    version: Version,
    service: DirectService,
    merchant_id: MerchantId,
    merchant_order_id: MerchantOrderId,
    order_amount: ChargeAmount,
    order_currency: RequestCurrency,
  },
  optional: {
    store_id: MerchantId,
    // order_desc is required, but the samples carry order_info in place of it (or next to it); see orderDescCheck.
    order_desc: text('order_desc', 256),
    // order_info has no declared length; it stands for order_desc, so order_desc's 256 applies.
    order_info: text('order_info', 256),
    product_code: text('product_code', 32),
    // Required, but svc.wallet_a.offline.pay samples send payment_type instead; see paymentMethodCheck.
    payment_method: text('payment_method', 32),
    payment_type: text('payment_type', 32),
    user_id: anyText('user_id'),
    customer: Customer,
    products: Products,
    notify_url: HttpUrl,
    redirect_url: HttpUrl,
    buyer_identity_code: text('buyer_identity_code', 32),
    auth_code: text('auth_code', 20),
    appid: text('appid', 20),
    openid: text('openid', 32),
    client: Client,
    card: Card,
    app_callback_url: text('app_callback_url', 256),
    mobile_number: ThaiMobileNumber,
    link_account_id: text('link_account_id', 18),
  },
})

/** Fields only the svc.wallet_a.offline.pay samples carry (payment_type for payment_method; user_id with INAPP_PAYMENT). */
const WALLET_A_OFFLINE_QUIRK_FIELDS: ReadonlySet<string> = new Set(['payment_type', 'user_id'])

/**
 * Endpoint 1 fields marked "conditional ... Only for": required in that case, rejected in every other.
 * `methods` absent means every payment_method of the service.
 */
export const DIRECT_CONDITIONAL_FIELDS: ReadonlyArray<{
  readonly field: string
  readonly service: DirectService
  readonly methods?: ReadonlyArray<string>
}> = [
  { field: 'buyer_identity_code', service: 'svc.wallet_a.offline.pay', methods: ['MERCHANT_SCAN'] },
  { field: 'auth_code', service: 'svc.wallet_b.pay', methods: ['MERCHANT_SCAN'] },
  { field: 'appid', service: 'svc.wallet_b.pay', methods: ['INAPP_PAYMENT', 'APP_PAYMENT'] },
  { field: 'openid', service: 'svc.wallet_b.pay', methods: ['INAPP_PAYMENT'] },
  { field: 'client', service: 'svc.wallet_b.pay', methods: ['H5_PAYMENT'] },
  { field: 'card', service: 'svc.bankcard.pay' },
  { field: 'app_callback_url', service: 'svc.mobile.banking.pay', methods: ['BANKAPP_C_BILL', 'BANKAPP_C_CREDIT', 'BANKAPP_C_ALL'] },
  { field: 'mobile_number', service: 'svc.mobile.banking.pay', methods: ['BANKAPP_A_NOTIFICATION', 'BANKAPP_B_NOTIFICATION'] },
]

/** The payment_method of a raw request, taking the wallet_a offline `payment_type` quirk into account. */
const rawMethodOf = (input: Readonly<Record<string, unknown>>): string | undefined => {
  if (typeof input.payment_method === 'string') return input.payment_method
  if (input.service === WALLET_A_OFFLINE && typeof input.payment_type === 'string') return input.payment_type
  return undefined
}

/** payment_method is required and must belong to the service (service/payment_method table). */
const paymentMethodCheck: CrossCheck = (input) => {
  const { service, payment_method: method, payment_type: type } = input
  const quirk = service === WALLET_A_OFFLINE
  if (method === undefined && !(quirk && type !== undefined)) {
    return [{ path: 'payment_method', rule: quirk ? `is required (payment_type is accepted in its place)` : 'is required' }]
  }
  if (!isDirectService(service)) return []
  const issues: FieldIssue[] = []
  if (typeof method === 'string') {
    const rule = methodRule(service, method)
    if (rule !== undefined) issues.push({ path: 'payment_method', rule })
  }
  if (quirk && typeof type === 'string') {
    if (typeof method === 'string' && method !== type) issues.push({ path: 'payment_type', rule: 'must equal payment_method when both are sent' })
    const rule = method === undefined ? methodRule(service, type) : undefined
    if (rule !== undefined) issues.push({ path: 'payment_type', rule })
  }
  return issues
}

/** order_desc is required; the samples' order_info is accepted in its place. */
const orderDescCheck: CrossCheck = (input) =>
  input.order_desc === undefined && input.order_info === undefined ? [{ path: 'order_desc', rule: 'is required (order_info is accepted in its place)' }] : []

/** `customer`: optional when service is svc.wallet_a.offline.pay, required otherwise. */
const customerCheck: CrossCheck = (input) =>
  input.customer === undefined && isDirectService(input.service) && input.service !== WALLET_A_OFFLINE
    ? [{ path: 'customer', rule: `is required unless service is ${WALLET_A_OFFLINE}` }]
    : []

/** `link_account_id`: "no; required only for svc.direct-debit.pay" — optional on the other services. */
const linkAccountCheck: CrossCheck = (input) =>
  input.link_account_id === undefined && input.service === 'svc.direct-debit.pay'
    ? [{ path: 'link_account_id', rule: 'is required when service is svc.direct-debit.pay' }]
    : []

const conditionalFieldsCheck: CrossCheck = (input) => {
  const service = input.service
  if (!isDirectService(service)) return []
  const method = rawMethodOf(input)
  return DIRECT_CONDITIONAL_FIELDS.flatMap(({ field, service: only, methods }) => {
    const applies = service === only && (methods === undefined || (method !== undefined && methods.includes(method)))
    const sent = input[field] !== undefined
    if (applies && !sent) return [{ path: field, rule: `is required when ${describeCase(only, methods)}` }]
    if (!applies && sent) return [{ path: field, rule: `is only allowed when ${describeCase(only, methods)}` }]
    return []
  })
}

const unknownFieldsCheck = onlyFields((input) => {
  const service = input.service
  const quirk = service === WALLET_A_OFFLINE
  return {
    fields: quirk ? direct.fields : new Set([...direct.fields].filter((f) => !WALLET_A_OFFLINE_QUIRK_FIELDS.has(f))),
    owner: isDirectService(service) ? service : 'a direct payment request',
  }
})

/**
 * Endpoint 1, create payment (direct), for all 11 services: every field rule, the service/payment_method
 * table, every conditional field, and the quirks of the samples. The decoded value is the wire body.
 */
export const DirectPaymentRequest = checkedRecord(direct.codec, [
  paymentMethodCheck,
  orderDescCheck,
  customerCheck,
  linkAccountCheck,
  conditionalFieldsCheck,
  unknownFieldsCheck,
])
export type DirectPaymentRequest = t.TypeOf<typeof DirectPaymentRequest>

/** The request's payment_method (`payment_type` on svc.wallet_a.offline.pay samples); decoding guarantees one. */
export const paymentMethodOf = (r: DirectPaymentRequest): string | undefined => r.payment_method ?? r.payment_type

/** The request's description: order_desc, or the samples' order_info; decoding guarantees one. */
export const orderDescOf = (r: DirectPaymentRequest): string | undefined => r.order_desc ?? r.order_info
