import * as E from 'fp-ts/lib/Either.js'
import generatePayload from 'promptpay-qr'
import QRCode from 'qrcode'
import { formatAmount, type Satang } from '../domain/money.ts'

/*
 * The `qr_code` of `svc.thaiqr.pay` / THAI_QR (endpoint 1: "encoded QR image text"): an EMVCo
 * merchant-presented QR payload in the Thai QR (PromptPay) profile. promptpay-qr writes it; the
 * functions below read it back independently, so the sandbox (and its tests) can prove that what it
 * hands out is well-formed and carries the order's amount.
 */

/** EMVCo tags used by Thai QR. */
const TAG = {
  payloadFormat: '00',
  pointOfInitiation: '01',
  promptPayTransfer: '29',
  promptPayBill: '30',
  currency: '53',
  amount: '54',
  country: '58',
  crc: '63',
} as const

/** ISO 4217 numeric code of the Thai baht. */
export const THB_NUMERIC = '764'
/** The PromptPay application ids (credit transfer, bill payment) in merchant account information. */
const PROMPTPAY_AIDS = ['A000000677010111', 'A000000677010112']

export type EmvField = { readonly tag: string; readonly value: string }

/**
 * Where a PromptPay proxy is valid: a Thai phone number (10 digits starting with 0), a 13-digit
 * national or tax id, or a 15-digit e-wallet id. Spaces and dashes are ignored.
 */
export const parsePromptPayId = (id: string): E.Either<string, string> => {
  const digits = id.replace(/[\s-]/g, '')
  return /^(0\d{9}|\d{13}|\d{15})$/.test(digits)
    ? E.right(digits)
    : E.left(`PromptPay id must be a phone number (10 digits starting with 0), a 13-digit national or tax id, or a 15-digit e-wallet id; got ${JSON.stringify(id)}`)
}

/**
 * The Thai QR payload for a payment of `amount` to `promptPayId`. An amount of 0 gives a static QR
 * without tag 54, where the payer types the amount (promptpay-qr's behaviour). Throws on an invalid
 * PromptPay id: that is sandbox configuration, checked at start-up with parsePromptPayId.
 */
export const thaiQrPayload = (input: { readonly promptPayId: string; readonly amount: Satang }): string => {
  const id = parsePromptPayId(input.promptPayId)
  if (E.isLeft(id)) throw new RangeError(id.left)
  // promptpay-qr only takes the amount as a JS number and writes it with toFixed(2). Satang / 100 is
  // the double nearest to the decimal amount, and toFixed(2) of it gives back that decimal for every
  // 8,2 amount; the check below holds us to that rather than trusting it.
  const payload = generatePayload(id.right, { amount: Number(input.amount) / 100 })
  const verified = verifyThaiQr(payload, input.amount === 0n ? {} : { amount: input.amount })
  if (E.isLeft(verified)) throw new Error(`promptpay-qr produced a payload that does not verify (${verified.left}): ${payload}`)
  return payload
}

/**
 * CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection, no final xor) over the
 * UTF-8 bytes of `s`, as 4 uppercase hex digits: the checksum of EMVCo tag 63. Check value: "123456789" → 29B1.
 */
export const crc16Ccitt = (s: string): string => {
  let crc = 0xffff
  for (const byte of Buffer.from(s, 'utf8')) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc.toString(16).toUpperCase().padStart(4, '0')
}

/**
 * Splits an EMVCo payload into its top-level fields: each is a 2-digit tag, a 2-digit length and
 * that many characters of value. Templates (such as tag 29) are returned whole; parse their value again.
 */
export const parseEmvTlv = (payload: string): E.Either<string, ReadonlyArray<EmvField>> => {
  if (payload === '') return E.left('payload is empty')
  const fields: EmvField[] = []
  let at = 0
  while (at < payload.length) {
    const head = payload.slice(at, at + 4)
    if (!/^\d{4}$/.test(head)) return E.left(`at character ${String(at)}: expected a 2-digit tag and a 2-digit length, got ${JSON.stringify(head)}`)
    const tag = head.slice(0, 2)
    const length = Number(head.slice(2))
    const value = payload.slice(at + 4, at + 4 + length)
    if (value.length !== length) {
      return E.left(`tag ${tag} at character ${String(at)}: declares ${String(length)} characters but only ${String(value.length)} remain`)
    }
    fields.push({ tag, value })
    at += 4 + length
  }
  return E.right(fields)
}

const AMOUNT = /^(\d+)(?:\.(\d{1,2}))?$/

/** An EMVCo amount (tag 54: digits with an optional point and up to 2 decimals for THB) in satang. */
const amountInSatang = (text: string): bigint | undefined => {
  const m = AMOUNT.exec(text)
  if (m === null || text.length > 13) return undefined
  const [, int = '0', frac = ''] = m
  return BigInt(int) * 100n + BigInt(frac.padEnd(2, '0'))
}

const hasPromptPayAccount = (fields: ReadonlyArray<EmvField>): boolean =>
  fields
    .filter((f) => f.tag === TAG.promptPayTransfer || f.tag === TAG.promptPayBill)
    .some((f) => {
      const inner = parseEmvTlv(f.value)
      return E.isRight(inner) && inner.right.some((g) => g.tag === '00' && PROMPTPAY_AIDS.includes(g.value))
    })

/** Every rule a parsed payload breaks, in payload order; `expectedAmount` is checked when given. */
const violations = (payload: string, fields: ReadonlyArray<EmvField>, expectedAmount: Satang | undefined): string[] => {
  const problems: string[] = []
  const counts = new Map<string, number>()
  for (const f of fields) counts.set(f.tag, (counts.get(f.tag) ?? 0) + 1)
  const repeated = [...counts].filter(([, n]) => n > 1).map(([tag]) => tag)
  if (repeated.length > 0) problems.push(`tags appear more than once: ${repeated.join(', ')}`)

  const first = fields[0]
  if (first?.tag !== TAG.payloadFormat || first.value !== '01') problems.push('must start with the payload format indicator 000201 (tag 00 = 01)')

  const last = fields[fields.length - 1]
  if (last?.tag !== TAG.crc || !/^[0-9A-F]{4}$/.test(last.value)) {
    problems.push('must end with the CRC: tag 63, 4 uppercase hex digits')
  } else {
    // The CRC covers everything before its own value, including the "6304" of tag 63 itself.
    const expected = crc16Ccitt(payload.slice(0, payload.length - 4))
    if (expected !== last.value) problems.push(`CRC mismatch: tag 63 says ${last.value}, the payload gives ${expected}`)
  }

  const pointOfInitiation = fields.find((f) => f.tag === TAG.pointOfInitiation)
  if (pointOfInitiation !== undefined && !['11', '12'].includes(pointOfInitiation.value)) {
    problems.push(`point of initiation (tag 01) must be 11 (static) or 12 (dynamic), got ${pointOfInitiation.value}`)
  }
  if (!hasPromptPayAccount(fields)) problems.push('must carry PromptPay merchant account information (tag 29 or 30 with AID A000000677010111 or A000000677010112)')

  const currency = fields.find((f) => f.tag === TAG.currency)
  if (currency?.value !== THB_NUMERIC) problems.push(`currency (tag 53) must be ${THB_NUMERIC} (THB), got ${currency === undefined ? 'none' : currency.value}`)

  const country = fields.find((f) => f.tag === TAG.country)
  if (country !== undefined && country.value !== 'TH') problems.push(`country (tag 58) must be TH, got ${country.value}`)

  const amount = fields.find((f) => f.tag === TAG.amount)
  const satang = amount === undefined ? undefined : amountInSatang(amount.value)
  if (amount !== undefined && satang === undefined) problems.push(`amount (tag 54) must be digits with up to 2 decimals, got ${JSON.stringify(amount.value)}`)
  if (expectedAmount !== undefined) {
    if (amount === undefined) problems.push(`amount (tag 54) is missing; expected ${formatAmount(expectedAmount)}`)
    else if (satang !== undefined && satang !== expectedAmount) problems.push(`amount (tag 54) is ${amount.value}; expected ${formatAmount(expectedAmount)}`)
  }
  return problems
}

/**
 * Checks a Thai QR payload: TLV well-formed, payload format 00 = 01 first, tag 63 last with a valid
 * CRC, a PromptPay account, currency 53 = 764 (THB), and amount 54 (equal to `expected.amount` when
 * given). Returns the amount and currency as written, or every broken rule joined by "; ".
 */
export const verifyThaiQr = (
  payload: string,
  expected: { readonly amount?: Satang } = {},
): E.Either<string, { amount?: string; currency?: string }> => {
  const parsed = parseEmvTlv(payload)
  if (E.isLeft(parsed)) return parsed
  const problems = violations(payload, parsed.right, expected.amount)
  if (problems.length > 0) return E.left(problems.join('; '))
  const amount = parsed.right.find((f) => f.tag === TAG.amount)?.value
  const currency = parsed.right.find((f) => f.tag === TAG.currency)?.value
  return E.right({ ...(amount === undefined ? {} : { amount }), ...(currency === undefined ? {} : { currency }) })
}

/** The payload as a QR code image (PNG data URL), for the sandbox's payment pages. */
export const qrDataUrl = (payload: string): Promise<string> => QRCode.toDataURL(payload, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2 })
