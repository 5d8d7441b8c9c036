import type { DomainEvent } from '../events/registry.ts'
import { formatAmount } from '../money.ts'
import { evolve } from '../order/evolve.ts'
import { isOrderEvent, type OrderEvent } from '../order/events/index.ts'
import { isPaid, paidAmountOf, type Order, type OrderState } from '../order/state.ts'
import { orderStreamName } from '../order/stream.ts'
import type { RefundRecordedData } from '../refund/events/refund-recorded.ts'
import type { SubscriptionChargedData } from '../subscription/events/subscription-charged.ts'
import { parseSubscriptionStreamName } from '../subscription/stream.ts'
import { SUBSCRIPTION_CHANNEL, UNKNOWN_CHANNEL } from './accounts.ts'
import { POSTING_RULE_BOOK, type PostingFact, type PostingLine, type PostingRules } from './rules.ts'

export type { PostingFact, PostingKind, PostingLine } from './rules.ts'

/*
 * Which facts move money in the merchant's books (rules.ts says which accounts they move, by version):
 *
 * - An order becomes paid (the aggregate's `isPaid` turns from false to true as an event is evolved
 *   with the domain's own `evolve`): Dr gateway_receivable / Cr sales, the order amount, on the order's
 *   channel (its `service`). A final status never regresses, so an order is paid at most once: later,
 *   duplicate or out-of-order observations post nothing, a failed final status never posts.
 * - A refund succeeded (`RefundRecorded`, recorded once per refund): Dr refunds / Cr gateway_receivable,
 *   on the refunded order's channel (`unknown` when satang never saw that order created).
 * - A subscription deduction succeeded (`SubscriptionCharged`): Dr gateway_receivable /
 *   Cr subscription_sales, channel `subscription` (the subscription requests name no payment method).
 *
 * Every posting is balanced per currency and names the event it comes from. Pure: no IO.
 */

/** A fact with the balanced lines one version of the rules gives it. */
export type Posting = PostingFact & { readonly ruleVersion: number; readonly lines: ReadonlyArray<PostingLine> }

/** The posting of a fact under `rules`. */
export const postingOf = (f: PostingFact, rules: PostingRules): Posting => ({ ...f, ruleVersion: rules.version, lines: rules.linesOf(f) })

/** The event a posting comes from. */
export type EventRef = { readonly eventId: string; readonly streamName: string }

/** An event as the ledger reads it. */
export type LedgerInput = EventRef & { readonly event: DomainEvent }

/** Per currency where debits and credits differ: what they sum to. Empty when balanced. */
export const imbalances = (lines: ReadonlyArray<PostingLine>): ReadonlyArray<{ readonly currency: string; readonly debit: bigint; readonly credit: bigint }> => {
  const sums = new Map<string, { debit: bigint; credit: bigint }>()
  for (const l of lines) {
    const s = sums.get(l.currency) ?? { debit: 0n, credit: 0n }
    sums.set(l.currency, { debit: s.debit + l.debit, credit: s.credit + l.credit })
  }
  return [...sums].filter(([, s]) => s.debit !== s.credit).map(([currency, s]) => ({ currency, ...s }))
}

/** Every line one-sided and not negative, and debits = credits per currency. */
export const isBalanced = (p: Pick<Posting, 'lines'>): boolean =>
  p.lines.length > 0 && p.lines.every((l) => l.debit >= 0n && l.credit >= 0n && (l.debit === 0n) !== (l.credit === 0n)) && imbalances(p.lines).length === 0

/*
 * Orders. What the ledger keeps of an order between events: the aggregate's state until it is paid;
 * once paid only where it was paid (paid is final, so no later event of the order can post again).
 */

export type OpenOrder = { readonly _tag: 'Open'; readonly state: Order }
export type PaidOrder = {
  readonly _tag: 'Paid'
  readonly merchantId: string
  readonly merchantOrderId: string
  readonly channel: string
  readonly currency: string
}
export type OrderTrack = OpenOrder | PaidOrder

/** Where an order's money goes: its channel and currency. */
export const channelOf = (t: OrderTrack): { readonly channel: string; readonly currency: string } =>
  t._tag === 'Paid' ? { channel: t.channel, currency: t.currency } : { channel: t.state.order.service, currency: t.state.order.currency }

const paidTime = (e: OrderEvent, s: Order): Date => {
  if (e.type === 'StatusObserved') return e.data.completeTime ?? e.data.observedAt
  // Stryker disable next-line OptionalChaining: called only once the order is paid, and a paid order has a status
  return s.status?.observedAt ?? s.order.createdAt
}

/** The order's track after `e`, and the fact `e` posts (when it is the event that paid the order). */
export const stepOrder = (track: OrderTrack | undefined, e: OrderEvent, ref: EventRef): { readonly track: OrderTrack | undefined; readonly posting: PostingFact | null } => {
  if (track?._tag === 'Paid') return { track, posting: null }
  const before: OrderState = track === undefined ? { _tag: 'NoOrder' } : track.state
  const after = evolve(before, e)
  if (after._tag === 'NoOrder') return { track, posting: null }
  const next: OrderTrack = after === before && track !== undefined ? track : { _tag: 'Open', state: after }
  if (isPaid(before) || !isPaid(after)) return { track: next, posting: null }
  const amount = paidAmountOf(after) ?? 0n
  const o = after.order
  const paid: PaidOrder = { _tag: 'Paid', merchantId: o.merchantId, merchantOrderId: o.merchantOrderId, channel: o.service, currency: o.currency }
  if (amount <= 0n) return { track: paid, posting: null }
  const status = after.status
  return {
    track: paid,
    posting: {
      kind: 'order_paid',
      eventId: ref.eventId,
      streamName: ref.streamName,
      merchantId: o.merchantId,
      merchantOrderId: o.merchantOrderId,
      merchantRefundId: null,
      merchantSubscribeId: null,
      postedAt: paidTime(e, after),
      description: `order ${o.merchantOrderId} paid ${formatAmount(amount)} ${o.currency} via ${o.service}${status === null ? '' : ` (status ${status.code} by ${status.source})`}`,
      amount,
      channel: o.service,
      currency: o.currency,
    },
  }
}

/** The fact of a successful refund; `order` is the refunded order's track, if satang saw it. */
export const refundPosting = (d: RefundRecordedData, order: OrderTrack | undefined, ref: EventRef): PostingFact | null => {
  if (d.amount <= 0n) return null
  const channel = order === undefined ? UNKNOWN_CHANNEL : channelOf(order).channel
  return {
    kind: 'refund_succeeded',
    eventId: ref.eventId,
    streamName: ref.streamName,
    merchantId: d.merchantId,
    merchantOrderId: d.merchantOrderId,
    merchantRefundId: d.merchantRefundId,
    merchantSubscribeId: null,
    postedAt: d.completeTime ?? d.observedAt,
    description: `refund ${d.merchantRefundId} of order ${d.merchantOrderId} succeeded: ${formatAmount(d.amount)} ${d.currency} back to the payer (by ${d.source})`,
    amount: d.amount,
    channel,
    currency: d.currency,
  }
}

/** The fact of a successful subscription deduction of the subscription stream `ref.streamName`. */
export const subscriptionChargePosting = (d: SubscriptionChargedData, ref: EventRef): PostingFact | null => {
  if (d.amount <= 0n) return null
  const ids = parseSubscriptionStreamName(ref.streamName)
  const subscribeId = ids?.merchantSubscribeId ?? ref.streamName
  return {
    kind: 'subscription_charged',
    eventId: ref.eventId,
    streamName: ref.streamName,
    merchantId: ids?.merchantId ?? 'unknown',
    merchantOrderId: null,
    merchantRefundId: null,
    merchantSubscribeId: subscribeId,
    postedAt: d.observedAt,
    description: `subscription ${subscribeId} charged ${formatAmount(d.amount)} ${d.currency} for ${d.billingDate} (recurring bill ${d.recurringBillId})`,
    amount: d.amount,
    channel: SUBSCRIPTION_CHANNEL,
    currency: d.currency,
  }
}

/** The stream prefixes whose events can post. */
export const LEDGER_STREAM_PREFIXES: ReadonlyArray<string> = ['order-', 'refund-', 'subscription-']

/** The order stream whose track an input needs (its own, or the refunded order's), or null. */
export const orderStreamNeeded = (input: LedgerInput): string | null => {
  const e = input.event
  if (input.streamName.startsWith('order-')) return isOrderEvent(e) ? input.streamName : null
  if (e.type === 'RefundRecorded' && input.streamName.startsWith('refund-')) return orderStreamName(e.data.merchantId, e.data.merchantOrderId)
  return null
}

export type LedgerFold = {
  /** The order tracks after the events (those given, updated). */
  readonly orders: ReadonlyMap<string, OrderTrack>
  /** Order streams whose track changed. */
  readonly changed: ReadonlySet<string>
  /** The facts that move money, in the order of the events. */
  readonly facts: ReadonlyArray<PostingFact>
  /** Their postings under `rules` (default: the rules in force). */
  readonly postings: ReadonlyArray<Posting>
}

/**
 * Applies events in log order to the order tracks `orders` (those of the order streams the events
 * need; missing ones are orders not seen yet) and returns the postings they make.
 */
export const foldLedger = (events: ReadonlyArray<LedgerInput>, orders: ReadonlyMap<string, OrderTrack> = new Map(), rules: PostingRules = POSTING_RULE_BOOK.current): LedgerFold => {
  const tracks = new Map(orders)
  const changed = new Set<string>()
  const postings: PostingFact[] = []
  for (const input of events) {
    const e = input.event
    if (input.streamName.startsWith('order-')) {
      if (!isOrderEvent(e)) continue
      const before = tracks.get(input.streamName)
      const { track, posting } = stepOrder(before, e, input)
      if (track !== before && track !== undefined) {
        tracks.set(input.streamName, track)
        changed.add(input.streamName)
      }
      if (posting !== null) postings.push(posting)
    } else if (e.type === 'RefundRecorded' && input.streamName.startsWith('refund-')) {
      const posting = refundPosting(e.data, tracks.get(orderStreamName(e.data.merchantId, e.data.merchantOrderId)), input)
      if (posting !== null) postings.push(posting)
    } else if (e.type === 'SubscriptionCharged' && input.streamName.startsWith('subscription-')) {
      const posting = subscriptionChargePosting(e.data, input)
      if (posting !== null) postings.push(posting)
    }
  }
  return { orders: tracks, changed, facts: postings, postings: postings.map((f) => postingOf(f, rules)) }
}
