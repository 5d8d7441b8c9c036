import { describe, expect, it } from 'vitest'
import { orderAmountOf } from '../../../src/domain/gateway/amounts.ts'
import { DIRECT_PAYMENT_METHODS } from '../../../src/domain/gateway/direct-payment-methods.ts'
import { DirectPaymentRequest, orderDescOf, paymentMethodOf } from '../../../src/domain/gateway/direct-payment.ts'
import { DIRECT_SERVICES, type DirectService } from '../../../src/domain/gateway/services.ts'
import { aDirectPayment, decoded, violations } from './builders.ts'

type Case = { readonly name: string; readonly input: Record<string, unknown> }
type Rejection = Case & { readonly path: string; readonly rule: string }
type Row = { readonly field: string; readonly accepted: ReadonlyArray<Case>; readonly rejected: ReadonlyArray<Rejection> }

const wb = (method: string, o: Record<string, unknown> = {}) => aDirectPayment('svc.wallet_b.pay', method, o)
const qr = (o: Record<string, unknown> = {}) => aDirectPayment('svc.thaiqr.pay', 'THAI_QR', o)
const wao = (method: string, o: Record<string, unknown> = {}) => aDirectPayment('svc.wallet_a.offline.pay', method, o)
const mb = (method: string, o: Record<string, unknown> = {}) => aDirectPayment('svc.mobile.banking.pay', method, o)

const ALL_SERVICES_RULE =
  'must be svc.wallet_a.offline.pay, svc.wallet_a.pay, svc.wallet_b.pay, svc.thaiqr.pay, svc.mobile.banking.pay, svc.wallet_c.pay, svc.wallet_e.pay, svc.wallet_d.pay, svc.wallet_f.pay, svc.bankcard.pay or svc.direct-debit.pay'

/** Endpoint 1 request table: one row per field. */
const ROWS: ReadonlyArray<Row> = [
  {
    field: 'version',
    accepted: [{ name: 'v1', input: qr({ version: 'v1' }) }],
    rejected: [
      { name: 'v2', input: qr({ version: 'v2' }), path: 'version', rule: 'must be v1' },
      { name: 'missing', input: qr({ version: undefined }), path: 'version', rule: 'is required' },
    ],
  },
  {
    field: 'service',
    accepted: [{ name: 'svc.thaiqr.pay', input: qr() }],
    rejected: [
      { name: 'unknown channel', input: qr({ service: 'svc.wallet_z.pay' }), path: 'service', rule: ALL_SERVICES_RULE },
      { name: 'a query service', input: qr({ service: 'svc.payment.query' }), path: 'service', rule: ALL_SERVICES_RULE },
    ],
  },
  {
    field: 'merchant_id',
    accepted: [{ name: '18 digits starting with 14', input: qr({ merchant_id: '149999999999999999' }) }],
    rejected: [
      { name: 'starts with 15', input: qr({ merchant_id: '150000000000000001' }), path: 'merchant_id', rule: 'must be 18 digits starting with 14' },
      { name: '17 digits', input: qr({ merchant_id: '14000000000000001' }), path: 'merchant_id', rule: 'must be 18 digits starting with 14' },
      { name: '20 digits (subscription length)', input: qr({ merchant_id: '14000000000000000001' }), path: 'merchant_id', rule: 'must be 18 digits starting with 14' },
      { name: 'missing', input: qr({ merchant_id: undefined }), path: 'merchant_id', rule: 'is required' },
    ],
  },
  {
    field: 'store_id',
    accepted: [{ name: '18 digits starting with 14', input: qr({ store_id: '140000000000000777' }) }],
    rejected: [{ name: 'letters', input: qr({ store_id: 'STORE-1' }), path: 'store_id', rule: 'must be 18 digits starting with 14' }],
  },
  {
    field: 'merchant_order_id',
    accepted: [
      { name: 'digits, letters, dash, underline', input: qr({ merchant_order_id: 'Ab-9_z' }) },
      { name: '64 characters', input: qr({ merchant_order_id: 'x'.repeat(64) }) },
    ],
    rejected: [
      { name: '65 characters', input: qr({ merchant_order_id: 'x'.repeat(65) }), path: 'merchant_order_id', rule: 'must be at most 64 characters' },
      { name: 'a hash sign', input: qr({ merchant_order_id: 'order#1' }), path: 'merchant_order_id', rule: 'must contain only digits, letters, dash and underline' },
      { name: 'a space', input: qr({ merchant_order_id: 'order 1' }), path: 'merchant_order_id', rule: 'must contain only digits, letters, dash and underline' },
      { name: 'missing', input: qr({ merchant_order_id: undefined }), path: 'merchant_order_id', rule: 'is required' },
    ],
  },
  {
    field: 'order_amount',
    accepted: [
      { name: 'no decimals', input: qr({ order_amount: '100' }) },
      { name: 'two decimals', input: qr({ order_amount: '999999.99' }) },
      { name: 'the smallest, one satang', input: qr({ order_amount: '0.01' }) },
    ],
    rejected: [
      { name: 'zero', input: qr({ order_amount: '0' }), path: 'order_amount', rule: 'must be more than 0' },
      { name: 'zero with decimals', input: qr({ order_amount: '0.00' }), path: 'order_amount', rule: 'must be more than 0' },
      { name: 'negative zero', input: qr({ order_amount: '-0.00' }), path: 'order_amount', rule: 'must not be negative' },
      { name: 'three decimals', input: qr({ order_amount: '100.001' }), path: 'order_amount', rule: 'must have at most two decimals (8,2)' },
      { name: '7 integer digits', input: qr({ order_amount: '1234567' }), path: 'order_amount', rule: 'must have at most 6 digits before the decimal point (8,2)' },
      { name: 'a JSON number', input: qr({ order_amount: 100 }), path: 'order_amount', rule: 'must be a string amount such as "100.00"' },
      { name: 'missing', input: qr({ order_amount: undefined }), path: 'order_amount', rule: 'is required' },
    ],
  },
  {
    field: 'order_currency',
    accepted: [
      { name: 'THB', input: qr({ order_currency: 'THB' }) },
    ],
    rejected: [
      { name: 'another 3-letter code (the spec: "Currency used: THB")', input: qr({ order_currency: 'USD' }), path: 'order_currency', rule: 'must be THB (the only currency the gateway uses)' },
      { name: 'lower case', input: qr({ order_currency: 'thb' }), path: 'order_currency', rule: 'must be THB (the only currency the gateway uses)' },
      { name: '4 letters', input: qr({ order_currency: 'BAHT' }), path: 'order_currency', rule: 'must be THB (the only currency the gateway uses)' },
      { name: 'missing', input: qr({ order_currency: undefined }), path: 'order_currency', rule: 'is required' },
    ],
  },
  {
    field: 'order_desc',
    accepted: [{ name: '256 Thai characters', input: qr({ order_desc: 'ก'.repeat(256) }) }],
    rejected: [
      { name: '257 characters', input: qr({ order_desc: 'ก'.repeat(257) }), path: 'order_desc', rule: 'must be at most 256 characters' },
      { name: 'empty', input: qr({ order_desc: '' }), path: 'order_desc', rule: 'must not be empty' },
      { name: 'missing (and no order_info)', input: qr({ order_desc: undefined }), path: 'order_desc', rule: 'is required (order_info is accepted in its place)' },
    ],
  },
  {
    field: 'product_code',
    accepted: [{ name: '32 characters', input: qr({ product_code: 'P'.repeat(32) }) }],
    rejected: [{ name: '33 characters', input: qr({ product_code: 'P'.repeat(33) }), path: 'product_code', rule: 'must be at most 32 characters' }],
  },
  {
    field: 'payment_method',
    accepted: [{ name: 'a method of the service', input: qr({ payment_method: 'THAI_QR' }) }],
    rejected: [
      { name: 'missing', input: qr({ payment_method: undefined }), path: 'payment_method', rule: 'is required' },
      { name: '33 characters (open service)', input: aDirectPayment('svc.bankcard.pay', 'C'.repeat(33)), path: 'payment_method', rule: 'must be at most 32 characters' },
    ],
  },
  {
    field: 'customer',
    accepted: [
      { name: 'merchant_user_id and full_name', input: qr() },
      { name: 'every listed field, with address', input: qr({ customer: { first_name: 'Somchai', last_name: 'Jaidee', email: 's@example.com', phone: '0812345678', address: { country: 'TH', city: 'Bangkok', street_name: 'Sukhumvit' } } }) },
      { name: 'absent on svc.wallet_a.offline.pay', input: wao('DYNAMIC_CODE', { customer: undefined }) },
    ],
    rejected: [
      { name: 'missing on another service', input: qr({ customer: undefined }), path: 'customer', rule: 'is required unless service is svc.wallet_a.offline.pay' },
      { name: 'a string', input: qr({ customer: 'Somchai' }), path: 'customer', rule: 'must be an object' },
      { name: 'a number as full_name', input: qr({ customer: { full_name: 42 } }), path: 'customer.full_name', rule: 'must be a string' },
      { name: 'address not an object', input: qr({ customer: { address: 'Bangkok' } }), path: 'customer.address', rule: 'must be an object' },
    ],
  },
  {
    field: 'products',
    accepted: [{ name: 'name, unit_price, quantity', input: qr({ products: [{ name: 'Coffee', unit_price: '55.00', quantity: '2' }, { name: 'Cake', sku: 'SKU 1' }] }) }],
    rejected: [
      { name: 'an object', input: qr({ products: { name: 'Coffee' } }), path: 'products', rule: 'must be a list' },
      { name: 'unit_price with 3 decimals', input: qr({ products: [{ name: 'Coffee' }, { unit_price: '1.999' }] }), path: 'products.1.unit_price', rule: 'must have at most two decimals (8,2)' },
      { name: 'fractional quantity', input: qr({ products: [{ quantity: '1.5' }] }), path: 'products.0.quantity', rule: 'must be a whole number as a digit string' },
    ],
  },
  {
    field: 'notify_url',
    accepted: [{ name: 'https URL', input: qr({ notify_url: 'https://merchant.example/gw/notify?x=1' }) }],
    rejected: [
      { name: 'not http(s)', input: qr({ notify_url: 'ftp://merchant.example/notify' }), path: 'notify_url', rule: 'must be an absolute http or https URL' },
      { name: '257 characters', input: qr({ notify_url: `https://m.example/${'a'.repeat(239)}` }), path: 'notify_url', rule: 'must be at most 256 characters' },
    ],
  },
  {
    field: 'redirect_url',
    accepted: [{ name: 'http URL', input: qr({ redirect_url: 'http://merchant.example/done' }) }],
    rejected: [{ name: 'relative', input: qr({ redirect_url: '/done' }), path: 'redirect_url', rule: 'must be an absolute http or https URL' }],
  },
  {
    field: 'buyer_identity_code',
    accepted: [{ name: 'wallet_a offline MERCHANT_SCAN', input: wao('MERCHANT_SCAN') }],
    rejected: [
      { name: 'missing on wallet_a offline MERCHANT_SCAN', input: wao('MERCHANT_SCAN', { buyer_identity_code: undefined }), path: 'buyer_identity_code', rule: 'is required when service is svc.wallet_a.offline.pay and payment_method is MERCHANT_SCAN' },
      { name: 'on wallet_a offline DYNAMIC_CODE', input: wao('DYNAMIC_CODE', { buyer_identity_code: '2865' }), path: 'buyer_identity_code', rule: 'is only allowed when service is svc.wallet_a.offline.pay and payment_method is MERCHANT_SCAN' },
      { name: 'on wallet_b MERCHANT_SCAN', input: wb('MERCHANT_SCAN', { buyer_identity_code: '2865' }), path: 'buyer_identity_code', rule: 'is only allowed when service is svc.wallet_a.offline.pay and payment_method is MERCHANT_SCAN' },
      { name: '33 characters', input: wao('MERCHANT_SCAN', { buyer_identity_code: '1'.repeat(33) }), path: 'buyer_identity_code', rule: 'must be at most 32 characters' },
    ],
  },
  {
    field: 'auth_code',
    accepted: [{ name: 'wallet_b MERCHANT_SCAN', input: wb('MERCHANT_SCAN', { auth_code: '1'.repeat(20) }) }],
    rejected: [
      { name: 'missing on wallet_b MERCHANT_SCAN', input: wb('MERCHANT_SCAN', { auth_code: undefined }), path: 'auth_code', rule: 'is required when service is svc.wallet_b.pay and payment_method is MERCHANT_SCAN' },
      { name: 'on wallet_b DYNAMIC_CODE', input: wb('DYNAMIC_CODE', { auth_code: '1345' }), path: 'auth_code', rule: 'is only allowed when service is svc.wallet_b.pay and payment_method is MERCHANT_SCAN' },
      { name: '21 characters', input: wb('MERCHANT_SCAN', { auth_code: '1'.repeat(21) }), path: 'auth_code', rule: 'must be at most 20 characters' },
    ],
  },
  {
    field: 'appid',
    accepted: [
      { name: 'wallet_b INAPP_PAYMENT', input: wb('INAPP_PAYMENT') },
      { name: 'wallet_b APP_PAYMENT', input: wb('APP_PAYMENT') },
    ],
    rejected: [
      { name: 'missing on wallet_b APP_PAYMENT', input: wb('APP_PAYMENT', { appid: undefined }), path: 'appid', rule: 'is required when service is svc.wallet_b.pay and payment_method is INAPP_PAYMENT or APP_PAYMENT' },
      { name: 'on wallet_b H5_PAYMENT', input: wb('H5_PAYMENT', { appid: 'wx01' }), path: 'appid', rule: 'is only allowed when service is svc.wallet_b.pay and payment_method is INAPP_PAYMENT or APP_PAYMENT' },
      { name: '21 characters', input: wb('APP_PAYMENT', { appid: 'w'.repeat(21) }), path: 'appid', rule: 'must be at most 20 characters' },
    ],
  },
  {
    field: 'openid',
    accepted: [{ name: 'wallet_b INAPP_PAYMENT', input: wb('INAPP_PAYMENT') }],
    rejected: [
      { name: 'missing on wallet_b INAPP_PAYMENT', input: wb('INAPP_PAYMENT', { openid: undefined }), path: 'openid', rule: 'is required when service is svc.wallet_b.pay and payment_method is INAPP_PAYMENT' },
      { name: 'on wallet_b APP_PAYMENT', input: wb('APP_PAYMENT', { openid: 'o-1' }), path: 'openid', rule: 'is only allowed when service is svc.wallet_b.pay and payment_method is INAPP_PAYMENT' },
      { name: '33 characters', input: wb('INAPP_PAYMENT', { openid: 'o'.repeat(33) }), path: 'openid', rule: 'must be at most 32 characters' },
    ],
  },
  {
    field: 'client',
    accepted: [
      { name: 'wallet_b H5_PAYMENT, IPv4', input: wb('H5_PAYMENT') },
      { name: 'wallet_b H5_PAYMENT, IPv6', input: wb('H5_PAYMENT', { client: { remote_ip: '2001:db8::7' } }) },
    ],
    rejected: [
      { name: 'missing on wallet_b H5_PAYMENT', input: wb('H5_PAYMENT', { client: undefined }), path: 'client', rule: 'is required when service is svc.wallet_b.pay and payment_method is H5_PAYMENT' },
      { name: 'on thaiqr', input: qr({ client: { remote_ip: '203.0.113.7' } }), path: 'client', rule: 'is only allowed when service is svc.wallet_b.pay and payment_method is H5_PAYMENT' },
      { name: 'without remote_ip', input: wb('H5_PAYMENT', { client: {} }), path: 'client.remote_ip', rule: 'is required' },
      { name: 'remote_ip not an address', input: wb('H5_PAYMENT', { client: { remote_ip: '300.1.1.1' } }), path: 'client.remote_ip', rule: 'must be an IPv4 or IPv6 address such as 203.0.113.7' },
    ],
  },
  {
    field: 'card',
    accepted: [
      { name: 'bankcard, any object', input: aDirectPayment('svc.bankcard.pay', 'CARD') },
      { name: 'bankcard, empty object', input: aDirectPayment('svc.bankcard.pay', 'CARD', { card: {} }) },
    ],
    rejected: [
      { name: 'missing on bankcard', input: aDirectPayment('svc.bankcard.pay', 'CARD', { card: undefined }), path: 'card', rule: 'is required when service is svc.bankcard.pay' },
      { name: 'on thaiqr', input: qr({ card: { token: 't' } }), path: 'card', rule: 'is only allowed when service is svc.bankcard.pay' },
      { name: 'a string', input: aDirectPayment('svc.bankcard.pay', 'CARD', { card: '4242424242424242' }), path: 'card', rule: 'must be an object' },
    ],
  },
  {
    field: 'app_callback_url',
    accepted: [
      { name: 'BANKAPP_C_BILL, an app link', input: mb('BANKAPP_C_BILL') },
      { name: 'BANKAPP_C_CREDIT', input: mb('BANKAPP_C_CREDIT') },
    ],
    rejected: [
      { name: 'missing on BANKAPP_C_ALL', input: mb('BANKAPP_C_ALL', { app_callback_url: undefined }), path: 'app_callback_url', rule: 'is required when service is svc.mobile.banking.pay and payment_method is BANKAPP_C_BILL, BANKAPP_C_CREDIT or BANKAPP_C_ALL' },
      { name: 'on BANKAPP_A_NOTIFICATION', input: mb('BANKAPP_A_NOTIFICATION', { app_callback_url: 'app://x' }), path: 'app_callback_url', rule: 'is only allowed when service is svc.mobile.banking.pay and payment_method is BANKAPP_C_BILL, BANKAPP_C_CREDIT or BANKAPP_C_ALL' },
      { name: '257 characters', input: mb('BANKAPP_C_ALL', { app_callback_url: 'a'.repeat(257) }), path: 'app_callback_url', rule: 'must be at most 256 characters' },
    ],
  },
  {
    field: 'mobile_number',
    accepted: [
      { name: '08…, BANKAPP_A_NOTIFICATION', input: mb('BANKAPP_A_NOTIFICATION', { mobile_number: '0812345678' }) },
      { name: '06…, BANKAPP_B_NOTIFICATION', input: mb('BANKAPP_B_NOTIFICATION', { mobile_number: '0612345678' }) },
      { name: '09…', input: mb('BANKAPP_B_NOTIFICATION', { mobile_number: '0912345678' }) },
    ],
    rejected: [
      { name: 'missing on BANKAPP_B_NOTIFICATION', input: mb('BANKAPP_B_NOTIFICATION', { mobile_number: undefined }), path: 'mobile_number', rule: 'is required when service is svc.mobile.banking.pay and payment_method is BANKAPP_A_NOTIFICATION or BANKAPP_B_NOTIFICATION' },
      { name: 'on BANKAPP_C_BILL', input: mb('BANKAPP_C_BILL', { mobile_number: '0812345678' }), path: 'mobile_number', rule: 'is only allowed when service is svc.mobile.banking.pay and payment_method is BANKAPP_A_NOTIFICATION or BANKAPP_B_NOTIFICATION' },
      ...['+66812345678', '66812345678', '0212345678', '081234567', '08123456789', '08-1234-5678'].map((n) => ({
        name: `malformed ${n}`,
        input: mb('BANKAPP_A_NOTIFICATION', { mobile_number: n }),
        path: 'mobile_number',
        rule: 'must be a Thai mobile number without country code: 10 digits starting with 06, 08 or 09',
      })),
    ],
  },
  {
    field: 'link_account_id',
    accepted: [
      { name: 'direct-debit', input: aDirectPayment('svc.direct-debit.pay', 'DIRECT_DEBIT') },
      { name: 'optional on another service (Required: no)', input: qr({ link_account_id: 'LA1' }) },
    ],
    rejected: [
      { name: 'missing on direct-debit', input: aDirectPayment('svc.direct-debit.pay', 'DIRECT_DEBIT', { link_account_id: undefined }), path: 'link_account_id', rule: 'is required when service is svc.direct-debit.pay' },
      { name: '19 characters', input: aDirectPayment('svc.direct-debit.pay', 'DIRECT_DEBIT', { link_account_id: 'L'.repeat(19) }), path: 'link_account_id', rule: 'must be at most 18 characters' },
    ],
  },
]

describe('direct payment request: one row per field of the endpoint 1 table', () => {
  it('covers every field of the table', () => {
    expect(ROWS.map((r) => r.field)).toEqual([
      'version', 'service', 'merchant_id', 'store_id', 'merchant_order_id', 'order_amount', 'order_currency', 'order_desc',
      'product_code', 'payment_method', 'customer', 'products', 'notify_url', 'redirect_url', 'buyer_identity_code', 'auth_code',
      'appid', 'openid', 'client', 'card', 'app_callback_url', 'mobile_number', 'link_account_id',
    ])
  })
  for (const row of ROWS) {
    describe(row.field, () => {
      it.each(row.accepted.map((c) => [c.name, c] as const))('accepts: %s', (_, c) => {
        expect(violations(DirectPaymentRequest, c.input)).toEqual([])
      })
      it.each(row.rejected.map((c) => [c.name, c] as const))('rejects: %s', (_, c) => {
        expect(violations(DirectPaymentRequest, c.input)).toContainEqual({ path: c.path, rule: c.rule })
      })
    })
  }
})

/** One accepted and one rejected payment_method per row of the service/payment_method table. */
const METHOD_ROWS: ReadonlyArray<{ service: DirectService; accepted: string; rejected: string; rule: string }> = [
  { service: 'svc.wallet_a.offline.pay', accepted: 'DYNAMIC_CODE', rejected: 'THAI_QR', rule: 'must be MERCHANT_SCAN, DYNAMIC_CODE or INAPP_PAYMENT when service is svc.wallet_a.offline.pay' },
  { service: 'svc.wallet_a.pay', accepted: 'WEB_PAYMENT', rejected: 'H5_PAYMENT', rule: 'must be APP_PAYMENT, WEB_PAYMENT or WAP_PAYMENT when service is svc.wallet_a.pay' },
  { service: 'svc.wallet_b.pay', accepted: 'H5_PAYMENT', rejected: 'WEB_PAYMENT', rule: 'must be DYNAMIC_CODE, MERCHANT_SCAN, INAPP_PAYMENT, APP_PAYMENT or H5_PAYMENT when service is svc.wallet_b.pay' },
  { service: 'svc.thaiqr.pay', accepted: 'THAI_QR', rejected: 'DYNAMIC_CODE', rule: 'must be THAI_QR when service is svc.thaiqr.pay' },
  { service: 'svc.mobile.banking.pay', accepted: 'BANKAPP_C_ALL', rejected: 'DEEPLINK', rule: 'must be BANKAPP_A_NOTIFICATION, BANKAPP_B_NOTIFICATION, BANKAPP_C_BILL, BANKAPP_C_CREDIT or BANKAPP_C_ALL when service is svc.mobile.banking.pay' },
  { service: 'svc.wallet_c.pay', accepted: 'NORMAL_BALANCE_C', rejected: 'NORMAL_BALANCE_D', rule: 'must be NORMAL_BALANCE_C when service is svc.wallet_c.pay' },
  { service: 'svc.wallet_e.pay', accepted: 'DIGITAL_BALANCE', rejected: 'NORMAL_BALANCE_C', rule: 'must be DIGITAL_BALANCE when service is svc.wallet_e.pay' },
  { service: 'svc.wallet_d.pay', accepted: 'NORMAL_BALANCE_D', rejected: 'DIGITAL_BALANCE', rule: 'must be NORMAL_BALANCE_D when service is svc.wallet_d.pay' },
  { service: 'svc.wallet_f.pay', accepted: 'DEEPLINK', rejected: 'APP_PAYMENT', rule: 'must be DEEPLINK when service is svc.wallet_f.pay' },
  // Open services (methods "not shown"): any value is accepted except one listed for another service.
  { service: 'svc.bankcard.pay', accepted: 'CARD', rejected: 'THAI_QR', rule: 'is a payment_method of svc.thaiqr.pay, not of svc.bankcard.pay' },
  { service: 'svc.direct-debit.pay', accepted: 'DIRECT_DEBIT', rejected: 'CARD', rule: 'is a payment_method of svc.bankcard.pay, not of svc.direct-debit.pay' },
]

describe('direct payment request: the service/payment_method table', () => {
  it('has one row per service', () => {
    expect(METHOD_ROWS.map((r) => r.service).sort()).toEqual([...DIRECT_SERVICES].sort())
  })
  it.each(METHOD_ROWS.map((r) => [r.service, r] as const))('%s accepts its method and rejects another service\'s', (_, r) => {
    expect(violations(DirectPaymentRequest, aDirectPayment(r.service, r.accepted))).toEqual([])
    expect(violations(DirectPaymentRequest, aDirectPayment(r.service, r.rejected))).toContainEqual({ path: 'payment_method', rule: r.rule })
  })
  it.each(DIRECT_SERVICES.flatMap((s) => DIRECT_PAYMENT_METHODS[s].map((m) => [s, m] as const)))('%s accepts %s with its conditional fields', (s, m) => {
    expect(violations(DirectPaymentRequest, aDirectPayment(s, m))).toEqual([])
  })
  it('accepts an unlisted method on the open services, up to 32 characters', () => {
    expect(violations(DirectPaymentRequest, aDirectPayment('svc.bankcard.pay', 'VISA_3DS'))).toEqual([])
    expect(violations(DirectPaymentRequest, aDirectPayment('svc.direct-debit.pay', 'D'.repeat(32)))).toEqual([])
  })
})

describe('direct payment request: quirks of the samples', () => {
  it('accepts payment_type instead of payment_method, order_info instead of order_desc and user_id on svc.wallet_a.offline.pay', () => {
    const input = wao('INAPP_PAYMENT', { payment_method: undefined, payment_type: 'INAPP_PAYMENT', order_desc: undefined, order_info: 'Iced coffee', user_id: '2088000000000001' })
    const r = decoded(DirectPaymentRequest, input)
    expect(paymentMethodOf(r)).toBe('INAPP_PAYMENT')
    expect(orderDescOf(r)).toBe('Iced coffee')
  })
  it('accepts order_info next to order_desc, and order_info alone on the other services', () => {
    expect(violations(DirectPaymentRequest, wao('DYNAMIC_CODE', { order_info: 'info' }))).toEqual([])
    expect(violations(DirectPaymentRequest, qr({ order_desc: undefined, order_info: 'info' }))).toEqual([])
  })
  it('checks payment_type against the methods of svc.wallet_a.offline.pay', () => {
    expect(violations(DirectPaymentRequest, wao('DYNAMIC_CODE', { payment_method: undefined, payment_type: 'THAI_QR' }))).toEqual([
      { path: 'payment_type', rule: 'must be MERCHANT_SCAN, DYNAMIC_CODE or INAPP_PAYMENT when service is svc.wallet_a.offline.pay' },
    ])
  })
  it('uses payment_type for the conditional fields', () => {
    expect(violations(DirectPaymentRequest, wao('MERCHANT_SCAN', { payment_method: undefined, payment_type: 'MERCHANT_SCAN', buyer_identity_code: undefined }))).toEqual([
      { path: 'buyer_identity_code', rule: 'is required when service is svc.wallet_a.offline.pay and payment_method is MERCHANT_SCAN' },
    ])
  })
  it('rejects a payment_type that contradicts payment_method', () => {
    expect(violations(DirectPaymentRequest, wao('DYNAMIC_CODE', { payment_type: 'INAPP_PAYMENT' }))).toEqual([
      { path: 'payment_type', rule: 'must equal payment_method when both are sent' },
    ])
  })
  it('requires one of payment_method or payment_type on svc.wallet_a.offline.pay', () => {
    expect(violations(DirectPaymentRequest, wao('DYNAMIC_CODE', { payment_method: undefined }))).toEqual([
      { path: 'payment_method', rule: 'is required (payment_type is accepted in its place)' },
    ])
  })
  it('rejects the wallet_a offline quirk fields on other services', () => {
    expect(violations(DirectPaymentRequest, qr({ payment_type: 'THAI_QR', user_id: 'u' }))).toEqual([
      { path: 'payment_type', rule: 'is not a field of svc.thaiqr.pay' },
      { path: 'user_id', rule: 'is not a field of svc.thaiqr.pay' },
    ])
  })
})

describe('direct payment request: unknown fields and all violations', () => {
  it('rejects a misspelt field with the service named', () => {
    expect(violations(DirectPaymentRequest, qr({ notify_ur: 'https://x.example' }))).toEqual([{ path: 'notify_ur', rule: 'is not a field of svc.thaiqr.pay' }])
  })
  it('names the request when the service itself is wrong', () => {
    expect(violations(DirectPaymentRequest, qr({ service: 'svc.x', colour: 'red' }))).toContainEqual({ path: 'colour', rule: 'is not a field of a direct payment request' })
  })
  it('reports all four errors of a request, each with its path', () => {
    const input = wb('H5_PAYMENT', {
      merchant_id: '990000000000000001',
      order_amount: '12.345',
      client: { remote_ip: 'not-an-ip' },
      auth_code: '1345',
    })
    expect(violations(DirectPaymentRequest, input)).toEqual([
      { path: 'merchant_id', rule: 'must be 18 digits starting with 14' },
      { path: 'order_amount', rule: 'must have at most two decimals (8,2)' },
      { path: 'client.remote_ip', rule: 'must be an IPv4 or IPv6 address such as 203.0.113.7' },
      { path: 'auth_code', rule: 'is only allowed when service is svc.wallet_b.pay and payment_method is MERCHANT_SCAN' },
    ])
  })
  it('rejects a body that is not an object', () => {
    expect(violations(DirectPaymentRequest, [qr()])).toEqual([{ path: '', rule: 'must be an object' }])
  })
})

describe('direct payment request: decoded value', () => {
  it('keeps the wire text of amounts and gives satang on request', () => {
    const r = decoded(DirectPaymentRequest, qr({ order_amount: '100.5' }))
    expect(r.order_amount).toBe('100.5')
    expect(orderAmountOf(r)).toEqual({ _tag: 'Right', right: 10050n })
  })
  it('encodes back to exactly the body that was decoded (what is signed), open objects included', () => {
    const input = qr({ customer: { full_name: 'Somchai', nickname: 'Chai', address: { city: 'Bangkok', soi: '11' } }, products: [{ name: 'Coffee', colour: 'black' }] })
    expect(DirectPaymentRequest.encode(decoded(DirectPaymentRequest, input))).toEqual(input)
  })
})

describe('direct payment request: payment_type outside its quirk, and beside an equal payment_method', () => {
  it('given payment_type on another service than svc.wallet_a.offline.pay, when decoded, then it is not read as the method', () => {
    // given: wallet_b with MERCHANT_SCAN's auth_code, the method sent as payment_type only
    const input = wb('MERCHANT_SCAN', { payment_method: undefined, payment_type: 'MERCHANT_SCAN' })
    // when/then: no method, so auth_code is not allowed, and payment_type is no field of wallet_b
    expect(violations(DirectPaymentRequest, input)).toEqual([
      { path: 'payment_method', rule: 'is required' },
      { path: 'auth_code', rule: 'is only allowed when service is svc.wallet_b.pay and payment_method is MERCHANT_SCAN' },
      { path: 'payment_type', rule: 'is not a field of svc.wallet_b.pay' },
    ])
  })
  it('given payment_type equal to payment_method, when decoded, then nothing is wrong', () => {
    expect(violations(DirectPaymentRequest, wao('MERCHANT_SCAN', { payment_type: 'MERCHANT_SCAN' }))).toEqual([])
  })
  it('given a payment_type that contradicts payment_method and is no method of the service, when decoded, then only the contradiction is named', () => {
    expect(violations(DirectPaymentRequest, wao('DYNAMIC_CODE', { payment_type: 'THAI_QR' }))).toEqual([
      { path: 'payment_type', rule: 'must equal payment_method when both are sent' },
    ])
  })
  it('given an unknown service with a conditional field, when decoded, then only the service is named', () => {
    expect(violations(DirectPaymentRequest, qr({ service: 'svc.x', card: { token: 't' } }))).toEqual([
      { path: 'service', rule: 'must be svc.wallet_a.offline.pay, svc.wallet_a.pay, svc.wallet_b.pay, svc.thaiqr.pay, svc.mobile.banking.pay, svc.wallet_c.pay, svc.wallet_e.pay, svc.wallet_d.pay, svc.wallet_f.pay, svc.bankcard.pay or svc.direct-debit.pay' },
    ])
  })
})
