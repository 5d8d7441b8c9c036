import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { CalendarDate } from '../../domain/bangkok-time.ts'
import { CalendarDateText } from '../../domain/bangkok-time.ts'
import { Position, type JsonObject } from '../../application/ports/event-store.ts'
import { Count, Instant, Integer, nullable, PositiveInt } from '../../domain/events/codecs.ts'
import { discrepancyObserved } from '../../domain/events/common/discrepancy-observed.ts'
import { JsonObjectCodec } from '../../domain/events/json.ts'
import { oneOf } from '../../domain/gateway/text-codecs.ts'
import { SubscriptionMerchantUrls, SubscriptionOperation } from '../../domain/subscription/events/subscription-requested.ts'
import { SubscriptionPlan } from '../../domain/subscription/plan.ts'
import { initialSubscriptionState, type PendingRequest, type Subscription, type SubscriptionState } from '../../domain/subscription/state.ts'
import { isValidCalendarDate, type ChargeState } from '../../domain/subscription-schedule.ts'
import { describeErrors, keepEventData, KeptEventData, readKeptEventData } from '../kept-state.ts'

/*
 * The subscription aggregate's state as JSON, so that the `subscriptions` projection can keep it
 * between batches and evolve it with the domain's own `evolve`: the read model then agrees with the
 * aggregate by construction. Instants are ISO-8601 UTC text, satang digit strings, plans as events
 * carry them, the schedule's dates as `{ year, month, day }`, discrepancies as the event data they
 * came from (with its schema version, so a later version of the event still reads).
 *
 * `observationKeys` is NOT kept: only `decide` reads it (to drop a callback already recorded),
 * `evolve` only adds to it, and no read model shows it; it would grow with every callback. A decoded
 * state carries an empty set, so it must never be handed to `decide`.
 */

const embedded = readKeptEventData('subscription state')

const Lifecycle = oneOf('SubscriptionLifecycle', ['requested', 'request_failed', 'outcome_unknown', 'created', 'active', 'suspended', 'cancelled'])

const Pending = t.strict({
  requestSeq: PositiveInt,
  operation: SubscriptionOperation,
  plan: nullable(SubscriptionPlan),
  phase: oneOf('PendingPhase', ['requested', 'outcome_unknown']),
  requestedAt: Instant,
})

const DateParts = t.strict({ year: Integer, month: Integer, day: Integer })

/** A calendar date of the schedule, as numbers (the schedule computes with any year). */
const ScheduleDate = new t.Type<CalendarDate, { readonly year: number; readonly month: number; readonly day: number }, unknown>(
  'ScheduleDate',
  (u): u is CalendarDate => DateParts.is(u) && isValidCalendarDate(u),
  (u, c) => {
    const decoded = DateParts.validate(u, c)
    if (E.isLeft(decoded)) return decoded
    return isValidCalendarDate(decoded.right) ? t.success(decoded.right) : t.failure(u, c, 'must be a calendar date')
  },
  (d) => ({ year: d.year, month: d.month, day: d.day }),
)

const Charges = t.exact(
  t.intersection([
    t.type({
      termsCharged: Count,
      consecutiveFailures: Count,
      status: oneOf('ChargeStatus', ['ACTIVE', 'SUSPEND', 'COMPLETED', 'CANCELLED']),
      nextAttempt: nullable(ScheduleDate),
    }),
    t.partial({ termsSkipped: Count }),
  ]),
)

const Stored = t.strict({
  merchantId: t.string,
  merchantSubscribeId: t.string,
  plan: SubscriptionPlan,
  merchantUrls: SubscriptionMerchantUrls,
  recurringBillId: nullable(t.string),
  linkUrl: nullable(t.string),
  lifecycle: Lifecycle,
  pending: nullable(Pending),
  lastRequestSeq: Count,
  charges: nullable(Charges),
  discrepancies: t.array(KeptEventData),
})

// Built field by field: io-ts `encode` copies keys it does not know (`_tag`, `observationKeys`).
const encodePending = (p: PendingRequest): t.TypeOf<typeof Pending> => ({
  requestSeq: p.requestSeq,
  operation: p.operation,
  plan: p.plan,
  phase: p.phase,
  requestedAt: p.requestedAt,
})

const encodeCharges = (c: ChargeState): t.TypeOf<typeof Charges> => ({
  termsCharged: c.termsCharged,
  consecutiveFailures: c.consecutiveFailures,
  status: c.status,
  nextAttempt: c.nextAttempt,
  ...(c.termsSkipped === undefined ? {} : { termsSkipped: c.termsSkipped }),
})

const encodeSubscription = (s: Subscription): JsonObject =>
  Stored.encode({
    merchantId: s.merchantId,
    merchantSubscribeId: s.merchantSubscribeId,
    plan: s.plan,
    merchantUrls: { notifyUrl: s.merchantUrls.notifyUrl, redirectUrl: s.merchantUrls.redirectUrl },
    recurringBillId: s.recurringBillId,
    linkUrl: s.linkUrl,
    lifecycle: s.lifecycle,
    pending: s.pending === null ? null : encodePending(s.pending),
    lastRequestSeq: s.lastRequestSeq,
    charges: s.charges === null ? null : encodeCharges(s.charges),
    discrepancies: s.discrepancies.map((d) => keepEventData(discrepancyObserved, d)),
  })

/** The state as JSON; `null` for a subscription stream without its create request (nothing to keep). */
export const encodeSubscriptionState = (s: SubscriptionState): JsonObject | null => (s._tag === 'NoSubscription' ? null : encodeSubscription(s))

/** The state back from `encodeSubscriptionState`'s JSON (`null` → no subscription). Throws on anything else: the projection stops on it. */
export const decodeSubscriptionState = (json: unknown): SubscriptionState => {
  if (json === null || json === undefined) return initialSubscriptionState
  const decoded = Stored.decode(json)
  if (E.isLeft(decoded)) throw new Error(`subscription state does not decode: ${describeErrors(decoded.left)}`)
  const s = decoded.right
  const subscription: Subscription = {
    _tag: 'Subscription',
    merchantId: s.merchantId,
    merchantSubscribeId: s.merchantSubscribeId,
    plan: s.plan,
    merchantUrls: s.merchantUrls,
    recurringBillId: s.recurringBillId,
    linkUrl: s.linkUrl,
    lifecycle: s.lifecycle,
    pending: s.pending,
    lastRequestSeq: s.lastRequestSeq,
    charges: s.charges,
    observationKeys: new Set(),
    discrepancies: s.discrepancies.map(embedded(discrepancyObserved)),
  }
  return subscription
}

// ---- what the `subscriptions` projection keeps per stream ----

/**
 * The aggregate state of one subscription plus what the read model shows that the aggregate does not
 * keep. Stored (internal) in `subscriptions.projection_state`.
 */
export type SubscriptionView = {
  readonly state: Subscription
  /** When the create was requested (SubscriptionRequested, UTC). */
  readonly createdAt: Date
  /** SubscriptionCharged events: successful deductions over the subscription's whole life. */
  readonly chargesSucceeded: number
  /** SubscriptionChargeFailed events: failed deductions over the subscription's whole life. */
  readonly chargesFailed: number
  /** The latest billing date (Bangkok, `yyyy-MM-dd`) of a successful deduction. */
  readonly lastChargeDate: string | null
  /** The latest billing date (Bangkok, `yyyy-MM-dd`) of a failed deduction. */
  readonly lastFailedChargeDate: string | null
  /** Position of the stream's last event applied. */
  readonly lastEventPosition: Position
  /** When the store committed the stream's last event applied (UTC). */
  readonly updatedAt: Date
}

/** Bumped whenever the stored shape changes; a view stored by another version stops the projection with a request to rebuild it. */
export const SUBSCRIPTION_VIEW_VERSION = 1

const StoredView = t.strict({
  version: t.literal(SUBSCRIPTION_VIEW_VERSION),
  state: JsonObjectCodec,
  createdAt: Instant,
  chargesSucceeded: Count,
  chargesFailed: Count,
  lastChargeDate: nullable(CalendarDateText),
  lastFailedChargeDate: nullable(CalendarDateText),
  lastEventPosition: Position,
  updatedAt: Instant,
})

export const encodeSubscriptionView = (v: SubscriptionView): JsonObject =>
  StoredView.encode({
    version: SUBSCRIPTION_VIEW_VERSION,
    state: encodeSubscription(v.state),
    createdAt: v.createdAt,
    chargesSucceeded: v.chargesSucceeded,
    chargesFailed: v.chargesFailed,
    lastChargeDate: v.lastChargeDate,
    lastFailedChargeDate: v.lastFailedChargeDate,
    lastEventPosition: v.lastEventPosition,
    updatedAt: v.updatedAt,
  })

/** The view back from `encodeSubscriptionView`'s JSON. Throws (naming what is wrong) on anything else. */
export const decodeSubscriptionView = (json: unknown): SubscriptionView => {
  const decoded = StoredView.decode(json)
  if (E.isLeft(decoded)) {
    throw new Error(`subscriptions projection state does not decode (rebuild the projection: satang project --rebuild subscriptions): ${describeErrors(decoded.left)}`)
  }
  const v = decoded.right
  const state = decodeSubscriptionState(v.state)
  if (state._tag !== 'Subscription') throw new Error('subscriptions projection state holds no subscription')
  return {
    state,
    createdAt: v.createdAt,
    chargesSucceeded: v.chargesSucceeded,
    chargesFailed: v.chargesFailed,
    lastChargeDate: v.lastChargeDate,
    lastFailedChargeDate: v.lastFailedChargeDate,
    lastEventPosition: v.lastEventPosition,
    updatedAt: v.updatedAt,
  }
}
