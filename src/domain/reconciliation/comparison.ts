import { formatAmount } from '../money.ts'
import type { BreakClass } from './break-class.ts'

/** How long satang waits before a "not found" or a pending status is a break (configurable). */
export type ComparePolicy = {
  /** The instant the comparison is made as of (the run's clock). */
  readonly asOf: Date
  /** A "not found" is trusted only this long after satang believed the gateway had the item (a create may still be in flight). */
  readonly notFoundGraceMs: number
  /** A status both sides still call pending becomes `stale_pending` this long after the link's expiry (or the item's creation when no expiry is known). */
  readonly stalePendingMs: number
}

/**
 * The verdict on one item: exactly one of these.
 * - `Matched`: both sides agree and the item is final (or both agree it does not exist).
 * - `Pending`: both sides agree it is still open, and it is not stale.
 * - `Heal`: the gateway's answer proves a fact satang missed (a final status, or that a create never
 *   arrived); recording it through the aggregate heals the item.
 * - `Unchecked`: the gateway could not answer; a `query_failed` break.
 * - `Break`: a break of `class`, with the satang at stake.
 */
export type Comparison =
  | { readonly _tag: 'Matched' }
  | { readonly _tag: 'Pending'; readonly why: string }
  | { readonly _tag: 'Heal'; readonly to: string; readonly amountAtStake: bigint }
  | { readonly _tag: 'Unchecked'; readonly reason: string; readonly amountAtStake: bigint }
  | { readonly _tag: 'Break'; readonly class: BreakClass; readonly amountAtStake: bigint; readonly detail: string }

export const matched: Comparison = { _tag: 'Matched' }
export const pending = (why: string): Comparison => ({ _tag: 'Pending', why })
export const heal = (to: string, amountAtStake: bigint): Comparison => ({ _tag: 'Heal', to, amountAtStake })
export const unchecked = (reason: string, amountAtStake: bigint): Comparison => ({ _tag: 'Unchecked', reason, amountAtStake })
export const breakOf = (cls: BreakClass, amountAtStake: bigint, detail: string): Comparison => ({ _tag: 'Break', class: cls, amountAtStake, detail })

/** The break class a comparison opens, if any (`Unchecked` opens `query_failed`). */
export const breakClassOf = (c: Comparison): BreakClass | null => (c._tag === 'Break' ? c.class : c._tag === 'Unchecked' ? 'query_failed' : null)

export const absDiff = (a: bigint, b: bigint): bigint => (a > b ? a - b : b - a)

/** Whether `ms` have passed from `since` to `asOf`. */
export const elapsed = (since: Date, asOf: Date, ms: number): boolean => asOf.getTime() - since.getTime() >= ms

/**
 * An amount in a break's detail, in baht with its currency (`2025n`, `THB` → `20.25 THB`): the detail is
 * read by people beside amounts the gateway wrote in baht, so it never mixes in counts of satang.
 */
export const amountIn = (satang: bigint, currency: string): string => `${formatAmount(satang)} ${currency}`

/** What the gateway answered for an amount: its text, said to be no amount when it did not parse. */
export const gatewayAmount = (amount: bigint | null, text: string, currency: string): string => (amount === null ? `"${text}", which is not an amount` : amountIn(amount, currency))
