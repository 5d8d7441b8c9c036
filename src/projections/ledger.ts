import type { Pool, PoolClient } from 'pg'
import { formatCalendarDate, bangkokDateOf } from '../domain/bangkok-time.ts'
import type { Order } from '../domain/order/state.ts'
import { foldLedger, LEDGER_STREAM_PREFIXES, orderStreamNeeded, type LedgerInput, type OrderTrack, type Posting } from '../domain/ledger/postings.ts'
import type { BalanceRow, BalanceScope } from '../domain/ledger/report.ts'
import { decodeOrderState, encodeOrderState } from './order-state.ts'
import { qualified, type ProjectedEvent, type Projection, type ProjectionTarget } from './types.ts'

/*
 * The double-entry ledger (read model `ledger`): one row per posting line in `ledger_entries`, derived
 * by the posting rules of src/domain/ledger/postings.ts, and the views `trial_balance` and
 * `daily_balances`. Between batches it keeps, per order, the aggregate's state until the order is paid
 * (`ledger_order_states`), evolved with the domain's own `evolve`: the ledger agrees with the order
 * aggregate by construction. A batch costs at most three statements: load the order states it needs,
 * upsert the changed ones, insert the posting lines.
 */

export const LEDGER_PROJECTION_NAME = 'ledger'
export const LEDGER_ENTRIES = 'ledger_entries'
export const LEDGER_ORDER_STATES = 'ledger_order_states'
export const TRIAL_BALANCE_VIEW = 'trial_balance'
export const DAILY_BALANCES_VIEW = 'daily_balances'

const createTables = (schema: string): ReadonlyArray<string> => {
  const entries = qualified(schema, LEDGER_ENTRIES)
  const states = qualified(schema, LEDGER_ORDER_STATES)
  return [
    `create table ${entries} (
      entry_id text generated always as (event_id::text || '/' || line::text) stored not null,
      event_id uuid not null,
      line smallint not null check (line >= 1),
      global_position text collate "C" not null,
      stream_name text not null,
      posting_kind text not null check (posting_kind in ('order_paid', 'refund_succeeded', 'subscription_charged')),
      merchant_id text not null,
      merchant_order_id text,
      merchant_refund_id text,
      merchant_subscribe_id text,
      account text not null,
      channel text not null,
      currency text not null,
      debit_satang bigint not null check (debit_satang >= 0),
      credit_satang bigint not null check (credit_satang >= 0),
      posted_at timestamptz not null,
      posting_date_bangkok date not null,
      recorded_at timestamptz not null,
      description text not null,
      constraint ${LEDGER_ENTRIES}_one_side check ((debit_satang = 0) <> (credit_satang = 0)),
      constraint ${LEDGER_ENTRIES}_pkey primary key (event_id, line)
    )`,
    `create unique index ${LEDGER_ENTRIES}_position_idx on ${entries} (global_position, line)`,
    `create index ${LEDGER_ENTRIES}_date_idx on ${entries} (posting_date_bangkok)`,
    `create index ${LEDGER_ENTRIES}_order_idx on ${entries} (merchant_order_id, global_position) where merchant_order_id is not null`,
    `create table ${states} (
      stream_name text not null constraint ${LEDGER_ORDER_STATES}_pkey primary key,
      merchant_id text not null,
      merchant_order_id text not null,
      channel text not null,
      currency text not null,
      paid boolean not null,
      state jsonb,
      constraint ${LEDGER_ORDER_STATES}_state check (paid = (state is null))
    )`,
  ]
}

const createViews = (schema: string): ReadonlyArray<string> => {
  const entries = qualified(schema, LEDGER_ENTRIES)
  return [
    `create or replace view ${qualified(schema, TRIAL_BALANCE_VIEW)} as
      select account, channel, currency,
        sum(debit_satang)::bigint as total_debit_satang,
        sum(credit_satang)::bigint as total_credit_satang,
        (sum(debit_satang) - sum(credit_satang))::bigint as balance_satang,
        count(*)::bigint as line_count
      from ${entries}
      group by account, channel, currency`,
    `create or replace view ${qualified(schema, DAILY_BALANCES_VIEW)} as
      select date_bangkok, account, channel, currency, debit_satang, credit_satang,
        (sum(debit_satang - credit_satang) over (partition by account, channel, currency order by date_bangkok rows between unbounded preceding and current row))::bigint
          as closing_balance_satang
      from (
        select posting_date_bangkok as date_bangkok, account, channel, currency,
          sum(debit_satang)::bigint as debit_satang, sum(credit_satang)::bigint as credit_satang
        from ${entries}
        group by posting_date_bangkok, account, channel, currency
      ) as day`,
  ]
}

type StateRow = {
  readonly stream_name: string
  readonly merchant_id: string
  readonly merchant_order_id: string
  readonly channel: string
  readonly currency: string
  readonly paid: boolean
  readonly state: unknown
}

const trackOf = (row: StateRow): OrderTrack => {
  if (row.paid) return { _tag: 'Paid', merchantId: row.merchant_id, merchantOrderId: row.merchant_order_id, channel: row.channel, currency: row.currency }
  const state = decodeOrderState(row.state)
  if (state._tag !== 'Order') throw new Error(`ledger: the kept state of ${row.stream_name} is not an order`)
  return { _tag: 'Open', state }
}

const loadTracks = async (client: PoolClient, schema: string, streams: ReadonlyArray<string>): Promise<Map<string, OrderTrack>> => {
  const tracks = new Map<string, OrderTrack>()
  if (streams.length === 0) return tracks
  const r = await client.query<StateRow>(
    `select stream_name, merchant_id, merchant_order_id, channel, currency, paid, state from ${qualified(schema, LEDGER_ORDER_STATES)} where stream_name = any($1::text[])`,
    [streams],
  )
  for (const row of r.rows) tracks.set(row.stream_name, trackOf(row))
  return tracks
}

const orderOf = (track: OrderTrack): { merchantId: string; merchantOrderId: string; channel: string; currency: string; state: Order | null } =>
  track._tag === 'Paid'
    ? { ...track, state: null }
    : { merchantId: track.state.order.merchantId, merchantOrderId: track.state.order.merchantOrderId, channel: track.state.order.service, currency: track.state.order.currency, state: track.state }

const saveTracks = async (client: PoolClient, schema: string, tracks: ReadonlyArray<readonly [string, OrderTrack]>): Promise<void> => {
  if (tracks.length === 0) return
  const rows = tracks.map(([stream, track]) => {
    const o = orderOf(track)
    return {
      stream_name: stream,
      merchant_id: o.merchantId,
      merchant_order_id: o.merchantOrderId,
      channel: o.channel,
      currency: o.currency,
      paid: o.state === null,
      state: o.state === null ? null : encodeOrderState(o.state),
    }
  })
  await client.query(
    `insert into ${qualified(schema, LEDGER_ORDER_STATES)} (stream_name, merchant_id, merchant_order_id, channel, currency, paid, state)
     select stream_name, merchant_id, merchant_order_id, channel, currency, paid, state
     from jsonb_to_recordset($1::jsonb) as x(stream_name text, merchant_id text, merchant_order_id text, channel text, currency text, paid boolean, state jsonb)
     on conflict (stream_name) do update set
       merchant_id = excluded.merchant_id, merchant_order_id = excluded.merchant_order_id, channel = excluded.channel,
       currency = excluded.currency, paid = excluded.paid, state = excluded.state`,
    [JSON.stringify(rows)],
  )
}

/** The columns of a posting line, as `jsonb_to_recordset` reads them from one JSON parameter. */
const LINE_COLUMNS = `event_id uuid, line smallint, global_position text, stream_name text, posting_kind text, merchant_id text, merchant_order_id text,
  merchant_refund_id text, merchant_subscribe_id text, account text, channel text, currency text, debit_satang bigint, credit_satang bigint,
  posted_at timestamptz, posting_date_bangkok date, recorded_at timestamptz, description text`

const insertPostings = async (client: PoolClient, schema: string, postings: ReadonlyArray<Posting>, byId: ReadonlyMap<string, ProjectedEvent>): Promise<void> => {
  if (postings.length === 0) return
  const lines: Array<Record<string, string | number | null>> = []
  for (const p of postings) {
    const source = byId.get(p.eventId)
    if (source === undefined) throw new Error(`ledger: posting of unknown event ${p.eventId}`)
    const common = {
      event_id: p.eventId,
      global_position: source.position,
      stream_name: p.streamName,
      posting_kind: p.kind,
      merchant_id: p.merchantId,
      merchant_order_id: p.merchantOrderId,
      merchant_refund_id: p.merchantRefundId,
      merchant_subscribe_id: p.merchantSubscribeId,
      posted_at: p.postedAt.toISOString(),
      posting_date_bangkok: formatCalendarDate(bangkokDateOf(p.postedAt)),
      recorded_at: source.recordedAt.toISOString(),
      description: p.description,
    }
    for (const l of p.lines) {
      // Satang as digit strings: JSON numbers would lose precision past 2^53.
      lines.push({ ...common, line: l.line, account: l.account, channel: l.channel, currency: l.currency, debit_satang: l.debit.toString(), credit_satang: l.credit.toString() })
    }
  }
  // `on conflict do nothing`: a safety net only; the projector applies each event exactly once.
  await client.query(
    `insert into ${qualified(schema, LEDGER_ENTRIES)} (event_id, line, global_position, stream_name, posting_kind, merchant_id, merchant_order_id,
       merchant_refund_id, merchant_subscribe_id, account, channel, currency, debit_satang, credit_satang, posted_at, posting_date_bangkok, recorded_at, description)
     select event_id, line, global_position, stream_name, posting_kind, merchant_id, merchant_order_id,
       merchant_refund_id, merchant_subscribe_id, account, channel, currency, debit_satang, credit_satang, posted_at, posting_date_bangkok, recorded_at, description
     from jsonb_to_recordset($1::jsonb) as x(${LINE_COLUMNS})
     on conflict do nothing`,
    [JSON.stringify(lines)],
  )
}

const applyBatch = async ({ client, schema }: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
  const inputs: LedgerInput[] = []
  const needed = new Set<string>()
  const byId = new Map<string, ProjectedEvent>()
  for (const e of events) {
    const input: LedgerInput = { eventId: e.eventId, streamName: e.streamName, event: e.event }
    const stream = orderStreamNeeded(input)
    const posts = stream !== null || e.event.type === 'SubscriptionCharged'
    if (!posts) continue
    if (stream !== null) needed.add(stream)
    inputs.push(input)
    byId.set(e.eventId, e)
  }
  if (inputs.length === 0) return
  const loaded = await loadTracks(client, schema, [...needed])
  const folded = foldLedger(inputs, loaded)
  const changed: Array<readonly [string, OrderTrack]> = []
  for (const stream of folded.changed) {
    const track = folded.orders.get(stream)
    if (track !== undefined) changed.push([stream, track])
  }
  await saveTracks(client, schema, changed)
  await insertPostings(client, schema, folded.postings, byId)
}

/** The ledger read model. */
export const ledgerProjection: Projection = {
  name: LEDGER_PROJECTION_NAME,
  description: 'double-entry ledger: ledger_entries (one row per posting line), views trial_balance and daily_balances',
  streams: LEDGER_STREAM_PREFIXES,
  tables: [LEDGER_ENTRIES, LEDGER_ORDER_STATES],
  createTables,
  views: [TRIAL_BALANCE_VIEW, DAILY_BALANCES_VIEW],
  createViews,
  apply: applyBatch,
}

/*
 * Reads, for the HTTP routes and `satang report ledger`.
 */

type Queryable = Pick<Pool, 'query'>

/** Whether the ledger's tables exist in `schema` (the projector creates them at `satang migrate` / `satang up`). */
export const ledgerExists = async (db: Queryable, schema: string): Promise<boolean> => {
  const r = await db.query<{ found: string | null }>('select to_regclass($1)::text as found', [qualified(schema, LEDGER_ENTRIES)])
  return r.rows[0]?.found !== null && r.rows[0]?.found !== undefined
}

type SumRow = { account: string; channel: string; currency: string; debit: string; credit: string }

/** The trial balance: every account, channel and currency with its debit and credit totals (accounts in name order). */
export const readTrialBalance = async (rm: { readonly pool: Queryable; readonly schema: string }, scope: BalanceScope): Promise<ReadonlyArray<BalanceRow>> => {
  const r = await rm.pool.query<SumRow>(
    `select account, channel, currency, sum(debit_satang)::bigint::text as debit, sum(credit_satang)::bigint::text as credit
     from ${qualified(rm.schema, LEDGER_ENTRIES)}
     where ($1::date is null or posting_date_bangkok <= $1::date)
       and ($2::text is null or currency = $2::text)
       and ($3::text is null or channel = $3::text)
     group by account, channel, currency
     order by account collate "C", channel collate "C", currency collate "C"`,
    [scope.date, scope.currency, scope.channel],
  )
  return r.rows.map((row) => ({ account: row.account, channel: row.channel, currency: row.currency, debit: BigInt(row.debit), credit: BigInt(row.credit) }))
}

/** Where a page of entries starts: after this line of the log. */
export type EntryCursor = { readonly position: string; readonly line: number }

export type EntryFilters = {
  readonly account: string | null
  readonly channel: string | null
  readonly currency: string | null
  readonly merchantOrderId: string | null
  /** Bangkok dates, inclusive. */
  readonly from: string | null
  readonly to: string | null
}

export type LedgerEntry = {
  readonly entryId: string
  readonly eventId: string
  readonly line: number
  readonly position: string
  readonly streamName: string
  readonly kind: string
  readonly merchantId: string
  readonly merchantOrderId: string | null
  readonly merchantRefundId: string | null
  readonly merchantSubscribeId: string | null
  readonly account: string
  readonly channel: string
  readonly currency: string
  readonly debit: bigint
  readonly credit: bigint
  readonly postedAt: Date
  readonly postingDateBangkok: string
  readonly recordedAt: Date
  readonly description: string
}

type EntryRow = {
  entry_id: string
  event_id: string
  line: number
  global_position: string
  stream_name: string
  posting_kind: string
  merchant_id: string
  merchant_order_id: string | null
  merchant_refund_id: string | null
  merchant_subscribe_id: string | null
  account: string
  channel: string
  currency: string
  debit: string
  credit: string
  posted_at: Date
  posting_date: string
  recorded_at: Date
  description: string
}

/** Entries in log order (global position, then line), `limit` of them after `cursor`; `next` is null on the last page. */
export const readEntries = async (
  rm: { readonly pool: Queryable; readonly schema: string },
  filters: EntryFilters,
  page: { readonly limit: number; readonly after: EntryCursor | null },
): Promise<{ readonly entries: ReadonlyArray<LedgerEntry>; readonly next: EntryCursor | null }> => {
  const r = await rm.pool.query<EntryRow>(
    `select entry_id, event_id::text as event_id, line, global_position, stream_name, posting_kind, merchant_id, merchant_order_id, merchant_refund_id,
       merchant_subscribe_id, account, channel, currency, debit_satang::text as debit, credit_satang::text as credit, posted_at,
       to_char(posting_date_bangkok, 'YYYY-MM-DD') as posting_date, recorded_at, description
     from ${qualified(rm.schema, LEDGER_ENTRIES)}
     where ($1::text is null or account = $1::text)
       and ($2::text is null or channel = $2::text)
       and ($3::text is null or currency = $3::text)
       and ($4::text is null or merchant_order_id = $4::text)
       and ($5::date is null or posting_date_bangkok >= $5::date)
       and ($6::date is null or posting_date_bangkok <= $6::date)
       and ($7::text is null or (global_position, line) > ($7::text, $8::smallint))
     order by global_position, line
     limit $9`,
    [filters.account, filters.channel, filters.currency, filters.merchantOrderId, filters.from, filters.to, page.after?.position ?? null, page.after?.line ?? 0, page.limit + 1],
  )
  const rows = r.rows.slice(0, page.limit)
  const entries = rows.map(
    (row): LedgerEntry => ({
      entryId: row.entry_id,
      eventId: row.event_id,
      line: row.line,
      position: row.global_position,
      streamName: row.stream_name,
      kind: row.posting_kind,
      merchantId: row.merchant_id,
      merchantOrderId: row.merchant_order_id,
      merchantRefundId: row.merchant_refund_id,
      merchantSubscribeId: row.merchant_subscribe_id,
      account: row.account,
      channel: row.channel,
      currency: row.currency,
      debit: BigInt(row.debit),
      credit: BigInt(row.credit),
      postedAt: row.posted_at,
      postingDateBangkok: row.posting_date,
      recordedAt: row.recorded_at,
      description: row.description,
    }),
  )
  const last = entries[entries.length - 1]
  return { entries, next: r.rows.length > page.limit && last !== undefined ? { position: last.position, line: last.line } : null }
}
