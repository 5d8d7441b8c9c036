import * as t from 'io-ts'
import { BangkokDateTimeText } from '../bangkok-time.ts'
import { AmountText } from '../money.ts'
import { checkedRecord, isSent, oneOfRequired, recordOf, type CrossCheck, type FieldIssue } from './checked-record.ts'
import { describeCase, isMethodOf } from './direct-payment-methods.ts'
import { Currency, digits, GatewayOrderId, MerchantId, MerchantOrderId, StatusCode } from './fields.ts'
import type { DirectService } from './services.ts'
import { absentable, anyText, text } from './text-codecs.ts'

const PAY_PARAMS_TEXT = text('pay_params', 1024)

/** `pay_params` is declared string(1024) but the samples send an object: both decode, unchanged. */
export const PayParams = new t.Type<string | Readonly<Record<string, unknown>>, string | Readonly<Record<string, unknown>>, unknown>(
  'PayParams',
  (u): u is string | Readonly<Record<string, unknown>> => t.UnknownRecord.is(u) || PAY_PARAMS_TEXT.is(u),
  (u, c) => {
    if (t.UnknownRecord.is(u)) return t.success(u)
    if (u !== undefined && typeof u !== 'string') return t.failure(u, c, 'must be an object or a string')
    return PAY_PARAMS_TEXT.validate(u, c)
  },
  t.identity,
)

/** Fields of the endpoint 1 response whose presence depends on the service and payment_method. */
export const DIRECT_RESPONSE_CONDITIONAL_FIELDS = [
  'create_time',
  'order_create_time',
  'pay_params',
  'req_data_to_channel',
  'qr_code',
  'qr_code_expire_sec',
  'link_url',
  'link_url_app',
  'link_url_expire_sec',
  'due_date',
  'payment_type',
] as const
export type DirectResponseConditionalField = (typeof DIRECT_RESPONSE_CONDITIONAL_FIELDS)[number]

const BASE_REQUIRED = ['order_id', 'order_status', 'order_amount', 'order_currency'] as const
const BASE_OPTIONAL = ['merchant_id', 'merchant_order_id'] as const
export type DirectResponseField = (typeof BASE_REQUIRED)[number] | (typeof BASE_OPTIONAL)[number] | DirectResponseConditionalField

const response = recordOf('DirectPaymentResponse', {
  required: {
    order_id: GatewayOrderId,
    order_status: StatusCode,
    order_amount: AmountText,
    order_currency: Currency,
  },
  optional: {
    merchant_id: absentable(MerchantId),
    merchant_order_id: absentable(MerchantOrderId),
    create_time: absentable(BangkokDateTimeText),
    order_create_time: absentable(BangkokDateTimeText),
    pay_params: absentable(PayParams),
    req_data_to_channel: absentable(text('req_data_to_channel', 2048)),
    qr_code: absentable(text('qr_code', 2048)),
    qr_code_expire_sec: absentable(digits('qr_code_expire_sec', 8)),
    link_url: absentable(text('link_url', 256)),
    link_url_app: absentable(text('link_url_app', 256)),
    link_url_expire_sec: absentable(digits('link_url_expire_sec', 8)),
    due_date: absentable(BangkokDateTimeText),
    payment_type: absentable(anyText('payment_type')),
  },
})

type Expectation = {
  readonly required: ReadonlyArray<DirectResponseConditionalField>
  readonly optional: ReadonlyArray<DirectResponseConditionalField>
}

const LINKS: Expectation = { required: ['create_time', 'link_url'], optional: [] }
const NOTHING: Expectation = { required: ['create_time'], optional: [] }
const PAY_PARAMS: Expectation = { required: ['create_time', 'pay_params'], optional: [] }

const withOptional = (e: Expectation, ...optional: DirectResponseConditionalField[]): Expectation => ({
  required: e.required,
  optional: [...e.optional, ...optional],
})

/** Endpoint 1, "Response data": which conditional fields a listed service/payment_method returns. */
const conditionalFor = (service: DirectService, method: string): Expectation => {
  switch (service) {
    case 'svc.wallet_a.offline.pay': {
      // The time field is named order_create_time here (create_time is accepted in its place on decode);
      // due_date and the payment_type echo are "seen" on this service.
      const base: Expectation = { required: ['order_create_time'], optional: ['create_time', 'due_date', 'payment_type'] }
      // link_url "for DYNAMIC_CODE (and INAPP_PAYMENT)": required for the first, optional for the second,
      // where pay_params ("also returned for ... INAPP_PAYMENT") carries what the payer needs.
      if (method === 'DYNAMIC_CODE') return { required: [...base.required, 'link_url'], optional: base.optional }
      if (method === 'INAPP_PAYMENT') return { required: [...base.required, 'pay_params'], optional: [...base.optional, 'link_url'] }
      return base
    }
    case 'svc.wallet_a.pay':
      // due_date is "seen" on wallet_a.
      if (method === 'APP_PAYMENT') return { required: ['create_time', 'req_data_to_channel'], optional: ['due_date'] }
      return withOptional(LINKS, 'due_date')
    case 'svc.wallet_b.pay':
      if (method === 'INAPP_PAYMENT' || method === 'APP_PAYMENT') return PAY_PARAMS
      if (method === 'MERCHANT_SCAN') return NOTHING // "carry no link"
      return LINKS // H5_PAYMENT, DYNAMIC_CODE
    case 'svc.thaiqr.pay':
      return { required: ['create_time', 'qr_code', 'qr_code_expire_sec'], optional: [] }
    case 'svc.mobile.banking.pay':
      return method.startsWith('BANKAPP_C_') ? LINKS : NOTHING // BANKAPP_A/B notification methods "return no link"
    case 'svc.wallet_c.pay':
    case 'svc.wallet_e.pay':
      return { required: ['create_time', 'link_url', 'link_url_app', 'link_url_expire_sec'], optional: [] }
    case 'svc.wallet_d.pay':
      // link_url_app "may be null" on wallet_d.
      return { required: ['create_time', 'link_url', 'link_url_expire_sec'], optional: ['link_url_app'] }
    case 'svc.wallet_f.pay':
      // The spec lists wallet_f among the services returning link_url and link_url_app, and also says its
      // response "carries no link": both readings decode, so both links are optional.
      return { required: ['create_time'], optional: ['link_url', 'link_url_app'] }
    case 'svc.bankcard.pay':
    case 'svc.direct-debit.pay':
      // Their methods and responses are "not shown": a link may come, nothing else is expected.
      return { required: ['create_time'], optional: ['link_url'] }
  }
}

const timeFields: ReadonlySet<DirectResponseConditionalField> = new Set(['create_time', 'order_create_time'])

/** For a payment_method the table does not list, no conditional field is required and none is flagged. */
const expectationFor = (service: DirectService, method: string): Expectation =>
  isMethodOf(service, method)
    ? conditionalFor(service, method)
    : { required: ['create_time'], optional: DIRECT_RESPONSE_CONDITIONAL_FIELDS.filter((f) => f !== 'create_time') }

/**
 * The fields a direct payment response carries for `service` and `paymentMethod`: `required` must be
 * present, `optional` may be, and every other field of the response table must be absent. The sandbox
 * produces exactly these; `directPaymentResponseFor` checks them.
 */
export const expectedDirectResponseFields = (
  service: DirectService,
  paymentMethod: string,
): { readonly required: ReadonlyArray<DirectResponseField>; readonly optional: ReadonlyArray<DirectResponseField> } => {
  const e = expectationFor(service, paymentMethod)
  return { required: [...BASE_REQUIRED, ...e.required], optional: [...BASE_OPTIONAL, ...e.optional] }
}

const WALLET_A_OFFLINE_TIME = oneOfRequired(['create_time', 'order_create_time'], 'is required (order_create_time is accepted in its place)')

/** Endpoint 1 response `data` for any service and method: conditional fields optional; the time field under either name. */
export const DirectPaymentResponse = checkedRecord(response.codec, [WALLET_A_OFFLINE_TIME])
export type DirectPaymentResponse = t.TypeOf<typeof DirectPaymentResponse>

const expectationCheck =
  (service: DirectService, method: string): CrossCheck =>
  (input) => {
    const { required, optional } = expectationFor(service, method)
    const when = describeCase(service, [method])
    const issues: FieldIssue[] = []
    if (service === 'svc.wallet_a.offline.pay') issues.push(...WALLET_A_OFFLINE_TIME(input))
    for (const field of required) {
      if (!timeFields.has(field) && !isSent(input[field])) issues.push({ path: field, rule: `is required when ${when}` })
    }
    if (service !== 'svc.wallet_a.offline.pay' && !isSent(input.create_time)) issues.push({ path: 'create_time', rule: 'is required' })
    for (const field of DIRECT_RESPONSE_CONDITIONAL_FIELDS) {
      if (isSent(input[field]) && !required.includes(field) && !optional.includes(field)) {
        issues.push({ path: field, rule: `is not returned when ${when}` })
      }
    }
    return issues
  }

/**
 * The decoder of the response to one request: besides every field rule, the conditional fields that
 * `expectedDirectResponseFields` requires must be present and the ones the spec says are absent for
 * this method (a link on wallet_b MERCHANT_SCAN, for instance) are reported.
 */
export const directPaymentResponseFor = (service: DirectService, paymentMethod: string): t.Type<DirectPaymentResponse, t.OutputOf<typeof DirectPaymentResponse>, unknown> =>
  checkedRecord(response.codec, [expectationCheck(service, paymentMethod)], `DirectPaymentResponse(${service}, ${paymentMethod})`)
