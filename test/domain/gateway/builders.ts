import * as E from 'fp-ts/lib/Either.js'
import type * as t from 'io-ts'
import type { DirectService } from '../../../src/domain/gateway/services.ts'
import { decodeAll, type Violation } from '../../../src/domain/violations.ts'

/** Test helpers shared by the gateway codec tests (not a test file itself). */

export const MERCHANT_ID = '140000000000000001'
export const ORDER_ID = '202601010000000001'
export const NOW = '2026-01-01 10:00:00'

type Fields = Record<string, unknown>

/** `base` with `overrides` applied; an override of `undefined` removes the field. */
export const withFields = (base: Fields, overrides: Fields = {}): Fields => {
  const out: Fields = { ...base, ...overrides }
  for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete out[k]
  return out
}

/** The conditional fields a valid direct request of `service`/`method` needs (endpoint 1 table). */
export const conditionalRequestFields = (service: DirectService, method: string): Fields => {
  switch (service) {
    case 'svc.wallet_a.offline.pay':
      return method === 'MERCHANT_SCAN' ? { buyer_identity_code: '286512345678901234' } : {}
    case 'svc.wallet_b.pay':
      if (method === 'MERCHANT_SCAN') return { auth_code: '134567890123456789' }
      if (method === 'INAPP_PAYMENT') return { appid: 'wx0123456789abcdef', openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' }
      if (method === 'APP_PAYMENT') return { appid: 'wx0123456789abcdef' }
      if (method === 'H5_PAYMENT') return { client: { remote_ip: '203.0.113.7' } }
      return {}
    case 'svc.mobile.banking.pay':
      return method.startsWith('BANKAPP_C_') ? { app_callback_url: 'merchantapp://paid' } : { mobile_number: '0812345678' }
    case 'svc.bankcard.pay':
      return { card: { token: 'tok_4242', holder: 'SOMCHAI J' } }
    case 'svc.direct-debit.pay':
      return { link_account_id: 'LA2026000000000001' }
    case 'svc.wallet_a.pay':
    case 'svc.thaiqr.pay':
    case 'svc.wallet_c.pay':
    case 'svc.wallet_d.pay':
    case 'svc.wallet_e.pay':
    case 'svc.wallet_f.pay':
      return {}
  }
}

/** A valid endpoint 1 request body for `service`/`method`, then `overrides`. */
export const aDirectPayment = (service: DirectService, method: string, overrides: Fields = {}): Fields =>
  withFields(
    {
      version: 'v1',
      service,
      merchant_id: MERCHANT_ID,
      merchant_order_id: 'ORDER-2026_0001',
      order_amount: '100.00',
      order_currency: 'THB',
      order_desc: 'Iced coffee',
      payment_method: method,
      customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
      notify_url: 'https://merchant.example/notify',
      ...conditionalRequestFields(service, method),
    },
    overrides,
  )

/** The violations of decoding `input`, `[]` when it decodes. */
export const violations = <A, O>(codec: t.Type<A, O, unknown>, input: unknown): ReadonlyArray<Violation> =>
  E.match((vs: ReadonlyArray<Violation>) => vs, () => [])(decodeAll(codec, input))

/** The decoded value; fails the test with the violations when decoding fails. */
export const decoded = <A, O>(codec: t.Type<A, O, unknown>, input: unknown): A => {
  const r = decodeAll(codec, input)
  if (E.isLeft(r)) throw new Error(`expected to decode, got ${JSON.stringify(r.left)}`)
  return r.right
}
