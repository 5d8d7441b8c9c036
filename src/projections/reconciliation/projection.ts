import type { PoolClient } from 'pg'
import type { ReconciliationEvent } from '../../domain/reconciliation/events/index.ts'
import { Evidence, isBreakEvent, isRunEvent, reconciliationRunStarted } from '../../domain/reconciliation/events/index.ts'
import { countItems } from '../../domain/reconciliation/run.ts'
import { qualified, type ProjectedEvent, type Projection, type ProjectionTarget } from '../types.ts'

/**
 * The reconciliation read models, from the run streams (`reconciliation-<merchant_id>-<run_id>`) and
 * the breaks' own streams (acknowledgements):
 * - `reconciliation_runs`: one row per run: scope, who started it, progress counters while it runs,
 *   then its verdict, counts and totals;
 * - `reconciliation_breaks`: one row per break: class, item, both views, the satang at stake, first
 *   and last seen, its lifecycle status (new, persisting, resolved, acknowledged) and how it ended;
 * - `reconciliation_days`: the verdict of each Bangkok business day per merchant, from the last run
 *   that covered the day;
 * - `reconciliation_healed`: the items a run healed;
 * - the view `reconciliation_open_breaks`: open breaks with their age and ageing bucket, as of now.
 * Events are applied one by one in log order (a run writes a few hundred per 100,000 items).
 */

export const RUNS_TABLE = 'reconciliation_runs'
export const BREAKS_TABLE = 'reconciliation_breaks'
export const DAYS_TABLE = 'reconciliation_days'
export const HEALED_TABLE = 'reconciliation_healed'
export const OPEN_BREAKS_VIEW = 'reconciliation_open_breaks'
const STREAM_PREFIX = 'reconciliation-'

// `reconciliation-<merchant_id>-…`: merchant_id is digits only.
const MERCHANT = /^reconciliation-(\d+)-/

const merchantOf = (stream: string): string => {
  const m = MERCHANT.exec(stream)
  if (m?.[1] === undefined) throw new Error(`reconciliation: ${stream} is not a reconciliation stream`)
  return m[1]
}

/** Open breaks in the order the API and the console list them (oldest first sighting first): a page reads 50 rows, not every open break. */
export const openBreaksOrderIndex = (schema: string): string =>
  `create index if not exists reconciliation_breaks_open_order_idx on ${qualified(schema, BREAKS_TABLE)} (merchant_id, first_seen_at, break_id) where status in ('new', 'persisting')`

const createTables = (schema: string): ReadonlyArray<string> => {
  const runs = qualified(schema, RUNS_TABLE)
  const breaks = qualified(schema, BREAKS_TABLE)
  const days = qualified(schema, DAYS_TABLE)
  const healed = qualified(schema, HEALED_TABLE)
  return [
    `create table ${runs} (
      run_id               text primary key,
      merchant_id          text not null,
      stream_name          text collate "C" not null,
      scope_kind           text not null check (scope_kind in ('days', 'sweep')),
      scope_from           date,
      scope_to             date,
      trigger              text not null,
      actor                text,
      parameters           jsonb not null,
      status               text not null check (status in ('running', 'completed', 'superseded')),
      verdict              text check (verdict in ('reconciled', 'reconciled_with_pending', 'breaks', 'incomplete')),
      items_in_scope       integer not null,
      checked              integer not null default 0,
      matched              integer not null default 0,
      healed               integer not null default 0,
      pending              integer not null default 0,
      unchecked            integer not null default 0,
      acknowledged         integer not null default 0,
      breaks               integer not null default 0,
      breaks_by_class      jsonb not null default '{}',
      checked_satang       bigint not null default 0,
      healed_satang        bigint not null default 0,
      at_stake_satang      bigint not null default 0,
      unchecked_satang     bigint not null default 0,
      started_at           timestamptz not null,
      started_at_bangkok   timestamp generated always as (started_at at time zone 'Asia/Bangkok') stored,
      completed_at         timestamptz,
      superseded_by        text,
      last_event_position  text collate "C" not null
    )`,
    `create index reconciliation_runs_merchant_idx on ${runs} (merchant_id, started_at desc)`,
    `create index reconciliation_runs_running_idx on ${runs} (merchant_id) where status = 'running'`,
    `create table ${breaks} (
      break_id                text primary key,
      merchant_id             text not null,
      class                   text not null,
      status                  text not null check (status in ('new', 'persisting', 'resolved', 'acknowledged')),
      item_kind               text not null,
      item_id                 text not null,
      merchant_order_id       text,
      merchant_refund_id      text,
      merchant_subscribe_id   text,
      item_stream             text,
      day                     date not null,
      amount_at_stake_satang  bigint not null check (amount_at_stake_satang >= 0),
      satang_view             jsonb not null,
      gateway_view            jsonb not null,
      detail                  text not null,
      evidence                jsonb not null,
      first_seen_at           timestamptz not null,
      first_seen_run_id       text not null,
      last_seen_at            timestamptz not null,
      last_seen_run_id        text not null,
      times_seen              integer not null,
      resolved_at             timestamptz,
      resolved_run_id         text,
      resolution              text,
      acknowledged_at         timestamptz,
      acknowledged_by         text,
      acknowledgement_reason  text,
      last_event_position     text collate "C" not null
    )`,
    `create index reconciliation_breaks_open_idx on ${breaks} (merchant_id, status) where status <> 'resolved'`,
    `create index reconciliation_breaks_item_idx on ${breaks} (merchant_id, item_kind, item_id)`,
    `create index reconciliation_breaks_class_idx on ${breaks} (class, status)`,
    `create index reconciliation_breaks_day_idx on ${breaks} (day)`,
    openBreaksOrderIndex(schema),
    `create table ${days} (
      merchant_id       text not null,
      day               date not null,
      verdict           text not null check (verdict in ('reconciled', 'reconciled_with_pending', 'breaks', 'incomplete')),
      run_id            text not null,
      checked           integer not null,
      matched           integer not null,
      healed            integer not null,
      pending           integer not null,
      unchecked         integer not null,
      acknowledged      integer not null,
      breaks            integer not null,
      breaks_by_class   jsonb not null,
      checked_satang    bigint not null,
      healed_satang     bigint not null,
      at_stake_satang   bigint not null,
      unchecked_satang  bigint not null,
      reconciled_at     timestamptz not null,
      primary key (merchant_id, day)
    )`,
    `create table ${healed} (
      run_id             text not null,
      merchant_id        text not null,
      item_kind          text not null,
      item_id            text not null,
      merchant_order_id  text,
      merchant_refund_id text,
      item_stream        text,
      day                date not null,
      from_status        text,
      to_status          text not null,
      amount_satang      bigint not null,
      healed_at          timestamptz not null,
      evidence           jsonb not null,
      primary key (run_id, item_kind, item_id)
    )`,
    `comment on table ${runs} is 'satang read model: one row per reconciliation run (projection reconciliation)'`,
    `comment on table ${breaks} is 'satang read model: one row per reconciliation break and its lifecycle (projection reconciliation)'`,
    `comment on table ${days} is 'satang read model: the reconciliation verdict of each Bangkok business day per merchant, from the last run that covered it'`,
  ]
}

const createViews = (schema: string): ReadonlyArray<string> => [
  `create or replace view ${qualified(schema, OPEN_BREAKS_VIEW)} as
     select b.*,
            greatest(0, floor(extract(epoch from (now() - b.first_seen_at)) / 86400))::integer as age_days,
            case when now() - b.first_seen_at < interval '2 days' then '0-1'
                 when now() - b.first_seen_at < interval '8 days' then '2-7'
                 when now() - b.first_seen_at < interval '31 days' then '8-30'
                 else '>30' end as age_bucket
       from ${qualified(schema, BREAKS_TABLE)} b
      where b.status in ('new', 'persisting')`,
]

const itemRefColumns = (item: { readonly kind: string; readonly id: string; readonly merchantOrderId: string | null; readonly merchantRefundId: string | null; readonly merchantSubscribeId: string | null; readonly stream: string | null }) => [
  item.kind,
  item.id,
  item.merchantOrderId,
  item.merchantRefundId,
  item.merchantSubscribeId,
  item.stream,
]

const applyOne = async (client: PoolClient, schema: string, pe: ProjectedEvent, e: ReconciliationEvent): Promise<void> => {
  const runs = qualified(schema, RUNS_TABLE)
  const breaks = qualified(schema, BREAKS_TABLE)
  const position = pe.position
  switch (e.type) {
    case 'ReconciliationRunStarted': {
      const d = e.data
      await client.query(
        `insert into ${runs} (run_id, merchant_id, stream_name, scope_kind, scope_from, scope_to, trigger, actor, parameters, status, items_in_scope, started_at, last_event_position)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'running', $10, $11, $12) on conflict (run_id) do nothing`,
        [d.runId, d.merchantId, pe.streamName, d.scope.kind, d.scope.from, d.scope.to, d.startedBy.trigger, d.startedBy.actor, JSON.stringify(reconciliationRunStarted.encode(d).data['parameters'] ?? {}), d.itemsInScope, d.startedAt, position],
      )
      return
    }
    case 'ReconciliationItemsChecked': {
      const { counts: c, totals: t } = countItems(e.data.items)
      await client.query(
        `update ${runs} set checked = checked + $2, matched = matched + $3, healed = healed + $4, pending = pending + $5, unchecked = unchecked + $6,
                acknowledged = acknowledged + $7, breaks = breaks + $8, checked_satang = checked_satang + $9, healed_satang = healed_satang + $10,
                at_stake_satang = at_stake_satang + $11, unchecked_satang = unchecked_satang + $12, last_event_position = $13
          where run_id = $1`,
        [e.data.runId, c.checked, c.matched, c.healed, c.pending, c.unchecked, c.acknowledged, c.breaks, t.checked.toString(), t.healed.toString(), t.atStake.toString(), t.unchecked.toString(), position],
      )
      // Acknowledged breaks still seen: the run saw them again.
      const seen = e.data.items.flatMap((i) => (i.outcome === 'acknowledged' && i.breakId !== null ? [i.breakId] : []))
      if (seen.length > 0) {
        await client.query(`update ${breaks} set last_seen_at = $2, last_seen_run_id = $3, times_seen = times_seen + 1, last_event_position = $4 where break_id = any($1::text[])`, [
          seen,
          e.data.checkedAt,
          e.data.runId,
          position,
        ])
      }
      return
    }
    case 'ReconciliationBreakDetected': {
      const d = e.data
      await client.query(
        `insert into ${breaks} (break_id, merchant_id, class, status, item_kind, item_id, merchant_order_id, merchant_refund_id, merchant_subscribe_id, item_stream,
                                day, amount_at_stake_satang, satang_view, gateway_view, detail, evidence, first_seen_at, first_seen_run_id, last_seen_at, last_seen_run_id,
                                times_seen, last_event_position)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, 1, $21)
         on conflict (break_id) do update set
           status = case when ${breaks}.status in ('acknowledged', 'resolved') then ${breaks}.status else excluded.status end,
           amount_at_stake_satang = excluded.amount_at_stake_satang, satang_view = excluded.satang_view, gateway_view = excluded.gateway_view,
           detail = excluded.detail, evidence = excluded.evidence, last_seen_at = excluded.last_seen_at, last_seen_run_id = excluded.last_seen_run_id,
           times_seen = ${breaks}.times_seen + 1, last_event_position = excluded.last_event_position`,
        [
          d.breakId,
          merchantOf(pe.streamName),
          d.class,
          d.status,
          ...itemRefColumns(d.item),
          d.day,
          d.amountAtStake.toString(),
          JSON.stringify(d.satangView),
          JSON.stringify(d.gatewayView),
          d.detail,
          JSON.stringify(Evidence.encode(d.evidence)),
          d.firstSeenAt,
          d.firstSeenRunId,
          d.detectedAt,
          d.runId,
          position,
        ],
      )
      return
    }
    case 'ReconciliationBreakResolved': {
      const d = e.data
      await client.query(
        `update ${breaks} set status = 'resolved', resolved_at = $2, resolved_run_id = $3, resolution = $4, last_event_position = $5 where break_id = $1 and status <> 'resolved'`,
        [d.breakId, d.resolvedAt, d.runId, d.resolution, position],
      )
      return
    }
    case 'ReconciliationItemHealed': {
      const d = e.data
      await client.query(
        `insert into ${qualified(schema, HEALED_TABLE)} (run_id, merchant_id, item_kind, item_id, merchant_order_id, merchant_refund_id, item_stream, day, from_status, to_status, amount_satang, healed_at, evidence)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) on conflict do nothing`,
        [d.runId, merchantOf(pe.streamName), d.item.kind, d.item.id, d.item.merchantOrderId, d.item.merchantRefundId, d.item.stream, d.day, d.from, d.to, d.amount.toString(), d.healedAt, JSON.stringify(Evidence.encode(d.evidence))],
      )
      return
    }
    case 'ReconciliationRunCompleted': {
      const d = e.data
      const c = d.counts
      const t = d.totals
      await client.query(
        `update ${runs} set status = 'completed', verdict = $2, checked = $3, matched = $4, healed = $5, pending = $6, unchecked = $7, acknowledged = $8, breaks = $9,
                breaks_by_class = $10, checked_satang = $11, healed_satang = $12, at_stake_satang = $13, unchecked_satang = $14, completed_at = $15, last_event_position = $16
          where run_id = $1`,
        [d.runId, d.verdict, c.checked, c.matched, c.healed, c.pending, c.unchecked, c.acknowledged, c.breaks, JSON.stringify(c.byClass), t.checked.toString(), t.healed.toString(), t.atStake.toString(), t.unchecked.toString(), d.completedAt, position],
      )
      const merchant = merchantOf(pe.streamName)
      for (const day of d.days) {
        const dc = day.counts
        const dt = day.totals
        await client.query(
          `insert into ${qualified(schema, DAYS_TABLE)} (merchant_id, day, verdict, run_id, checked, matched, healed, pending, unchecked, acknowledged, breaks, breaks_by_class,
                                                       checked_satang, healed_satang, at_stake_satang, unchecked_satang, reconciled_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
           on conflict (merchant_id, day) do update set verdict = excluded.verdict, run_id = excluded.run_id, checked = excluded.checked, matched = excluded.matched,
             healed = excluded.healed, pending = excluded.pending, unchecked = excluded.unchecked, acknowledged = excluded.acknowledged, breaks = excluded.breaks,
             breaks_by_class = excluded.breaks_by_class, checked_satang = excluded.checked_satang, healed_satang = excluded.healed_satang,
             at_stake_satang = excluded.at_stake_satang, unchecked_satang = excluded.unchecked_satang, reconciled_at = excluded.reconciled_at`,
          [merchant, day.day, day.verdict, d.runId, dc.checked, dc.matched, dc.healed, dc.pending, dc.unchecked, dc.acknowledged, dc.breaks, JSON.stringify(dc.byClass), dt.checked.toString(), dt.healed.toString(), dt.atStake.toString(), dt.unchecked.toString(), d.completedAt],
        )
      }
      return
    }
    case 'ReconciliationRunSuperseded': {
      const d = e.data
      await client.query(`update ${runs} set status = 'superseded', superseded_by = $2, completed_at = $3, last_event_position = $4 where run_id = $1 and status = 'running'`, [d.runId, d.supersededBy, d.supersededAt, position])
      return
    }
    case 'ReconciliationBreakAcknowledged': {
      const d = e.data
      await client.query(
        `update ${breaks} set status = case when status in ('new', 'persisting') then 'acknowledged' else status end,
                acknowledged_at = $2, acknowledged_by = $3, acknowledgement_reason = $4, last_event_position = $5
          where break_id = $1`,
        [d.breakId, d.acknowledgedAt, d.actor, d.reason, position],
      )
      return
    }
  }
}

const apply = async (target: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
  for (const pe of events) {
    if (!pe.streamName.startsWith(STREAM_PREFIX)) continue
    const e = pe.event
    if (isRunEvent(e) || isBreakEvent(e)) await applyOne(target.client, target.schema, pe, e)
  }
}

export const reconciliationProjection: Projection = {
  name: 'reconciliation',
  description: 'reconciliation runs (scope, progress, verdict, counts), breaks (class, item, both views, lifecycle, age) and the verdict of each business day',
  streams: [STREAM_PREFIX],
  tables: [RUNS_TABLE, BREAKS_TABLE, DAYS_TABLE, HEALED_TABLE],
  createTables,
  views: [OPEN_BREAKS_VIEW],
  createViews,
  apply,
}
