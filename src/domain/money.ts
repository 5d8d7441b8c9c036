import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'

/** An amount of Thai baht in satang (1/100 baht). Always an integer; never a float. */
export interface SatangBrand {
  readonly Satang: unique symbol
}
export type Satang = t.Branded<bigint, SatangBrand>

/** The gateway declares amounts as `8,2`: at most 8 digits in all, 2 of them after the point. */
export const MAX_INTEGER_DIGITS = 6
export const MAX_FRACTION_DIGITS = 2
export const MAX_SATANG = 99_999_999n

export const satang = (n: bigint): E.Either<string, Satang> =>
  n < 0n ? E.left('must not be negative') : n > MAX_SATANG ? E.left('must be at most 999999.99') : E.right(n as Satang)

/** Every rule of the amount grammar that `text` breaks; empty when it is a valid amount. */
export const amountRuleViolations = (text: string): ReadonlyArray<string> => {
  const rules: string[] = []
  if (text.trim() !== text || text === '') {
    rules.push('must be a decimal number such as 100, 100.5 or 100.50 (no spaces)')
    return rules
  }
  if (/[eE]/.test(text)) rules.push('must not use exponent notation')
  if (text.startsWith('-')) rules.push('must not be negative')
  if (text.startsWith('+')) rules.push('must not carry a sign')
  const body = text.replace(/^[+-]/, '')
  const m = /^(\d+)(?:\.(\d*))?$/.exec(body)
  if (m === null) {
    if (!/[eE]/.test(text)) rules.push('must be digits with an optional decimal point')
    return rules
  }
  // Stryker disable next-line StringLiteral: the (\d+) group always matches, so the default is never used
  const [, int = '', frac] = m
  if (frac !== undefined && frac.length === 0) rules.push('must have digits after the decimal point')
  if (frac !== undefined && frac.length > MAX_FRACTION_DIGITS) rules.push('must have at most two decimals (8,2)')
  if (int.length > 1 && int.startsWith('0')) rules.push('must not have leading zeros')
  if (int.replace(/^0+(?=\d)/, '').length > MAX_INTEGER_DIGITS) rules.push('must have at most 6 digits before the decimal point (8,2)')
  return rules
}

/** Parses a gateway amount string (`"100"`, `"100.0"`, `"100.00"` are the same) into satang. */
export const parseAmount = (text: string): E.Either<ReadonlyArray<string>, Satang> => {
  const rules = amountRuleViolations(text)
  if (rules.length > 0) return E.left(rules)
  const [int = '0', frac = ''] = text.split('.')
  return E.right((BigInt(int) * 100n + BigInt(frac.padEnd(2, '0'))) as Satang)
}

/** Formats satang as the gateway's response form: always two decimals (`12345n` → `"123.45"`). */
export const formatAmount = (s: Satang | bigint): string => {
  const negative = s < 0n
  const abs = negative ? -s : s
  const int = abs / 100n
  const frac = abs % 100n
  return `${negative ? '-' : ''}${int.toString()}.${frac.toString().padStart(2, '0')}`
}

/** Codec: amount text on the wire ↔ `Satang`. Encodes with two decimals. */
export const Amount = new t.Type<Satang, string, unknown>(
  'Amount',
  (u): u is Satang => typeof u === 'bigint' && u >= 0n && u <= MAX_SATANG,
  (u, c) => {
    if (u === undefined) return t.failure(u, c, 'is required')
    if (typeof u !== 'string') return t.failure(u, c, 'must be a string amount such as "100.00"')
    const parsed = parseAmount(u)
    return E.isRight(parsed) ? t.success(parsed.right) : t.failures(parsed.left.map((rule) => ({ value: u, context: c, message: rule })))
  },
  formatAmount,
)

/** Codec for amount text that keeps the text as sent (what a signature covers) but enforces the rules. */
export const AmountText = new t.Type<string, string, unknown>(
  'AmountText',
  (u): u is string => typeof u === 'string' && amountRuleViolations(u).length === 0,
  (u, c) => {
    if (u === undefined) return t.failure(u, c, 'is required')
    if (typeof u !== 'string') return t.failure(u, c, 'must be a string amount such as "100.00"')
    const rules = amountRuleViolations(u)
    return rules.length === 0 ? t.success(u) : t.failures(rules.map((rule) => ({ value: u, context: c, message: rule })))
  },
  t.identity,
)

/** Satang as a digit string (how events and JSON carry `bigint`). */
export const SatangFromString = new t.Type<Satang, string, unknown>(
  'SatangFromString',
  (u): u is Satang => typeof u === 'bigint' && u >= 0n,
  (u, c) =>
    typeof u === 'string' && /^(0|[1-9]\d{0,17})$/.test(u) ? t.success(BigInt(u) as Satang) : t.failure(u, c, 'must be a whole number of satang as a digit string'),
  (s) => s.toString(),
)
