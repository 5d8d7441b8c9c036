/**
 * How a message's fields become the exact bytes that are signed. The gateway spec does not show its
 * canonical form ("not shown"), so this is a replaceable strategy, chosen by configuration
 * (`SATANG_CANONICALIZER`); `satang-canonical-v1` is our documented default.
 */
export type Canonicalizer = {
  readonly name: string
  readonly canonicalize: (fields: Readonly<Record<string, unknown>>) => string
}

const isSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdfff

/**
 * Orders strings by their UTF-8 bytes, which is code-point order. JavaScript's `<` compares UTF-16
 * units, which differs only where a surrogate (a code point above U+FFFF) meets U+E000–U+FFFF.
 */
export const compareUtf8 = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) {
      const xs = isSurrogate(x)
      if (xs !== isSurrogate(y)) return xs ? 1 : -1
      return x - y
    }
  }
  return a.length - b.length
}

/** Compact JSON with object keys sorted (by UTF-8 bytes) at every depth. */
export const sortedJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') {
    const json = JSON.stringify(value)
    // JSON.stringify(undefined) is undefined: inside arrays JSON writes null, as it does here.
    return json === undefined ? 'null' : json
  }
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`
  const entries = Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => compareUtf8(a, b))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`
}

const SIGNATURE_FIELDS = new Set(['sign', 'sign_type'])

const valueText = (v: unknown): string => {
  // Stryker disable next-line StringLiteral: a string skipped here falls through to String(v), which gives it unchanged
  if (typeof v === 'string') return v
  if (typeof v === 'object' && v !== null) return sortedJson(v)
  // numbers, booleans and bigints as their JSON/decimal text
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: String(v) and v.toString() give the same text for a bigint, a number and a boolean, and null and undefined never get here (canonicalize drops them)
  return typeof v === 'bigint' ? v.toString() : String(v)
}

/**
 * satang-canonical-v1: drop `sign`, `sign_type`, null, undefined and empty-string fields; sort keys by
 * UTF-8 bytes; `key=value` joined by `&`; strings verbatim; objects and arrays as compact JSON with keys
 * sorted recursively.
 */
export const satangCanonicalV1: Canonicalizer = {
  name: 'satang-canonical-v1',
  canonicalize: (fields) =>
    Object.entries(fields)
      .filter(([k, v]) => !SIGNATURE_FIELDS.has(k) && v !== null && v !== undefined && v !== '')
      .sort(([a], [b]) => compareUtf8(a, b))
      .map(([k, v]) => `${k}=${valueText(v)}`)
      .join('&'),
}

/** Every canonicalizer satang knows, by the name configuration uses. */
export const canonicalizers: Readonly<Record<string, Canonicalizer>> = {
  [satangCanonicalV1.name]: satangCanonicalV1,
}
