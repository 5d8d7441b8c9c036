import * as E from 'fp-ts/lib/Either.js'
import { satang, type Satang } from '../../../src/domain/money.ts'

export const MERCHANT_ID = '140000000000000001'
export const GATEWAY_ORDER_ID = '202601010000000001'
export const T0 = new Date('2026-01-01T03:00:00.000Z')

/** `T0` plus `minutes`. */
export const at = (minutes: number): Date => new Date(T0.getTime() + minutes * 60_000)

export const sat = (n: bigint): Satang => {
  const r = satang(n)
  if (E.isLeft(r)) throw new Error(`test amount ${n.toString()}: ${r.left}`)
  return r.right
}

/** Payer data that must never reach the log in clear. */
export const PAYER = {
  merchant_user_id: 'u-1',
  full_name: 'Somchai Jaidee',
  first_name: 'Somchai',
  last_name: 'Jaidee',
  email: 'somchai@example.com',
  phone: '0812345678',
  id_no: '1101700230705',
  company: 'Jaidee Trading',
  address: { country: 'TH', city: 'Bangkok', street_name: 'Sukhumvit 21', house_number: '99/1' },
} as const

export const PAYER_SECRETS: ReadonlyArray<string> = ['Somchai', 'Jaidee', 'somchai@example.com', '0812345678', '1101700230705', 'Sukhumvit', '99/1', '0898765432', '286512345678901234', '203.0.113.7']

/** Every payer secret found in `value` once serialized (bigints as text). */
export const leakedSecrets = (value: unknown): ReadonlyArray<string> => {
  const text = JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
  return PAYER_SECRETS.filter((secret) => text.includes(secret))
}
