import * as t from 'io-ts'
import { CalendarDateText } from '../../bangkok-time.ts'
import { nullable } from '../../events/codecs.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { BreakClass, ItemKind, ItemOutcome } from '../break-class.ts'

/** A sum of satang (totals, amounts at stake): a digit string in events, a `bigint` in memory. Not capped like one gateway amount. */
export const SatangSum = new t.Type<bigint, string, unknown>(
  'SatangSum',
  (u): u is bigint => typeof u === 'bigint' && u >= 0n,
  (u, c) => (typeof u === 'string' && /^(0|[1-9]\d{0,24})$/.test(u) ? t.success(BigInt(u)) : t.failure(u, c, 'must be a whole number of satang as a digit string')),
  (n) => n.toString(),
)

/** Which item: its kind, the ids the merchant knows it by, and its stream (null when satang has none). */
export const ItemRef = t.strict(
  {
    kind: ItemKind,
    /** merchant_order_id, merchant_refund_id or merchant_subscribe_id. */
    id: t.string,
    merchantOrderId: nullable(t.string),
    merchantRefundId: nullable(t.string),
    merchantSubscribeId: nullable(t.string),
    stream: nullable(t.string),
  },
  'ItemRef',
)
export type ItemRef = t.TypeOf<typeof ItemRef>

/** The key of an item within a merchant: kind and id. */
export const itemKeyOf = (r: { readonly kind: string; readonly id: string }): string => `${r.kind}:${r.id}`

/** What the gateway answer a verdict rests on left in the log: the trace id, and the natural key of the evidence event on the item's stream. */
export const Evidence = t.strict({ traceId: nullable(t.string), observationKey: nullable(t.string) }, 'Evidence')
export type Evidence = t.TypeOf<typeof Evidence>

/** One item as a run checked it. `day`: the Bangkok business day it belongs to (its creation, or a charge's due date). */
export const CheckedItem = t.strict(
  {
    kind: ItemKind,
    id: t.string,
    day: CalendarDateText,
    outcome: ItemOutcome,
    breakClass: nullable(BreakClass),
    breakId: nullable(t.string),
    /** The item's amount (the order, refund or charge). */
    amount: SatangSum,
    /** The satang at stake when the outcome is a break or unchecked, else 0. */
    atStake: SatangSum,
  },
  'CheckedItem',
)
export type CheckedItem = t.TypeOf<typeof CheckedItem>

/** What started a run. */
export const RunTrigger = oneOf('RunTrigger', ['cli', 'scheduler', 'api'])
export type RunTrigger = t.TypeOf<typeof RunTrigger>

/** `days`: the Bangkok business days from..to (and every open item); `sweep`: only items still open (pending, open breaks). */
export const RunScope = t.strict({ kind: oneOf('RunScopeKind', ['days', 'sweep']), from: nullable(CalendarDateText), to: nullable(CalendarDateText) }, 'RunScope')
export type RunScope = t.TypeOf<typeof RunScope>
