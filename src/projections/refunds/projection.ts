import type { JsonObject } from '../../application/ports/event-store.ts'
import { isRefundEvent, type RefundEvent } from '../../domain/refund/events/index.ts'
import { evolve } from '../../domain/refund/evolve.ts'
import { initialRefundState, needsReview, type Refund } from '../../domain/refund/state.ts'
import { decodeRefundView, encodeRefundView, type RefundView } from './state.ts'
import { loadKeptStates } from '../kept-state.ts'
import { isoOrNull, unnestParameters, upsertFromUnnest, type Columns } from '../sql.ts'
import { qualified, type ProjectedEvent, type Projection, type ProjectionTarget } from '../types.ts'

/**
 * `refunds`: one row per tracked refund stream (`refund-<merchant_id>-<merchant_refund_id>`): the refund
 * as the aggregate folds it (status and its class, the recorded amount, review flags) plus what finance
 * and support ask about it (tracked, completed and recorded times in UTC and Bangkok, counts of
 * notifications and queries seen).
 *
 * The projection keeps each refund's aggregate state with those extras (`projection_state`, internal,
 * see state.ts) and evolves it with the domain's own `evolve`, so the row always equals the fold
 * of the stream. A batch costs two statements: one select of the kept states of the batch's streams,
 * one upsert of their rows.
 */

export const REFUNDS_TABLE = 'refunds'
const STREAM_PREFIX = 'refund-'

/**
 * - `pending`: no status observed yet, or a status the table knows that is not final;
 * - `succeeded`: a final, succeeded status (`RS`): the refund is recorded (`amount_satang`);
 * - `failed`: a final, failed status (a configured code);
 * - `unknown`: the status applied last is a code the status table does not know: kept, not final,
 *   flagged for review (`needs_review`).
 */
export type RefundStatusClass = 'pending' | 'succeeded' | 'failed' | 'unknown'

export const refundStatusClassOf = (r: Refund): RefundStatusClass => {
  if (r.status === null) return 'pending'
  const c = r.status.classification
  if (c.needsReview) return 'unknown'
  switch (c.outcome) {
    case 'pending':
      return 'pending'
    case 'succeeded':
      return 'succeeded'
    case 'failed':
      return 'failed'
  }
}

/** The refund event `pe` carries; an event of another aggregate in a refund stream stops the projection. */
const refundEventOf = (pe: ProjectedEvent): RefundEvent => {
  if (isRefundEvent(pe.event)) return pe.event
  throw new Error(`refunds: ${pe.streamName} revision ${pe.streamRevision.toString()} at position ${pe.position}: ${pe.event.type} is not an event of a refund stream`)
}

/**
 * The view after `pe` (null until the stream's RefundTracked: events before it change no refund). The
 * state is the domain's `evolve`; the extras are counted from the events.
 */
export const evolveRefundView = (view: RefundView | null, pe: ProjectedEvent): RefundView | null => {
  const e = refundEventOf(pe)
  const state = evolve(view?.state ?? initialRefundState, e)
  if (state._tag === 'NoRefund') return view
  // The status now in the state is the one this event reported (it was applied, not kept out by a final one).
  const applied =
    e.type === 'RefundStatusObserved' &&
    state.status !== null &&
    state.status.code === e.data.statusCode &&
    state.status.source === e.data.source &&
    state.status.observedAt.getTime() === e.data.observedAt.getTime()
  return {
    state,
    completedAt: applied ? (e.data.classification.final ? (e.data.completeTime ?? e.data.observedAt) : null) : (view?.completedAt ?? null),
    notificationsSeen: (view?.notificationsSeen ?? 0) + (e.type === 'NotificationReceived' ? 1 : 0),
    queriesSeen: (view?.queriesSeen ?? 0) + ((e.type === 'RefundStatusObserved' || e.type === 'DiscrepancyObserved') && e.data.source === 'query' ? 1 : 0),
    lastEventPosition: pe.position,
    updatedAt: pe.recordedAt,
  }
}

/** Folds events of ONE refund stream, in log order, onto a view (tests compare the table with this). */
export const foldRefundView = (events: ReadonlyArray<ProjectedEvent>, start: RefundView | null = null): RefundView | null => events.reduce(evolveRefundView, start)

/**
 * The row's columns (as `unnestParameters` sends them: instants as ISO text, satang as digit strings),
 * without `projection_state` and the generated `*_bangkok` columns. Exported for tests.
 */
export const refundRowOf = (stream: string, v: RefundView): JsonObject => {
  const s = v.state
  return {
    stream_name: stream,
    merchant_id: s.merchantId,
    merchant_refund_id: s.merchantRefundId,
    merchant_order_id: s.merchantOrderId,
    refund_order_id: s.refundOrderId,
    status_code: s.status?.code ?? null,
    status_meaning: s.status?.classification.meaning ?? null,
    status_class: refundStatusClassOf(s),
    status_final: s.status?.classification.final ?? false,
    status_source: s.status?.source ?? null,
    status_observed_at: isoOrNull(s.status?.observedAt ?? null),
    amount_satang: s.recorded?.amount.toString() ?? null,
    currency: s.recorded?.currency ?? null,
    tracked_by: s.trackedBy,
    tracked_at: s.trackedAt.toISOString(),
    completed_at: isoOrNull(v.completedAt),
    recorded_at: isoOrNull(s.recorded?.recordedAt ?? null),
    notifications_seen: v.notificationsSeen,
    queries_seen: v.queriesSeen,
    needs_review: needsReview(s),
    open_discrepancies: s.discrepancies.length,
    unclassified_statuses: [...s.unclassifiedStatuses],
    last_event_position: v.lastEventPosition,
    updated_at: v.updatedAt.toISOString(),
  }
}

/** Columns written from `refundRowOf` + `projection_state`, with their types (the `*_bangkok` ones are generated). */
const COLUMNS: Columns = [
  ['stream_name', 'text'],
  ['merchant_id', 'text'],
  ['merchant_refund_id', 'text'],
  ['merchant_order_id', 'text'],
  ['refund_order_id', 'text'],
  ['status_code', 'text'],
  ['status_meaning', 'text'],
  ['status_class', 'text'],
  ['status_final', 'boolean'],
  ['status_source', 'text'],
  ['status_observed_at', 'timestamptz'],
  ['amount_satang', 'bigint'],
  ['currency', 'text'],
  ['tracked_by', 'text'],
  ['tracked_at', 'timestamptz'],
  ['completed_at', 'timestamptz'],
  ['recorded_at', 'timestamptz'],
  ['notifications_seen', 'integer'],
  ['queries_seen', 'integer'],
  ['needs_review', 'boolean'],
  ['open_discrepancies', 'integer'],
  ['unclassified_statuses', 'text[]'],
  ['last_event_position', 'text'],
  ['updated_at', 'timestamptz'],
  ['projection_state', 'jsonb'],
]

const createTables = (schema: string): ReadonlyArray<string> => {
  const t = qualified(schema, REFUNDS_TABLE)
  return [
    `create table ${t} (
      stream_name           text collate "C" primary key,
      merchant_id           text not null,
      merchant_refund_id    text not null,
      merchant_order_id     text not null,
      refund_order_id       text,
      status_code           text,
      status_meaning        text,
      status_class          text not null check (status_class in ('pending', 'succeeded', 'failed', 'unknown')),
      status_final          boolean not null,
      status_source         text,
      status_observed_at    timestamptz,
      amount_satang         bigint check (amount_satang >= 0),
      currency              text,
      tracked_by            text not null,
      tracked_at            timestamptz not null,
      tracked_at_bangkok    timestamp generated always as (tracked_at at time zone 'Asia/Bangkok') stored,
      completed_at          timestamptz,
      completed_at_bangkok  timestamp generated always as (completed_at at time zone 'Asia/Bangkok') stored,
      recorded_at           timestamptz,
      recorded_at_bangkok   timestamp generated always as (recorded_at at time zone 'Asia/Bangkok') stored,
      notifications_seen    integer not null,
      queries_seen          integer not null,
      needs_review          boolean not null,
      open_discrepancies    integer not null,
      unclassified_statuses text[] not null,
      last_event_position   text collate "C" not null,
      updated_at            timestamptz not null,
      projection_state      jsonb not null,
      check ((amount_satang is null) = (currency is null))
    )`,
    `create unique index refunds_merchant_refund_key on ${t} (merchant_id, merchant_refund_id)`,
    `create index refunds_order_idx on ${t} (merchant_order_id, merchant_id)`,
    `create index refunds_status_idx on ${t} (status_class, status_code)`,
    `create index refunds_recorded_bangkok_idx on ${t} (recorded_at_bangkok) where recorded_at is not null`,
    `create index refunds_review_idx on ${t} (merchant_id) where needs_review`,
    `comment on table ${t} is 'satang read model: one row per tracked refund (projection refunds); projection_state is internal'`,
    `comment on column ${t}.projection_state is 'internal: the refund aggregate state and counters the projection evolves; not a public contract'`,
  ]
}

const upsertSql = (schema: string): string => upsertFromUnnest(qualified(schema, REFUNDS_TABLE), COLUMNS, 'stream_name', 1)

const apply = async (target: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
  const mine = events.filter((e) => e.streamName.startsWith(STREAM_PREFIX))
  if (mine.length === 0) return
  const views: Map<string, RefundView | null> = await loadKeptStates(target, REFUNDS_TABLE, [...new Set(mine.map((e) => e.streamName))], decodeRefundView)
  const changed = new Set<string>()
  for (const pe of mine) {
    const view = evolveRefundView(views.get(pe.streamName) ?? null, pe)
    if (view === null) continue
    views.set(pe.streamName, view)
    changed.add(pe.streamName)
  }
  const rows: JsonObject[] = []
  for (const stream of changed) {
    const view = views.get(stream)
    if (view !== undefined && view !== null) rows.push({ ...refundRowOf(stream, view), projection_state: encodeRefundView(view) })
  }
  if (rows.length > 0) await target.client.query(upsertSql(target.schema), unnestParameters(COLUMNS, rows))
}

export const refundsProjection: Projection = {
  name: 'refunds',
  description: 'one row per tracked refund: status and class, recorded amount, times (UTC and Bangkok), counts, review flags',
  streams: [STREAM_PREFIX],
  tables: [REFUNDS_TABLE],
  createTables,
  apply,
}
