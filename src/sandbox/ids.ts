import { randomUUID } from 'node:crypto'
import { bangkokDateOf } from '../domain/bangkok-time.ts'

const pad = (n: number, width: number): string => String(n).padStart(width, '0')

const datePart = (now: Date, yearDigits: 2 | 4): string => {
  const d = bangkokDateOf(now)
  return `${pad(d.year, 4).slice(-yearDigits)}${pad(d.month, 2)}${pad(d.day, 2)}`
}

/**
 * `order_id` and `refund_order_id` (string 18): `yyMMdd` of the sandbox's Bangkok date and a
 * 12-digit sequence shared by every id the sandbox issues, so no two ids are ever equal.
 */
export const gatewayBillId = (now: Date, sequence: number): string => `${datePart(now, 2)}${pad(sequence, 12)}`

/** `recurring_bill_id` (string 20): `yyyyMMdd` and the same 12-digit sequence. */
export const recurringBillId = (now: Date, sequence: number): string => `${datePart(now, 4)}${pad(sequence, 12)}`

/** A fresh `trace_id` for every response: 32 hex digits. */
export const newTraceId = (): string => randomUUID().replaceAll('-', '')
