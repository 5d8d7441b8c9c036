import { formatBangkokDateTime } from '../../bangkok-time.ts'

/*
 * Money and time as a person reads them (the console, the text and HTML reports, the CSV's readable
 * columns): baht with thousands separators and the baht sign, instants in Bangkok wall time labelled
 * as such. Machine columns (satang integers, ISO-8601 UTC) stay beside them where a program reads.
 */

const group = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')

/** Satang as baht with thousands separators and two decimals: `123456789n` → `1,234,567.89`, `-900n` → `-9.00`. */
export const groupedBaht = (satang: bigint): string => {
  const negative = satang < 0n
  const abs = negative ? -satang : satang
  return `${negative ? '-' : ''}${group((abs / 100n).toString())}.${(abs % 100n).toString().padStart(2, '0')}`
}

/** Satang as a person writes baht: `฿1,234.56`, `-฿9.00`. */
export const bahtText = (satang: bigint): string => (satang < 0n ? `-฿${groupedBaht(-satang)}` : `฿${groupedBaht(satang)}`)

/** A count with thousands separators. */
export const countText = (n: number | bigint): string => (typeof n === 'bigint' ? group(n.toString()) : n.toLocaleString('en-US'))

/** An instant in Bangkok wall time, labelled: `2026-11-26 21:03:05 Bangkok`. */
export const bangkokText = (d: Date): string => `${formatBangkokDateTime(d)} Bangkok`

/** An instant in Bangkok wall time without a label (a CSV column named for it): `2026-11-26 21:03:05`. */
export const bangkokLocal = (d: Date): string => formatBangkokDateTime(d)

/** An instant in UTC, to the second, labelled once: `2026-11-26 14:03:05 UTC`. */
export const utcText = (d: Date): string => `${d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, '')} UTC`

/** A baht amount as text (`"99.00"`, `"99"`, a digit-string of satang when `satangDigits`) → satang, or null when it is not one. */
export const satangOfText = (text: string, satangDigits: boolean): bigint | null => {
  if (satangDigits) return /^-?\d{1,15}$/.test(text) ? BigInt(text) : null
  const m = /^(-?)(\d{1,13})(?:\.(\d{1,2}))?$/.exec(text)
  if (m === null) return null
  const v = BigInt(m[2] ?? '0') * 100n + BigInt((m[3] ?? '').padEnd(2, '0'))
  return m[1] === '-' ? -v : v
}
