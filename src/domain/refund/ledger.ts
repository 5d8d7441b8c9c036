import { keyOf } from '../events/natural-key.ts'
import type { RefundAmountReserved } from './events/refund-amount-reserved.ts'
import type { RefundLedgersOpened } from './events/refund-ledgers-opened.ts'

/**
 * The refundable ledger of one order: the refunds that took money back from it, one reservation each.
 * Refund decisions of an order are serialised on it (appended with the expected revision), and it is
 * read whole: a handful of events per order, never a scan of the merchant's refunds.
 */
export const refundableStreamName = (merchantId: string, merchantOrderId: string): string => `refundable-${merchantId}-${merchantOrderId}`

/** Where the merchant's ledgers were opened (the upgrade from the time before ledgers, done once). */
export const refundLedgersOpenedStreamName = (merchantId: string): string => `refundable-opened-${merchantId}`

// `s`: the id may hold line breaks (\n, \r, U+2028, U+2029 are text the gateway allows), which `.` alone does not match.
const REFUNDABLE_STREAM = /^refundable-(14\d{16,18})-(.+)$/s

export const parseRefundableStreamName = (stream: string): { readonly merchantId: string; readonly merchantOrderId: string } | null => {
  const m = REFUNDABLE_STREAM.exec(stream)
  return m === null || m[1] === undefined || m[2] === undefined ? null : { merchantId: m[1], merchantOrderId: m[2] }
}

export type RefundLedgerEvent = RefundAmountReserved | RefundLedgersOpened

/** One reservation per refund and ledger; the opening once per merchant. */
export const refundLedgerNaturalKey = (stream: string, e: RefundLedgerEvent): string =>
  e.type === 'RefundAmountReserved' ? keyOf(stream, e.type, e.data.merchantRefundId) : keyOf(stream, e.type)

/** What the ledger holds: each refund's reserved satang. */
export type RefundLedger = { readonly reserved: ReadonlyMap<string, bigint> }

export const emptyRefundLedger: RefundLedger = { reserved: new Map() }

/** The ledger after a reservation; a refund's first reservation stands. Total. */
export const evolveRefundLedger = (l: RefundLedger, e: RefundAmountReserved): RefundLedger =>
  l.reserved.has(e.data.merchantRefundId) ? l : { reserved: new Map([...l.reserved, [e.data.merchantRefundId, e.data.amount]]) }

/** What the order's refunds other than `merchantRefundId` took back. */
export const reservedByOthers = (l: RefundLedger, merchantRefundId: string): bigint =>
  [...l.reserved].reduce((sum, [id, amount]) => (id === merchantRefundId ? sum : sum + amount), 0n)
