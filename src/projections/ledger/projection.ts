import type { PoolClient } from 'pg'
import { formatCalendarDate, bangkokDateOf } from '../../domain/bangkok-time.ts'
import type { LedgerPeriodClosed } from '../../domain/ledger/events/ledger-period-closed.ts'
import { LEDGER_PERIODS_STREAM_PREFIX, nextDate } from '../../domain/ledger/period.ts'
import { foldLedger, LEDGER_STREAM_PREFIXES, orderStreamNeeded, type LedgerInput, type OrderTrack } from '../../domain/ledger/postings.ts'
import { adjustmentLines, POSTING_RULE_BOOK, type PostingFact, type PostingKind, type PostingLine, type PostingRules, type RuleBook } from '../../domain/ledger/rules.ts'
import { decodeOrderState, encodeOrderState } from '../orders/state.ts'
import { unnestParameters, unnestSelect, type Columns } from '../sql.ts'
import { qualified, type ProjectedEvent, type Projection, type ProjectionTarget } from '../types.ts'
import type { Order } from '../../domain/order/state.ts'

/*
 * The double-entry ledger (read model `ledger`): one row per posting line in `ledger_entries`, derived
 * by the posting rules of src/domain/ledger/, and the views `trial_balance` and `daily_balances`.
 * Between batches it keeps, per order, the aggregate's state until the order is paid
 * (`ledger_order_states`), evolved with the domain's own `evolve`: the ledger agrees with the order
 * aggregate by construction.
 *
 * Closed periods stay closed. Each fact that moves money is kept (`ledger_facts`) beside its lines,
 * and each line names the rule version that made it. A `LedgerPeriodClosed` freezes the days through
 * its date, booked by its rule version: the open facts up to that day get that version's lines (they
 * are rewritten only if another version made them, while their day was still open), and from then on
 * nothing dated in a closed day changes. A fact that arrives later for a closed day posts on the first
 * open day; when the rules in force differ from those a closed fact was booked by, the difference posts
 * as adjustment lines on the first open day. So a rebuild meets the same closes at the same places in
 * the log and writes the closed days byte for byte as they were, whatever rules are in force now.
 */

export const LEDGER_PROJECTION_NAME = 'ledger'
export const LEDGER_ENTRIES = 'ledger_entries'
export const LEDGER_ORDER_STATES = 'ledger_order_states'
export const LEDGER_FACTS = 'ledger_facts'
export const LEDGER_PERIODS = 'ledger_periods'
export const LEDGER_RULES_STATE = 'ledger_rules_state'
export const TRIAL_BALANCE_VIEW = 'trial_balance'
export const DAILY_BALANCES_VIEW = 'daily_balances'

const createTables =
  (book: RuleBook) =>
  (schema: string): ReadonlyArray<string> => {
    const entries = qualified(schema, LEDGER_ENTRIES)
    const states = qualified(schema, LEDGER_ORDER_STATES)
    const facts = qualified(schema, LEDGER_FACTS)
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
      entry_kind text not null check (entry_kind in ('posting', 'adjustment')),
      rule_version smallint not null check (rule_version >= 1),
      fact_date_bangkok date not null,
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
      `create table ${facts} (
      event_id uuid not null constraint ${LEDGER_FACTS}_pkey primary key,
      global_position text collate "C" not null,
      stream_name text not null,
      posting_kind text not null,
      merchant_id text not null,
      merchant_order_id text,
      merchant_refund_id text,
      merchant_subscribe_id text,
      channel text not null,
      currency text not null,
      amount_satang bigint not null check (amount_satang > 0),
      posted_at timestamptz not null,
      fact_date_bangkok date not null,
      posting_date_bangkok date not null,
      recorded_at timestamptz not null,
      description text not null,
      closed_version smallint
    )`,
      `create index ${LEDGER_FACTS}_open_idx on ${facts} (posting_date_bangkok) where closed_version is null`,
      `create table ${qualified(schema, LEDGER_PERIODS)} (
      event_id uuid not null constraint ${LEDGER_PERIODS}_pkey primary key,
      global_position text collate "C" not null,
      from_date date,
      through_date date not null constraint ${LEDGER_PERIODS}_through_key unique,
      rule_version smallint not null,
      closed_by text not null,
      reason text,
      closed_at timestamptz not null
    )`,
      `create table ${qualified(schema, LEDGER_RULES_STATE)} (
      one boolean not null default true constraint ${LEDGER_RULES_STATE}_pkey primary key check (one),
      rules_version smallint not null
    )`,
      `insert into ${qualified(schema, LEDGER_RULES_STATE)} (rules_version) values (${String(book.current.version)})`,
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

const STATE_COLUMNS: Columns = [
  ['stream_name', 'text'],
  ['merchant_id', 'text'],
  ['merchant_order_id', 'text'],
  ['channel', 'text'],
  ['currency', 'text'],
  ['paid', 'boolean'],
  ['state', 'jsonb'],
]

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
     ${unnestSelect(STATE_COLUMNS, 1)}
     on conflict (stream_name) do update set
       merchant_id = excluded.merchant_id, merchant_order_id = excluded.merchant_order_id, channel = excluded.channel,
       currency = excluded.currency, paid = excluded.paid, state = excluded.state`,
    unnestParameters(STATE_COLUMNS, rows),
  )
}

/** A fact as the ledger keeps it: where it sits in the log, and the Bangkok days it belongs to and posts on. */
type KeptFact = {
  readonly fact: PostingFact
  readonly position: string
  readonly recordedAt: Date
  /** The Bangkok day the money moved. */
  readonly factDate: string
  /** The Bangkok day it posts on: its own, or the first open day when its own was closed before it arrived. */
  readonly postingDate: string
  /** The rule version its closed booking is at; null while its posting day is open. */
  readonly closedVersion: number | null
}

/** Where the ledger stands between events: the last closed day and the rule version of the open period's lines. */
type LedgerContext = { closedThrough: string | null; rulesVersion: number }

const readContext = async (client: PoolClient, schema: string): Promise<LedgerContext> => {
  const r = await client.query<{ rules_version: number; closed_through: string | null }>(
    `select rules_version, (select to_char(max(through_date), 'YYYY-MM-DD') from ${qualified(schema, LEDGER_PERIODS)}) as closed_through
       from ${qualified(schema, LEDGER_RULES_STATE)}`,
  )
  const row = r.rows[0]
  if (row === undefined) throw new Error(`ledger: ${schema}.${LEDGER_RULES_STATE} has no row (run satang migrate)`)
  return { closedThrough: row.closed_through, rulesVersion: row.rules_version }
}

const rulesOf = (book: RuleBook, version: number): PostingRules => {
  const rules = book.versions.get(version)
  if (rules === undefined) throw new Error(`ledger: posting rules version ${String(version)} is unknown to this satang (it knows ${[...book.versions.keys()].join(', ')}): upgrade satang to read this ledger`)
  return rules
}

const firstOpenDay = (ctx: LedgerContext): string | null => (ctx.closedThrough === null ? null : nextDate(ctx.closedThrough))

/** The columns of a line, in the order of the insert. */
const LINE_COLUMNS: Columns = [
  ['event_id', 'uuid'],
  ['line', 'smallint'],
  ['global_position', 'text'],
  ['stream_name', 'text'],
  ['posting_kind', 'text'],
  ['merchant_id', 'text'],
  ['merchant_order_id', 'text'],
  ['merchant_refund_id', 'text'],
  ['merchant_subscribe_id', 'text'],
  ['account', 'text'],
  ['channel', 'text'],
  ['currency', 'text'],
  ['debit_satang', 'bigint'],
  ['credit_satang', 'bigint'],
  ['posted_at', 'timestamptz'],
  ['posting_date_bangkok', 'date'],
  ['recorded_at', 'timestamptz'],
  ['description', 'text'],
  ['entry_kind', 'text'],
  ['rule_version', 'smallint'],
  ['fact_date_bangkok', 'date'],
]
const LINE_NAMES = LINE_COLUMNS.map(([n]) => n).join(', ')

/** The columns of a kept fact, in the order of the insert. */
const FACT_COLUMNS: Columns = [
  ['event_id', 'uuid'],
  ['global_position', 'text'],
  ['stream_name', 'text'],
  ['posting_kind', 'text'],
  ['merchant_id', 'text'],
  ['merchant_order_id', 'text'],
  ['merchant_refund_id', 'text'],
  ['merchant_subscribe_id', 'text'],
  ['channel', 'text'],
  ['currency', 'text'],
  ['amount_satang', 'bigint'],
  ['posted_at', 'timestamptz'],
  ['fact_date_bangkok', 'date'],
  ['posting_date_bangkok', 'date'],
  ['recorded_at', 'timestamptz'],
  ['description', 'text'],
]

type LineRow = Record<string, string | number | null>

/** The columns that name a fact (its event, position, stream, kind and ids), in ledger lines and kept facts alike. */
export type FactIdentity = {
  event_id: string
  global_position: string
  stream_name: string
  posting_kind: string
  merchant_id: string
  merchant_order_id: string | null
  merchant_refund_id: string | null
  merchant_subscribe_id: string | null
}

const factColumns = (k: KeptFact): FactIdentity => ({
  event_id: k.fact.eventId,
  global_position: k.position,
  stream_name: k.fact.streamName,
  posting_kind: k.fact.kind,
  merchant_id: k.fact.merchantId,
  merchant_order_id: k.fact.merchantOrderId,
  merchant_refund_id: k.fact.merchantRefundId,
  merchant_subscribe_id: k.fact.merchantSubscribeId,
})

const lineRows = (k: KeptFact, lines: ReadonlyArray<PostingLine>, entry: { readonly kind: 'posting' | 'adjustment'; readonly version: number; readonly date: string; readonly description: string }): ReadonlyArray<LineRow> =>
  lines.map((l) => ({
    ...factColumns(k),
    line: l.line,
    account: l.account,
    channel: l.channel,
    currency: l.currency,
    // Satang as digit strings: JSON numbers would lose precision past 2^53.
    debit_satang: l.debit.toString(),
    credit_satang: l.credit.toString(),
    posted_at: k.fact.postedAt.toISOString(),
    posting_date_bangkok: entry.date,
    recorded_at: k.recordedAt.toISOString(),
    description: entry.description,
    entry_kind: entry.kind,
    rule_version: entry.version,
    fact_date_bangkok: k.factDate,
  }))

const postingRows = (k: KeptFact, rules: PostingRules): ReadonlyArray<LineRow> =>
  lineRows(k, rules.linesOf(k.fact), { kind: 'posting', version: rules.version, date: k.postingDate, description: k.fact.description })

// `on conflict do nothing`: a safety net only; the projector applies each event exactly once.
const insertLines = async (client: PoolClient, schema: string, rows: ReadonlyArray<LineRow>): Promise<void> => {
  if (rows.length === 0) return
  await client.query(
    `insert into ${qualified(schema, LEDGER_ENTRIES)} (${LINE_NAMES})
     ${unnestSelect(LINE_COLUMNS, 1)}
     on conflict do nothing`,
    unnestParameters(LINE_COLUMNS, rows),
  )
}

const insertFacts = async (client: PoolClient, schema: string, kept: ReadonlyArray<KeptFact>): Promise<void> => {
  if (kept.length === 0) return
  const rows = kept.map((k) => ({
    ...factColumns(k),
    channel: k.fact.channel,
    currency: k.fact.currency,
    amount_satang: k.fact.amount.toString(),
    posted_at: k.fact.postedAt.toISOString(),
    fact_date_bangkok: k.factDate,
    posting_date_bangkok: k.postingDate,
    recorded_at: k.recordedAt.toISOString(),
    description: k.fact.description,
  }))
  await client.query(
    `insert into ${qualified(schema, LEDGER_FACTS)} (${FACT_COLUMNS.map(([n]) => n).join(', ')})
     ${unnestSelect(FACT_COLUMNS, 1)}
     on conflict do nothing`,
    unnestParameters(FACT_COLUMNS, rows),
  )
}

type FactRow = FactIdentity & {
  channel: string
  currency: string
  amount: string
  posted_at: Date
  fact_date: string
  posting_date: string
  recorded_at: Date
  description: string
  closed_version: number | null
}

const POSTING_KINDS: ReadonlyArray<string> = ['order_paid', 'refund_succeeded', 'subscription_charged']
const isPostingKind = (s: string): s is PostingKind => POSTING_KINDS.includes(s)

const keptOf = (row: FactRow): KeptFact => {
  if (!isPostingKind(row.posting_kind)) throw new Error(`ledger: fact ${row.event_id} has an unknown kind ${row.posting_kind}`)
  return {
    fact: {
      kind: row.posting_kind,
      eventId: row.event_id,
      streamName: row.stream_name,
      merchantId: row.merchant_id,
      merchantOrderId: row.merchant_order_id,
      merchantRefundId: row.merchant_refund_id,
      merchantSubscribeId: row.merchant_subscribe_id,
      postedAt: row.posted_at,
      description: row.description,
      amount: BigInt(row.amount),
      channel: row.channel,
      currency: row.currency,
    },
    position: row.global_position,
    recordedAt: row.recorded_at,
    factDate: row.fact_date,
    postingDate: row.posting_date,
    closedVersion: row.closed_version,
  }
}

const readFacts = async (client: PoolClient, schema: string, which: 'open' | 'closed'): Promise<ReadonlyArray<KeptFact>> => {
  const r = await client.query<FactRow>(
    `select event_id::text as event_id, global_position, stream_name, posting_kind, merchant_id, merchant_order_id, merchant_refund_id, merchant_subscribe_id,
       channel, currency, amount_satang::text as amount, posted_at, to_char(fact_date_bangkok, 'YYYY-MM-DD') as fact_date,
       to_char(posting_date_bangkok, 'YYYY-MM-DD') as posting_date, recorded_at, description, closed_version
     from ${qualified(schema, LEDGER_FACTS)} where closed_version is ${which === 'open' ? '' : 'not '}null
     order by global_position`,
  )
  return r.rows.map(keptOf)
}

/**
 * Makes the open period follow the rules `to`: the open facts' lines by `to`, and for each closed
 * fact booked by another version, the difference as adjustment lines on the first open day.
 * Only the open period changes; every line dated in a closed day stays as it is.
 */
const reprice = async (client: PoolClient, schema: string, book: RuleBook, ctx: LedgerContext, to: PostingRules): Promise<void> => {
  const entries = qualified(schema, LEDGER_ENTRIES)
  const facts = qualified(schema, LEDGER_FACTS)
  await client.query(`delete from ${entries} e using ${facts} f where e.event_id = f.event_id and f.closed_version is null and e.entry_kind = 'posting'`)
  await insertLines(client, schema, (await readFacts(client, schema, 'open')).flatMap((k) => postingRows(k, to)))
  const open = firstOpenDay(ctx)
  if (open !== null) {
    await client.query(`delete from ${entries} where entry_kind = 'adjustment' and posting_date_bangkok >= $1::date`, [open])
    const adjustments = (await readFacts(client, schema, 'closed')).flatMap((k) => {
      const booked = k.closedVersion ?? to.version
      if (booked === to.version) return []
      return lineRows(k, adjustmentLines(k.fact, rulesOf(book, booked), to), {
        kind: 'adjustment',
        version: to.version,
        date: open,
        description: `adjustment to posting rules v${String(to.version)} of a fact booked by v${String(booked)} in a closed period: ${k.fact.description}`,
      })
    })
    await insertLines(client, schema, adjustments)
  }
  await client.query(`update ${qualified(schema, LEDGER_RULES_STATE)} set rules_version = $1`, [to.version])
  ctx.rulesVersion = to.version
}

/** Posts the facts of a run of events (no close among them) by the open period's rules. */
const postEvents = async (client: PoolClient, schema: string, book: RuleBook, ctx: LedgerContext, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
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
  const rules = rulesOf(book, ctx.rulesVersion)
  const folded = foldLedger(inputs, loaded, rules)
  const changed: Array<readonly [string, OrderTrack]> = []
  for (const stream of folded.changed) {
    const track = folded.orders.get(stream)
    if (track !== undefined) changed.push([stream, track])
  }
  await saveTracks(client, schema, changed)
  const open = firstOpenDay(ctx)
  const kept = folded.facts.map((fact): KeptFact => {
    const source = byId.get(fact.eventId)
    if (source === undefined) throw new Error(`ledger: posting of unknown event ${fact.eventId}`)
    const factDate = formatCalendarDate(bangkokDateOf(fact.postedAt))
    // A fact for a day already closed posts on the first open day: a closed day never changes.
    return { fact, position: source.position, recordedAt: source.recordedAt, factDate, postingDate: open !== null && factDate < open ? open : factDate, closedVersion: null }
  })
  await insertFacts(client, schema, kept)
  await insertLines(client, schema, kept.flatMap((k) => postingRows(k, rules)))
}

/** Freezes the days through the close's date, booked by its rule version; the open period then follows the rules in force. */
const closePeriod = async (client: PoolClient, schema: string, book: RuleBook, ctx: LedgerContext, e: ProjectedEvent & { readonly event: LedgerPeriodClosed }): Promise<void> => {
  const d = e.event.data
  if (ctx.closedThrough !== null && d.throughDate <= ctx.closedThrough) throw new Error(`ledger: ${e.streamName} closes ${d.throughDate}, but the ledger is closed through ${ctx.closedThrough} already`)
  const closing = rulesOf(book, d.ruleVersion)
  if (ctx.rulesVersion !== closing.version) await reprice(client, schema, book, ctx, closing)
  const facts = qualified(schema, LEDGER_FACTS)
  // The open facts dated up to the day, and the closed facts whose adjustment to this version is dated on the first open day.
  await client.query(`update ${facts} set closed_version = $1 where closed_version is null and posting_date_bangkok <= $2::date`, [closing.version, d.throughDate])
  await client.query(`update ${facts} set closed_version = $1 where closed_version is not null and closed_version <> $1`, [closing.version])
  await client.query(
    `insert into ${qualified(schema, LEDGER_PERIODS)} (event_id, global_position, from_date, through_date, rule_version, closed_by, reason, closed_at)
     values ($1, $2, $3::date, $4::date, $5, $6, $7, $8)`,
    [e.eventId, e.position, d.fromDate, d.throughDate, d.ruleVersion, d.closedBy, d.reason, d.closedAt.toISOString()],
  )
  ctx.closedThrough = d.throughDate
  if (book.current.version !== closing.version) await reprice(client, schema, book, ctx, book.current)
}

const isClose = (e: ProjectedEvent): e is ProjectedEvent & { readonly event: LedgerPeriodClosed } => e.event.type === 'LedgerPeriodClosed' && e.streamName.startsWith(LEDGER_PERIODS_STREAM_PREFIX)

const applyBatch =
  (book: RuleBook) =>
  async ({ client, schema }: ProjectionTarget, events: ReadonlyArray<ProjectedEvent>): Promise<void> => {
    const ctx = await readContext(client, schema)
    // satang was upgraded to other rules since the last batch: the open period follows them.
    if (ctx.rulesVersion !== book.current.version) await reprice(client, schema, book, ctx, book.current)
    let run: ProjectedEvent[] = []
    for (const e of events) {
      if (!isClose(e)) {
        run.push(e)
        continue
      }
      await postEvents(client, schema, book, ctx, run)
      run = []
      await closePeriod(client, schema, book, ctx, e)
    }
    await postEvents(client, schema, book, ctx, run)
  }

/**
 * The ledger read model with these posting rules (a seam for tests of a rule change; satang runs
 * `ledgerProjection`, with the rules in force).
 */
export const makeLedgerProjection = (book: RuleBook): Projection => ({
  name: LEDGER_PROJECTION_NAME,
  description: 'double-entry ledger: ledger_entries (one row per posting line), ledger_facts, ledger_periods (closed periods), views trial_balance and daily_balances',
  streams: [...LEDGER_STREAM_PREFIXES, LEDGER_PERIODS_STREAM_PREFIX],
  tables: [LEDGER_ENTRIES, LEDGER_ORDER_STATES, LEDGER_FACTS, LEDGER_PERIODS, LEDGER_RULES_STATE],
  createTables: createTables(book),
  views: [TRIAL_BALANCE_VIEW, DAILY_BALANCES_VIEW],
  createViews,
  apply: applyBatch(book),
})

/** The ledger read model. */
export const ledgerProjection: Projection = makeLedgerProjection(POSTING_RULE_BOOK)
