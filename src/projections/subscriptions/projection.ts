import { formatCalendarDate, type CalendarDate } from '../../domain/bangkok-time.ts'
import type { JsonObject } from '../../application/ports/event-store.ts'
import { isSubscriptionEvent, type SubscriptionEvent } from '../../domain/subscription/events/index.ts'
import { evolve } from '../../domain/subscription/evolve.ts'
import { initialSubscriptionState, needsReview, subscriptionStatusOf, type Subscription, type SubscriptionDisplayStatus } from '../../domain/subscription/state.ts'
import { decodeSubscriptionView, encodeSubscriptionView, type SubscriptionView } from './state.ts'
import { loadKeptStates } from '../kept-state.ts'
import { unnestParameters, unnestSelect, upsertFromUnnest, type Columns } from '../sql.ts'
import { qualified, type ProjectedEvent, type Projection, type ProjectionTarget } from '../types.ts'

/**
 * The `subscriptions` projection owns two tables:
 *
 * - `subscriptions`: one row per subscription stream (`subscription-<merchant_id>-<merchant_subscribe_id>`):
 *   the status as the aggregate shows it (with the derived CANCELLED and COMPLETED), the plan in force,
 *   the next expected charge date from the billing schedule (subscription-schedule.ts: month-end rule,
 *   next-day retry, SUSPEND after 3 failures), charge counts, times in UTC and Bangkok, review flags;
 * - `subscription_charges`: one row per charge outcome (SubscriptionCharged / SubscriptionChargeFailed).
 *
 * The projection keeps each subscription's aggregate state with a few counters (`projection_state`,
 * internal, see state.ts) and evolves it with the domain's own `evolve`, so the row always
 * equals the fold of the stream. A batch costs two statements: one select of the kept states of the
 * batch's streams, one statement upserting their rows and inserting the batch's charge outcomes.
 */

export const SUBSCRIPTIONS_TABLE = 'subscriptions'
export const SUBSCRIPTION_CHARGES_TABLE = 'subscription_charges'
const STREAM_PREFIX = 'subscription-'

/** The subscription event `pe` carries; an event of another aggregate in a subscription stream stops the projection. */
const subscriptionEventOf = (pe: ProjectedEvent): SubscriptionEvent => {
  if (isSubscriptionEvent(pe.event)) return pe.event
  throw new Error(`subscriptions: ${pe.streamName} revision ${pe.streamRevision.toString()} at position ${pe.position}: ${pe.event.type} is not an event of a subscription stream`)
}

const laterDate = (a: string | null, b: string): string => (a === null || b > a ? b : a)

/**
 * The view after `pe` (null until the stream's create request: events before it change no
 * subscription). The state is the domain's `evolve`; the extras are counted from the events.
 */
export const evolveSubscriptionView = (view: SubscriptionView | null, pe: ProjectedEvent): SubscriptionView | null => {
  const e = subscriptionEventOf(pe)
  const state = evolve(view?.state ?? initialSubscriptionState, e)
  if (state._tag === 'NoSubscription') return view
  const createdAt = view?.createdAt ?? (e.type === 'SubscriptionRequested' ? e.data.requestedAt : pe.recordedAt)
  const counts = {
    chargesSucceeded: view?.chargesSucceeded ?? 0,
    chargesFailed: view?.chargesFailed ?? 0,
    lastChargeDate: view?.lastChargeDate ?? null,
    lastFailedChargeDate: view?.lastFailedChargeDate ?? null,
  }
  const charged =
    e.type === 'SubscriptionCharged'
      ? { ...counts, chargesSucceeded: counts.chargesSucceeded + 1, lastChargeDate: laterDate(counts.lastChargeDate, e.data.billingDate) }
      : e.type === 'SubscriptionChargeFailed'
        ? { ...counts, chargesFailed: counts.chargesFailed + 1, lastFailedChargeDate: laterDate(counts.lastFailedChargeDate, e.data.billingDate) }
        : counts
  return { state, createdAt, ...charged, lastEventPosition: pe.position, updatedAt: pe.recordedAt }
}

/** Folds events of ONE subscription stream, in log order, onto a view (tests compare the table with this). */
export const foldSubscriptionView = (events: ReadonlyArray<ProjectedEvent>, start: SubscriptionView | null = null): SubscriptionView | null =>
  events.reduce(evolveSubscriptionView, start)

/**
 * The next date (Bangkok calendar date) on which the schedule expects a charge attempt: the regular
 * billing date, or the next-day retry after a failure (retry = Y). Null when none is expected: not yet
 * authorised by the payer (REQUESTED, CREATED, …), SUSPEND, CANCELLED, COMPLETED. It stays in the past
 * when the gateway's notification for it has not arrived (an overdue charge).
 */
export const nextChargeDateOf = (s: Subscription): CalendarDate | null =>
  subscriptionStatusOf(s) === 'ACTIVE' && s.charges !== null && s.charges.status === 'ACTIVE' ? s.charges.nextAttempt : null

const statusOf = (s: Subscription): SubscriptionDisplayStatus => {
  const status = subscriptionStatusOf(s)
  if (status === null) throw new Error('subscriptions: a subscription without a status')
  return status
}

const dateText = (d: CalendarDate | null): string | null => (d === null ? null : formatCalendarDate(d))

/**
 * The `subscriptions` row's columns (as `unnestParameters` sends them: instants as ISO text, dates as
 * `yyyy-MM-dd`, satang as digit strings), without `projection_state` and the generated `*_bangkok`
 * columns. Exported for tests.
 */
export const subscriptionRowOf = (stream: string, v: SubscriptionView): JsonObject => {
  const s = v.state
  const p = s.plan
  return {
    stream_name: stream,
    merchant_id: s.merchantId,
    merchant_subscribe_id: s.merchantSubscribeId,
    recurring_bill_id: s.recurringBillId,
    status: statusOf(s),
    link_url: s.linkUrl,
    plan_name: p.planName,
    plan_desc: p.planDesc,
    interval_type: p.intervalType,
    interval_count: p.interval,
    total_terms: p.totalTerms,
    billing_amount_satang: p.billingAmount.toString(),
    currency: p.currency,
    retry: p.retry,
    start_date: p.startDate,
    next_charge_date: dateText(nextChargeDateOf(s)),
    terms_charged: s.charges?.termsCharged ?? 0,
    charges_succeeded: v.chargesSucceeded,
    charges_failed: v.chargesFailed,
    consecutive_failures: s.charges?.consecutiveFailures ?? 0,
    last_charge_date: v.lastChargeDate,
    last_failed_charge_date: v.lastFailedChargeDate,
    pending_operation: s.pending?.operation ?? null,
    pending_phase: s.pending?.phase ?? null,
    needs_review: needsReview(s),
    open_discrepancies: s.discrepancies.length,
    created_at: v.createdAt.toISOString(),
    updated_at: v.updatedAt.toISOString(),
    last_event_position: v.lastEventPosition,
  }
}

/**
 * The `subscription_charges` row of `pe` when it is a charge outcome of a known subscription (`view` is
 * the view after it), else null. Exported for tests.
 */
export const chargeRowOf = (view: SubscriptionView | null, pe: ProjectedEvent): JsonObject | null => {
  const e = pe.event
  if (view === null || (e.type !== 'SubscriptionCharged' && e.type !== 'SubscriptionChargeFailed')) return null
  const s = view.state
  const common = {
    event_id: pe.eventId,
    stream_name: pe.streamName,
    merchant_id: s.merchantId,
    merchant_subscribe_id: s.merchantSubscribeId,
    recurring_bill_id: e.data.recurringBillId,
    billing_date: e.data.billingDate,
    expected_amount_satang: s.plan.billingAmount.toString(),
    notification_type: e.data.notificationType,
    observed_at: e.data.observedAt.toISOString(),
    position: pe.position,
  }
  return e.type === 'SubscriptionCharged'
    ? { ...common, outcome: 'succeeded', amount_satang: e.data.amount.toString(), currency: e.data.currency, amount_reported: e.data.amountReported }
    : { ...common, outcome: 'failed', amount_satang: null, currency: s.plan.currency, amount_reported: null }
}


/** Columns written from `subscriptionRowOf` + `projection_state`, with their types (the `*_bangkok` ones are generated). */
const SUBSCRIPTION_COLUMNS: Columns = [
  ['stream_name', 'text'],
  ['merchant_id', 'text'],
  ['merchant_subscribe_id', 'text'],
  ['recurring_bill_id', 'text'],
  ['status', 'text'],
  ['link_url', 'text'],
  ['plan_name', 'text'],
  ['plan_desc', 'text'],
  ['interval_type', 'text'],
  ['interval_count', 'integer'],
  ['total_terms', 'integer'],
  ['billing_amount_satang', 'bigint'],
  ['currency', 'text'],
  ['retry', 'text'],
  ['start_date', 'date'],
  ['next_charge_date', 'date'],
  ['terms_charged', 'integer'],
  ['charges_succeeded', 'integer'],
  ['charges_failed', 'integer'],
  ['consecutive_failures', 'integer'],
  ['last_charge_date', 'date'],
  ['last_failed_charge_date', 'date'],
  ['pending_operation', 'text'],
  ['pending_phase', 'text'],
  ['needs_review', 'boolean'],
  ['open_discrepancies', 'integer'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
  ['last_event_position', 'text'],
  ['projection_state', 'jsonb'],
]

/** Columns written from `chargeRowOf` (`observed_at_bangkok` is generated). */
const CHARGE_COLUMNS: Columns = [
  ['event_id', 'uuid'],
  ['stream_name', 'text'],
  ['merchant_id', 'text'],
  ['merchant_subscribe_id', 'text'],
  ['recurring_bill_id', 'text'],
  ['billing_date', 'date'],
  ['outcome', 'text'],
  ['amount_satang', 'bigint'],
  ['expected_amount_satang', 'bigint'],
  ['currency', 'text'],
  ['amount_reported', 'boolean'],
  ['notification_type', 'text'],
  ['observed_at', 'timestamptz'],
  ['position', 'text'],
]

const createTables = (schema: string): ReadonlyArray<string> => {
  const subs = qualified(schema, SUBSCRIPTIONS_TABLE)
  const charges = qualified(schema, SUBSCRIPTION_CHARGES_TABLE)
  return [
    `create table ${subs} (
      stream_name              text collate "C" primary key,
      merchant_id              text not null,
      merchant_subscribe_id    text not null,
      recurring_bill_id        text,
      status                   text not null check (status in ('REQUESTED', 'REQUEST_FAILED', 'OUTCOME_UNKNOWN', 'CREATED', 'ACTIVE', 'SUSPEND', 'COMPLETED', 'CANCELLED')),
      link_url                 text,
      plan_name                text not null,
      plan_desc                text,
      interval_type            text not null,
      interval_count           integer not null,
      total_terms              integer not null,
      billing_amount_satang    bigint not null check (billing_amount_satang >= 0),
      currency                 text not null,
      retry                    text not null,
      start_date               date not null,
      next_charge_date         date,
      terms_charged            integer not null,
      charges_succeeded        integer not null,
      charges_failed           integer not null,
      consecutive_failures     integer not null,
      last_charge_date         date,
      last_failed_charge_date  date,
      pending_operation        text,
      pending_phase            text,
      needs_review             boolean not null,
      open_discrepancies       integer not null,
      created_at               timestamptz not null,
      created_at_bangkok       timestamp generated always as (created_at at time zone 'Asia/Bangkok') stored,
      updated_at               timestamptz not null,
      updated_at_bangkok       timestamp generated always as (updated_at at time zone 'Asia/Bangkok') stored,
      last_event_position      text collate "C" not null,
      projection_state         jsonb not null
    )`,
    `create unique index subscriptions_merchant_subscribe_key on ${subs} (merchant_id, merchant_subscribe_id)`,
    `create index subscriptions_recurring_bill_idx on ${subs} (recurring_bill_id) where recurring_bill_id is not null`,
    `create index subscriptions_status_idx on ${subs} (status)`,
    `create index subscriptions_next_charge_idx on ${subs} (next_charge_date) where next_charge_date is not null`,
    `create index subscriptions_review_idx on ${subs} (merchant_id) where needs_review or pending_phase = 'outcome_unknown'`,
    `comment on table ${subs} is 'satang read model: one row per subscription (projection subscriptions); projection_state is internal'`,
    `comment on column ${subs}.projection_state is 'internal: the subscription aggregate state and counters the projection evolves; not a public contract'`,
    `create table ${charges} (
      event_id                uuid primary key,
      stream_name             text collate "C" not null,
      merchant_id             text not null,
      merchant_subscribe_id   text not null,
      recurring_bill_id       text not null,
      billing_date            date not null,
      outcome                 text not null check (outcome in ('succeeded', 'failed')),
      amount_satang           bigint check (amount_satang >= 0),
      expected_amount_satang  bigint not null,
      currency                text not null,
      amount_reported         boolean,
      notification_type       text,
      observed_at             timestamptz not null,
      observed_at_bangkok     timestamp generated always as (observed_at at time zone 'Asia/Bangkok') stored,
      position                text collate "C" not null,
      check ((outcome = 'succeeded') = (amount_satang is not null and amount_reported is not null))
    )`,
    `create index subscription_charges_subscription_idx on ${charges} (merchant_id, merchant_subscribe_id, billing_date)`,
    `create index subscription_charges_billing_date_idx on ${charges} (billing_date, outcome)`,
    `comment on table ${charges} is 'satang read model: one row per subscription charge outcome (projection subscriptions)'`,
  ]
}

/** One statement: upsert the subscriptions (parameters from $1), insert the charge outcomes (the parameters after them). */
const writeSql = (schema: string): string =>
  `with upserted as (${upsertFromUnnest(qualified(schema, SUBSCRIPTIONS_TABLE), SUBSCRIPTION_COLUMNS, 'stream_name', 1)})
   insert into ${qualified(schema, SUBSCRIPTION_CHARGES_TABLE)} (${CHARGE_COLUMNS.map(([n]) => n).join(', ')})
   ${unnestSelect(CHARGE_COLUMNS, 1 + SUBSCRIPTION_COLUMNS.length)}`

const apply = async (target: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
  const mine = events.filter((e) => e.streamName.startsWith(STREAM_PREFIX))
  if (mine.length === 0) return
  const views: Map<string, SubscriptionView | null> = await loadKeptStates(target, SUBSCRIPTIONS_TABLE, [...new Set(mine.map((e) => e.streamName))], decodeSubscriptionView)
  const changed = new Set<string>()
  const charges: JsonObject[] = []
  for (const pe of mine) {
    const view = evolveSubscriptionView(views.get(pe.streamName) ?? null, pe)
    if (view === null) continue
    views.set(pe.streamName, view)
    changed.add(pe.streamName)
    const charge = chargeRowOf(view, pe)
    if (charge !== null) charges.push(charge)
  }
  const rows: JsonObject[] = []
  for (const stream of changed) {
    const view = views.get(stream)
    if (view !== undefined && view !== null) rows.push({ ...subscriptionRowOf(stream, view), projection_state: encodeSubscriptionView(view) })
  }
  if (rows.length > 0) await target.client.query(writeSql(target.schema), [...unnestParameters(SUBSCRIPTION_COLUMNS, rows), ...unnestParameters(CHARGE_COLUMNS, charges)])
}

export const subscriptionsProjection: Projection = {
  name: 'subscriptions',
  description: 'one row per subscription (status incl. CANCELLED/COMPLETED, plan, next expected charge date, failures) and one per charge outcome',
  streams: [STREAM_PREFIX],
  tables: [SUBSCRIPTIONS_TABLE, SUBSCRIPTION_CHARGES_TABLE],
  createTables,
  apply,
}
