import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { paymentView } from '../../domain/order/view.ts'
import type { JsonObject } from '../../application/ports/event-store.ts'
import { Instant, nullable } from '../../domain/events/codecs.ts'
import { awaitsOutcome, evolve, isFinal, isOrderEvent, isPaid, needsReview, type OrderEvent, type OrderState } from '../../domain/order/index.ts'
import { describeErrors, loadKeptStates } from '../kept-state.ts'
import { decodeOrderState, encodeOrderState } from './state.ts'
import { isoOrNull, unnestParameters, upsertFromUnnest, type Columns } from '../sql.ts'
import { qualified, type ProjectedEvent, type Projection, type ProjectionTarget } from '../types.ts'

/**
 * `orders`: one row per order stream, the order as the aggregate folds it (status, class, request
 * phase, review flags) plus what finance and support ask about it (amount, channel, created and
 * completed times in UTC and Bangkok, counts of redirects, notifications and queries seen).
 *
 * The projection keeps each order's aggregate state (`projection_state`, internal) and evolves it
 * with the domain's own `evolve`, so the row always equals the fold of the stream.
 */

/** What the row shows beyond the aggregate state: counted and remembered from the events. */
const Extras = t.strict({
  completedAt: nullable(Instant),
  gatewayResponse: nullable(t.UnknownRecord),
  redirects: t.number,
  notifications: t.number,
  queries: t.number,
  events: t.number,
})
type Extras = t.TypeOf<typeof Extras>

const Kept = t.strict({ state: t.union([t.UnknownRecord, t.null]), extras: Extras })

const NO_EXTRAS: Extras = { completedAt: null, gatewayResponse: null, redirects: 0, notifications: 0, queries: 0, events: 0 }

/** `pending` (not final yet), `paid` (final, succeeded), `failed` (final, failed), `unknown` (no status yet, a code the table does not know, or the create's outcome is unknown). */
export type StatusClass = 'pending' | 'paid' | 'failed' | 'unknown'

export const statusClassOf = (s: OrderState): StatusClass => {
  if (s._tag === 'NoOrder' || s.status === null || s.status.classification.needsReview) return 'unknown'
  if (isPaid(s)) return 'paid'
  if (isFinal(s.status)) return 'failed'
  return awaitsOutcome(s) ? 'unknown' : 'pending'
}

/**
 * The extras after `e` (the state before and after it given). Events before the order exists (a
 * refused callback naming an order not created yet) count for nothing: the row starts at OrderCreated,
 * so it does not depend on how the events were split into batches.
 */
const nextExtras = (x: Extras, before: OrderState, after: OrderState, e: OrderEvent): Extras => {
  if (after._tag === 'NoOrder') return x
  const becameFinal = !(before._tag === 'Order' && isFinal(before.status)) && after._tag === 'Order' && isFinal(after.status)
  const completedAt = becameFinal ? (e.type === 'StatusObserved' ? (e.data.completeTime ?? e.data.observedAt) : (after.status?.observedAt ?? null)) : x.completedAt
  return {
    completedAt,
    gatewayResponse: e.type === 'PaymentRequestAccepted' ? e.data.response : x.gatewayResponse,
    redirects: x.redirects + (e.type === 'RedirectReceived' ? 1 : 0),
    notifications: x.notifications + (e.type === 'NotificationReceived' ? 1 : 0),
    queries: x.queries + ((e.type === 'StatusObserved' || e.type === 'DiscrepancyObserved') && e.data.source === 'query' ? 1 : 0),
    events: x.events + 1,
  }
}

/** Folds one order's events onto its kept state (also used by tests: the row equals this fold). */
export const foldOrder = (start: { state: OrderState; extras: Extras }, events: ReadonlyArray<OrderEvent>): { state: OrderState; extras: Extras } =>
  events.reduce(({ state, extras }, e) => {
    const after = evolve(state, e)
    return { state: after, extras: nextExtras(extras, state, after, e) }
  }, start)

export const initialOrderFold = (): { state: OrderState; extras: Extras } => ({ state: { _tag: 'NoOrder' }, extras: NO_EXTRAS })

/** The row's columns (values as `unnestParameters` sends them, see ../sql.ts). Exported for tests that compare the table with a fold. */
export const orderRowOf = (stream: string, w: { state: OrderState; extras: Extras }, last: { position: string; recordedAt: Date }): JsonObject | null => {
  const s = w.state
  if (s._tag === 'NoOrder') return null
  const o = s.order
  return {
    stream_name: stream,
    merchant_id: o.merchantId,
    merchant_order_id: o.merchantOrderId,
    store_id: o.storeId,
    gateway_order_id: s.gatewayOrderId,
    operation: o.operation,
    service: o.service,
    payment_method: o.paymentMethod,
    product_code: o.productCode,
    amount_satang: o.amount.toString(),
    currency: o.currency,
    status_code: s.status?.code ?? null,
    status_meaning: s.status?.classification.meaning ?? null,
    status_outcome: s.status?.classification.outcome ?? null,
    status_final: s.status?.classification.final ?? false,
    status_class: statusClassOf(s),
    status_source: s.status?.source ?? null,
    status_observed_at: isoOrNull(s.status?.observedAt ?? null),
    paid_amount_satang: isPaid(s) ? o.amount.toString() : null,
    request_phase: s.request.phase,
    outcome_unknown: awaitsOutcome(s),
    redirect_status: s.redirectStatus,
    redirects_seen: w.extras.redirects,
    notifications_seen: w.extras.notifications,
    queries_seen: w.extras.queries,
    open_discrepancies: s.discrepancies.length,
    unclassified_statuses: [...s.unclassifiedStatuses],
    needs_review: needsReview(s),
    created_at: isoOrNull(o.createdAt),
    completed_at: isoOrNull(w.extras.completedAt),
    events_seen: w.extras.events,
    last_event_position: last.position,
    last_event_recorded_at: isoOrNull(last.recordedAt),
    projection_state: { state: encodeOrderState(s), extras: Extras.encode(w.extras) as unknown as JsonObject },
  }
}

const COLUMNS: Columns = [
  ['stream_name', 'text'],
  ['merchant_id', 'text'],
  ['merchant_order_id', 'text'],
  ['store_id', 'text'],
  ['gateway_order_id', 'text'],
  ['operation', 'text'],
  ['service', 'text'],
  ['payment_method', 'text'],
  ['product_code', 'text'],
  ['amount_satang', 'bigint'],
  ['currency', 'text'],
  ['status_code', 'text'],
  ['status_meaning', 'text'],
  ['status_outcome', 'text'],
  ['status_final', 'boolean'],
  ['status_class', 'text'],
  ['status_source', 'text'],
  ['status_observed_at', 'timestamptz'],
  ['paid_amount_satang', 'bigint'],
  ['request_phase', 'text'],
  ['outcome_unknown', 'boolean'],
  ['redirect_status', 'text'],
  ['redirects_seen', 'integer'],
  ['notifications_seen', 'integer'],
  ['queries_seen', 'integer'],
  ['open_discrepancies', 'integer'],
  ['unclassified_statuses', 'text[]'],
  ['needs_review', 'boolean'],
  ['created_at', 'timestamptz'],
  ['completed_at', 'timestamptz'],
  ['events_seen', 'integer'],
  ['last_event_position', 'text'],
  ['last_event_recorded_at', 'timestamptz'],
  ['projection_state', 'jsonb'],
]

const createTables = (schema: string): ReadonlyArray<string> => {
  const t = qualified(schema, 'orders')
  return [
    `create table ${t} (
      stream_name            text collate "C" primary key,
      merchant_id            text not null,
      merchant_order_id      text not null,
      store_id               text,
      gateway_order_id       text,
      operation              text not null,
      service                text not null,
      payment_method         text,
      product_code           text,
      amount_satang          bigint not null check (amount_satang >= 0),
      currency               text not null,
      status_code            text,
      status_meaning         text,
      status_outcome         text,
      status_final           boolean not null,
      status_class           text not null check (status_class in ('pending', 'paid', 'failed', 'unknown')),
      status_source          text,
      status_observed_at     timestamptz,
      paid_amount_satang     bigint,
      request_phase          text not null,
      outcome_unknown        boolean not null,
      redirect_status        text,
      redirects_seen         integer not null,
      notifications_seen     integer not null,
      queries_seen           integer not null,
      open_discrepancies     integer not null,
      unclassified_statuses  text[] not null,
      needs_review           boolean not null,
      created_at             timestamptz not null,
      created_at_bangkok     timestamp generated always as (created_at at time zone 'Asia/Bangkok') stored,
      completed_at           timestamptz,
      completed_at_bangkok   timestamp generated always as (completed_at at time zone 'Asia/Bangkok') stored,
      events_seen            integer not null,
      last_event_position          text collate "C" not null,
      last_event_recorded_at timestamptz not null,
      projection_state       jsonb not null
    )`,
    `create unique index orders_merchant_order_key on ${t} (merchant_id, merchant_order_id)`,
    `create index orders_gateway_order_idx on ${t} (gateway_order_id) where gateway_order_id is not null`,
    `create index orders_status_class_idx on ${t} (status_class, created_at)`,
    `create index orders_review_idx on ${t} (merchant_id) where needs_review or outcome_unknown`,
    `create index orders_created_bangkok_idx on ${t} (created_at_bangkok)`,
    `comment on table ${t} is 'satang read model: one row per order (projection orders); projection_state is internal'`,
  ]
}

/** A row's `projection_state` back: the order's aggregate state and the extras. */
const decodeKept = (json: unknown): { state: OrderState; extras: Extras } => {
  const decoded = Kept.decode(json)
  if (E.isLeft(decoded)) throw new Error(`orders projection_state does not decode: ${describeErrors(decoded.left)}`)
  return { state: decodeOrderState(decoded.right.state), extras: decoded.right.extras }
}

/** The payment as the merchant API shows it (`GET /v1/payments/{id}`), from a row's `projection_state`; null when it holds no order. */
export const paymentViewOfRow = (projectionState: unknown): JsonObject | null => {
  const { state, extras } = decodeKept(projectionState)
  return state._tag === 'Order' ? { ...paymentView(state, []), gateway_response: extras.gatewayResponse as JsonObject | null } : null
}

const upsertSql = (schema: string): string => upsertFromUnnest(qualified(schema, 'orders'), COLUMNS, 'stream_name', 1)

const apply = async (target: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
  const byStream = new Map<string, ProjectedEvent[]>()
  for (const e of events) {
    if (!isOrderEvent(e.event)) continue
    const list = byStream.get(e.streamName)
    if (list === undefined) byStream.set(e.streamName, [e])
    else list.push(e)
  }
  if (byStream.size === 0) return
  const kept = await loadKeptStates(target, 'orders', [...byStream.keys()], decodeKept)
  const rows: JsonObject[] = []
  for (const [stream, list] of byStream) {
    const folded = foldOrder(kept.get(stream) ?? initialOrderFold(), list.map((e) => e.event as OrderEvent))
    const last = list.at(-1)
    if (last === undefined) continue
    const row = orderRowOf(stream, folded, last)
    if (row !== null) rows.push(row)
  }
  if (rows.length > 0) await target.client.query(upsertSql(target.schema), unnestParameters(COLUMNS, rows))
}

export const ordersProjection: Projection = {
  name: 'orders',
  description: 'one row per order: status and class, amount, channel, times (UTC and Bangkok), counts, review flags',
  streams: ['order-'],
  tables: ['orders'],
  createTables,
  apply,
}

