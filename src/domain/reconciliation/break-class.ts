import type * as t from 'io-ts'
import { oneOf } from '../gateway/text-codecs.ts'

/**
 * The classes of a reconciliation break (docs/finance.md "Break classes"). Payments and refunds are
 * compared with the gateway's query answers; subscriptions (which the gateway spec cannot be queried
 * for) with what their plan makes due.
 */
export const BREAK_CLASSES = [
  'amount_mismatch',
  'currency_mismatch',
  'status_conflict',
  'missing_at_gateway',
  'missing_internal',
  'stale_pending',
  'unknown_status',
  'refund_exceeds_payment',
  'query_failed',
  'missing_charge',
  'unexpected_charge',
  'suspension_mismatch',
] as const

export const BreakClass = oneOf('BreakClass', BREAK_CLASSES)
export type BreakClass = t.TypeOf<typeof BreakClass>

export const isBreakClass = (s: string): s is BreakClass => (BREAK_CLASSES as ReadonlyArray<string>).includes(s)

/** What the items of a run are: orders (payment queries), refunds (refund queries), subscriptions (their plan), and verified callbacks about nothing satang created. */
export const ITEM_KINDS = ['payment', 'refund', 'subscription', 'unmatched_callback'] as const
export const ItemKind = oneOf('ItemKind', ITEM_KINDS)
export type ItemKind = t.TypeOf<typeof ItemKind>

/**
 * How one item came out of a run. `unchecked`: the gateway could not answer (a `query_failed` break is
 * opened for it; the item is never assumed matched). `acknowledged`: still inconsistent, but a person
 * closed its break with a reason.
 */
export const ITEM_OUTCOMES = ['matched', 'healed', 'pending', 'unchecked', 'break', 'acknowledged'] as const
export const ItemOutcome = oneOf('ItemOutcome', ITEM_OUTCOMES)
export type ItemOutcome = t.TypeOf<typeof ItemOutcome>
