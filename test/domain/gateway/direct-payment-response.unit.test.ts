import { describe, expect, it } from 'vitest'
import { DIRECT_PAYMENT_METHODS } from '../../../src/domain/gateway/direct-payment-methods.ts'
import {
  DIRECT_RESPONSE_CONDITIONAL_FIELDS,
  DirectPaymentResponse,
  PayParams,
  directPaymentResponseFor,
  expectedDirectResponseFields,
  type DirectResponseField,
} from '../../../src/domain/gateway/direct-payment-response.ts'
import { DIRECT_SERVICES, type DirectService } from '../../../src/domain/gateway/services.ts'
import { decoded, MERCHANT_ID, NOW, ORDER_ID, violations, withFields } from './builders.ts'

/** A valid value for every field of the endpoint 1 response table. */
const VALUE: Readonly<Record<DirectResponseField, unknown>> = {
  merchant_id: MERCHANT_ID,
  merchant_order_id: 'ORDER-2026_0001',
  order_id: ORDER_ID,
  order_status: 'WP',
  order_amount: '100.00',
  order_currency: 'THB',
  create_time: NOW,
  order_create_time: NOW,
  pay_params: { tradeNo: '2026010122001400000000000001' },
  req_data_to_channel: 'partner="2088"&seller_id="2088"&out_trade_no="x"',
  qr_code: '00020101021230570016A00000067701011201150105560068127',
  qr_code_expire_sec: '300',
  link_url: 'https://pay.example/checkout/abc',
  link_url_app: 'walletapp://pay?token=abc',
  link_url_expire_sec: '900',
  due_date: '2026-01-01 10:15:00',
  payment_type: 'INAPP_PAYMENT',
}

const valueOf: Readonly<Record<string, unknown>> = VALUE

/** A response carrying exactly `fields`. */
const responseWith = (fields: ReadonlyArray<string>): Record<string, unknown> => Object.fromEntries(fields.map((f) => [f, valueOf[f]]))

const BASE_REQUIRED = ['order_id', 'order_status', 'order_amount', 'order_currency']
const BASE_OPTIONAL = ['merchant_id', 'merchant_order_id']

/** "Response data" of endpoint 1: the conditional fields per service/payment_method. */
const EXPECTED: ReadonlyArray<{ service: DirectService; method: string; required: string[]; optional: string[] }> = [
  { service: 'svc.wallet_a.offline.pay', method: 'MERCHANT_SCAN', required: ['order_create_time'], optional: ['create_time', 'due_date', 'payment_type'] },
  { service: 'svc.wallet_a.offline.pay', method: 'DYNAMIC_CODE', required: ['order_create_time', 'link_url'], optional: ['create_time', 'due_date', 'payment_type'] },
  { service: 'svc.wallet_a.offline.pay', method: 'INAPP_PAYMENT', required: ['order_create_time', 'pay_params'], optional: ['create_time', 'due_date', 'payment_type', 'link_url'] },
  { service: 'svc.wallet_a.pay', method: 'APP_PAYMENT', required: ['create_time', 'req_data_to_channel'], optional: ['due_date'] },
  { service: 'svc.wallet_a.pay', method: 'WEB_PAYMENT', required: ['create_time', 'link_url'], optional: ['due_date'] },
  { service: 'svc.wallet_a.pay', method: 'WAP_PAYMENT', required: ['create_time', 'link_url'], optional: ['due_date'] },
  { service: 'svc.wallet_b.pay', method: 'DYNAMIC_CODE', required: ['create_time', 'link_url'], optional: [] },
  { service: 'svc.wallet_b.pay', method: 'MERCHANT_SCAN', required: ['create_time'], optional: [] },
  { service: 'svc.wallet_b.pay', method: 'INAPP_PAYMENT', required: ['create_time', 'pay_params'], optional: [] },
  { service: 'svc.wallet_b.pay', method: 'APP_PAYMENT', required: ['create_time', 'pay_params'], optional: [] },
  { service: 'svc.wallet_b.pay', method: 'H5_PAYMENT', required: ['create_time', 'link_url'], optional: [] },
  { service: 'svc.thaiqr.pay', method: 'THAI_QR', required: ['create_time', 'qr_code', 'qr_code_expire_sec'], optional: [] },
  { service: 'svc.mobile.banking.pay', method: 'BANKAPP_A_NOTIFICATION', required: ['create_time'], optional: [] },
  { service: 'svc.mobile.banking.pay', method: 'BANKAPP_B_NOTIFICATION', required: ['create_time'], optional: [] },
  { service: 'svc.mobile.banking.pay', method: 'BANKAPP_C_BILL', required: ['create_time', 'link_url'], optional: [] },
  { service: 'svc.mobile.banking.pay', method: 'BANKAPP_C_CREDIT', required: ['create_time', 'link_url'], optional: [] },
  { service: 'svc.mobile.banking.pay', method: 'BANKAPP_C_ALL', required: ['create_time', 'link_url'], optional: [] },
  { service: 'svc.wallet_c.pay', method: 'NORMAL_BALANCE_C', required: ['create_time', 'link_url', 'link_url_app', 'link_url_expire_sec'], optional: [] },
  { service: 'svc.wallet_e.pay', method: 'DIGITAL_BALANCE', required: ['create_time', 'link_url', 'link_url_app', 'link_url_expire_sec'], optional: [] },
  { service: 'svc.wallet_d.pay', method: 'NORMAL_BALANCE_D', required: ['create_time', 'link_url', 'link_url_expire_sec'], optional: ['link_url_app'] },
  { service: 'svc.wallet_f.pay', method: 'DEEPLINK', required: ['create_time'], optional: ['link_url', 'link_url_app'] },
  { service: 'svc.bankcard.pay', method: 'CARD', required: ['create_time'], optional: ['link_url'] },
  { service: 'svc.direct-debit.pay', method: 'DIRECT_DEBIT', required: ['create_time'], optional: ['link_url'] },
]

describe('expectedDirectResponseFields', () => {
  it('covers every listed service/payment_method pair', () => {
    const listed = DIRECT_SERVICES.flatMap((s) => DIRECT_PAYMENT_METHODS[s].map((m) => `${s} ${m}`))
    const covered = EXPECTED.map((e) => `${e.service} ${e.method}`)
    expect(covered).toEqual(expect.arrayContaining(listed))
  })
  it.each(EXPECTED.map((e) => [e.service, e.method, e] as const))('%s %s', (service, method, e) => {
    expect(expectedDirectResponseFields(service, method)).toEqual({ required: [...BASE_REQUIRED, ...e.required], optional: [...BASE_OPTIONAL, ...e.optional] })
  })
})

describe('directPaymentResponseFor: the response of one request', () => {
  const cases = EXPECTED.map((e) => [e.service, e.method] as const)

  it.each(cases)('%s %s: accepts the required fields alone, and with every optional one', (service, method) => {
    const { required, optional } = expectedDirectResponseFields(service, method)
    const codec = directPaymentResponseFor(service, method)
    expect(violations(codec, responseWith(required))).toEqual([])
    expect(violations(codec, responseWith([...required, ...optional]))).toEqual([])
  })

  it.each(cases)('%s %s: rejects each missing required conditional field', (service, method) => {
    const { required } = expectedDirectResponseFields(service, method)
    const codec = directPaymentResponseFor(service, method)
    for (const field of required.filter((f) => !BASE_REQUIRED.includes(f) && f !== 'create_time' && f !== 'order_create_time')) {
      expect(violations(codec, responseWith(required.filter((f) => f !== field)))).toEqual([
        { path: field, rule: `is required when service is ${service} and payment_method is ${method}` },
      ])
    }
  })

  it.each(cases)('%s %s: flags every conditional field the spec says is absent', (service, method) => {
    const { required, optional } = expectedDirectResponseFields(service, method)
    const codec = directPaymentResponseFor(service, method)
    const absent = DIRECT_RESPONSE_CONDITIONAL_FIELDS.filter((f) => !required.includes(f) && !optional.includes(f))
    for (const field of absent) {
      expect(violations(codec, responseWith([...required, field]))).toEqual([
        { path: field, rule: `is not returned when service is ${service} and payment_method is ${method}` },
      ])
    }
  })

  it('flags a link on wallet_b MERCHANT_SCAN ("carry no link")', () => {
    const codec = directPaymentResponseFor('svc.wallet_b.pay', 'MERCHANT_SCAN')
    expect(violations(codec, responseWith([...BASE_REQUIRED, 'create_time', 'link_url']))).toEqual([
      { path: 'link_url', rule: 'is not returned when service is svc.wallet_b.pay and payment_method is MERCHANT_SCAN' },
    ])
  })

  it('requires qr_code and qr_code_expire_sec on THAI_QR and reports both', () => {
    const codec = directPaymentResponseFor('svc.thaiqr.pay', 'THAI_QR')
    expect(violations(codec, responseWith(['order_id', 'order_status', 'order_amount', 'order_currency', 'create_time']))).toEqual([
      { path: 'qr_code', rule: 'is required when service is svc.thaiqr.pay and payment_method is THAI_QR' },
      { path: 'qr_code_expire_sec', rule: 'is required when service is svc.thaiqr.pay and payment_method is THAI_QR' },
    ])
  })

  it('requires create_time outside wallet_a offline and flags order_create_time there', () => {
    const codec = directPaymentResponseFor('svc.wallet_b.pay', 'MERCHANT_SCAN')
    expect(violations(codec, responseWith(['order_id', 'order_status', 'order_amount', 'order_currency', 'order_create_time']))).toEqual([
      { path: 'create_time', rule: 'is required' },
      { path: 'order_create_time', rule: 'is not returned when service is svc.wallet_b.pay and payment_method is MERCHANT_SCAN' },
    ])
  })

  it('accepts link_url_app null on wallet_d but not a missing link_url_expire_sec', () => {
    const codec = directPaymentResponseFor('svc.wallet_d.pay', 'NORMAL_BALANCE_D')
    const ok = withFields(responseWith(expectedDirectResponseFields('svc.wallet_d.pay', 'NORMAL_BALANCE_D').required), { link_url_app: null })
    expect(violations(codec, ok)).toEqual([])
    expect(violations(codec, withFields(ok, { link_url_expire_sec: undefined }))).toEqual([
      { path: 'link_url_expire_sec', rule: 'is required when service is svc.wallet_d.pay and payment_method is NORMAL_BALANCE_D' },
    ])
  })

  it('checks field rules too: lengths, digits, timestamps', () => {
    const codec = directPaymentResponseFor('svc.thaiqr.pay', 'THAI_QR')
    const input = withFields(responseWith(expectedDirectResponseFields('svc.thaiqr.pay', 'THAI_QR').required), {
      qr_code: 'q'.repeat(2049),
      qr_code_expire_sec: '5 min',
      create_time: '2026-01-01T10:00:00',
      order_status: 'WAITING',
    })
    expect(violations(codec, input)).toEqual([
      { path: 'order_status', rule: 'must be a 2-character status code such as WP or PS' },
      { path: 'create_time', rule: 'must be yyyy-MM-dd HH:mm:ss (Asia/Bangkok)' },
      { path: 'qr_code', rule: 'must be at most 2048 characters' },
      { path: 'qr_code_expire_sec', rule: 'must contain only digits' },
    ])
  })
})

describe('direct payment response: quirks', () => {
  const required = (s: DirectService, m: string) => responseWith(expectedDirectResponseFields(s, m).required)

  it('accepts order_create_time in place of create_time on wallet_a offline, and create_time there too', () => {
    const codec = directPaymentResponseFor('svc.wallet_a.offline.pay', 'MERCHANT_SCAN')
    expect(violations(codec, required('svc.wallet_a.offline.pay', 'MERCHANT_SCAN'))).toEqual([])
    expect(violations(codec, withFields(required('svc.wallet_a.offline.pay', 'MERCHANT_SCAN'), { order_create_time: undefined, create_time: NOW }))).toEqual([])
    expect(violations(codec, withFields(required('svc.wallet_a.offline.pay', 'MERCHANT_SCAN'), { order_create_time: undefined }))).toEqual([
      { path: 'create_time', rule: 'is required (order_create_time is accepted in its place)' },
    ])
  })

  it('accepts pay_params as an object (samples) or as a string (declared string, 1024)', () => {
    const codec = directPaymentResponseFor('svc.wallet_b.pay', 'APP_PAYMENT')
    const base = required('svc.wallet_b.pay', 'APP_PAYMENT')
    const appParams = { package: 'Sign=WXPay', appid: 'wx01', sign: 's', partnerid: '1', prepayid: 'p', noncestr: 'n', timestamp: '1767236400' }
    expect(violations(codec, withFields(base, { pay_params: appParams }))).toEqual([])
    expect(violations(codec, withFields(base, { pay_params: JSON.stringify(appParams) }))).toEqual([])
    expect(violations(codec, withFields(base, { pay_params: 'x'.repeat(1025) }))).toEqual([{ path: 'pay_params', rule: 'must be at most 1024 characters' }])
    expect(violations(codec, withFields(base, { pay_params: 7 }))).toEqual([{ path: 'pay_params', rule: 'must be an object or a string' }])
  })

  it('accepts both readings of wallet_f: with links and with no link', () => {
    const codec = directPaymentResponseFor('svc.wallet_f.pay', 'DEEPLINK')
    expect(violations(codec, required('svc.wallet_f.pay', 'DEEPLINK'))).toEqual([])
    expect(violations(codec, withFields(required('svc.wallet_f.pay', 'DEEPLINK'), { link_url: VALUE.link_url, link_url_app: VALUE.link_url_app }))).toEqual([])
  })
})

describe('DirectPaymentResponse (lenient, any service)', () => {
  it('accepts any conditional field and keeps unknown ones', () => {
    const input = { ...responseWith([...BASE_REQUIRED, ...DIRECT_RESPONSE_CONDITIONAL_FIELDS]), new_gateway_field: 'x' }
    expect(decoded(DirectPaymentResponse, input)).toEqual(input)
  })
  it('still requires the base fields and a creation time', () => {
    expect(violations(DirectPaymentResponse, {})).toEqual([
      { path: 'order_id', rule: 'is required' },
      { path: 'order_status', rule: 'is required' },
      { path: 'order_amount', rule: 'is required' },
      { path: 'order_currency', rule: 'is required' },
      { path: 'create_time', rule: 'is required (order_create_time is accepted in its place)' },
    ])
  })
  it('accepts an unlisted method leniently in the factory', () => {
    const codec = directPaymentResponseFor('svc.wallet_b.pay', 'FUTURE_METHOD')
    expect(violations(codec, responseWith([...BASE_REQUIRED, 'create_time', 'link_url', 'qr_code']))).toEqual([])
  })
})

describe('direct payment response: defaults and names', () => {
  it('given a payment_method the table does not list, when the fields are asked, then create_time is required and every other conditional field optional', () => {
    expect(expectedDirectResponseFields('svc.thaiqr.pay', 'NOT_A_METHOD')).toEqual({
      required: [...BASE_REQUIRED, 'create_time'],
      optional: [...BASE_OPTIONAL, ...DIRECT_RESPONSE_CONDITIONAL_FIELDS.filter((f) => f !== 'create_time')],
    })
    expect(expectedDirectResponseFields('svc.thaiqr.pay', 'NOT_A_METHOD').optional).not.toContain('create_time')
  })
  it('given another service than svc.wallet_a.offline.pay, when create_time is missing, then only create_time is named, without the order_create_time quirk', () => {
    const codec = directPaymentResponseFor('svc.thaiqr.pay', 'THAI_QR')
    const input = responseWith(expectedDirectResponseFields('svc.thaiqr.pay', 'THAI_QR').required.filter((f) => f !== 'create_time'))
    expect(violations(codec, input)).toEqual([{ path: 'create_time', rule: 'is required' }])
  })
  it('given a service and method, when the decoder is built, then its name says which', () => {
    expect(directPaymentResponseFor('svc.thaiqr.pay', 'THAI_QR').name).toBe('DirectPaymentResponse(svc.thaiqr.pay, THAI_QR)')
  })
  it('given pay_params absent, when decoded on its own, then it is required, not of the wrong type', () => {
    expect(violations(PayParams, undefined)).toEqual([{ path: '', rule: 'is required' }])
  })
})
