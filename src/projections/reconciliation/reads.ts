import type { JsonObject } from '../../application/ports/event-store.ts'
import { isJsonObject } from '../../domain/events/json.ts'
import type { BreakClass } from '../../domain/reconciliation/break-class.ts'
import type { BreakStatus } from '../../domain/reconciliation/lifecycle.ts'
import { BREAKS_TABLE, DAYS_TABLE, HEALED_TABLE, RUNS_TABLE } from './projection.ts'
import type { Queryable } from '../as-of.ts'
import { qualified, type ReadModels } from '../types.ts'

/*
 * Reads of the reconciliation read models for the merchant API (`/v1/reconciliation/…`). Rows come back
 * as the API shows them: satang as JSON numbers (bigint columns as text, converted with a check),
 * instants as ISO text, days as yyyy-MM-dd; ages are computed as of the read.
 */

/** A keyset position: the sort instant (ISO) and the id it ended on. */
export type PageCursor = { readonly at: string; readonly id: string }

export type Page = { readonly items: ReadonlyArray<JsonObject>; readonly next: PageCursor | null }

const satang = (text: unknown): number => {
  const n = typeof text === 'string' ? Number(text) : typeof text === 'number' ? text : Number.NaN
  if (!Number.isSafeInteger(n)) throw new Error(`a satang column holds ${String(text)}, beyond what JSON numbers hold exactly`)
  return n
}
const iso = (d: unknown): string | null => (d instanceof Date ? d.toISOString() : null)
const text = (u: unknown): string | null => (typeof u === 'string' ? u : null)
const int = (u: unknown): number => (typeof u === 'number' ? u : Number(u))
const json = (u: unknown): JsonObject => (isJsonObject(u) ? u : {})

type Row = Readonly<Record<string, unknown>>

const countsOf = (r: Row): JsonObject => ({
  checked: int(r['checked']),
  matched: int(r['matched']),
  healed: int(r['healed']),
  pending: int(r['pending']),
  unchecked: int(r['unchecked']),
  acknowledged: int(r['acknowledged']),
  open_breaks: int(r['breaks']),
  breaks: json(r['breaks_by_class']),
})
const totalsOf = (r: Row): JsonObject => ({
  checked_satang: satang(r['checked_satang']),
  healed_satang: satang(r['healed_satang']),
  at_stake_satang: satang(r['at_stake_satang']),
  unchecked_satang: satang(r['unchecked_satang']),
})

const runJson = (r: Row): JsonObject => ({
  run_id: text(r['run_id']),
  merchant_id: text(r['merchant_id']),
  stream: text(r['stream_name']),
  scope: { kind: text(r['scope_kind']), from: text(r['scope_from']), to: text(r['scope_to']) },
  started_by: { trigger: text(r['trigger']), actor: text(r['actor']) },
  parameters: json(r['parameters']),
  status: text(r['status']),
  verdict: text(r['verdict']),
  items_in_scope: int(r['items_in_scope']),
  counts: countsOf(r),
  totals: totalsOf(r),
  started_at: iso(r['started_at']),
  completed_at: iso(r['completed_at']),
  superseded_by: text(r['superseded_by']),
})

const breakJson = (r: Row): JsonObject => ({
  break_id: text(r['break_id']),
  merchant_id: text(r['merchant_id']),
  class: text(r['class']),
  status: text(r['status']),
  item: {
    kind: text(r['item_kind']),
    id: text(r['item_id']),
    merchant_order_id: text(r['merchant_order_id']),
    merchant_refund_id: text(r['merchant_refund_id']),
    merchant_subscribe_id: text(r['merchant_subscribe_id']),
    stream: text(r['item_stream']),
  },
  day: text(r['day_text']),
  amount_at_stake_satang: satang(r['amount_at_stake_satang']),
  satang_view: json(r['satang_view']),
  gateway_view: json(r['gateway_view']),
  detail: text(r['detail']),
  evidence: json(r['evidence']),
  first_seen_at: iso(r['first_seen_at']),
  first_seen_run_id: text(r['first_seen_run_id']),
  last_seen_at: iso(r['last_seen_at']),
  last_seen_run_id: text(r['last_seen_run_id']),
  times_seen: int(r['times_seen']),
  age_days: int(r['age_days']),
  age_bucket: text(r['age_bucket']),
  resolved_at: iso(r['resolved_at']),
  resolved_run_id: text(r['resolved_run_id']),
  resolution: text(r['resolution']),
  acknowledged_at: iso(r['acknowledged_at']),
  acknowledged_by: text(r['acknowledged_by']),
  acknowledgement_reason: text(r['acknowledgement_reason']),
})

const RUN_COLUMNS = `run_id, merchant_id, stream_name, scope_kind, to_char(scope_from, 'YYYY-MM-DD') as scope_from, to_char(scope_to, 'YYYY-MM-DD') as scope_to, trigger, actor,
  parameters, status, verdict, items_in_scope, checked, matched, healed, pending, unchecked, acknowledged, breaks, breaks_by_class,
  checked_satang::text, healed_satang::text, at_stake_satang::text, unchecked_satang::text, started_at, completed_at, superseded_by`

// Age is "as of now" for a break still open, as of its end for a resolved or acknowledged one.
const BREAK_COLUMNS = `b.*, to_char(b.day, 'YYYY-MM-DD') as day_text, b.amount_at_stake_satang::text as amount_at_stake_satang,
  greatest(0, floor(extract(epoch from (coalesce(b.resolved_at, b.acknowledged_at, now()) - b.first_seen_at)) / 86400))::integer as age_days`
const AGE_BUCKET = `case when age_days <= 1 then '0-1' when age_days <= 7 then '2-7' when age_days <= 30 then '8-30' else '>30' end as age_bucket`

/** Runs of the merchant, newest first. */
export const readRuns = async (rm: ReadModels, merchantId: string, page: { readonly limit: number; readonly after: PageCursor | null }): Promise<Page> => {
  const params: unknown[] = [merchantId, page.limit + 1]
  let where = 'merchant_id = $1'
  if (page.after !== null) {
    params.push(page.after.at, page.after.id)
    where += ' and (started_at, run_id) < ($3::timestamptz, $4)'
  }
  const { rows } = await rm.pool.query<Row>(`select ${RUN_COLUMNS} from ${qualified(rm.schema, RUNS_TABLE)} where ${where} order by started_at desc, run_id desc limit $2`, params)
  const items = rows.slice(0, page.limit)
  const last = items.at(-1)
  return { items: items.map(runJson), next: rows.length > page.limit && last !== undefined ? { at: iso(last['started_at']) ?? '', id: String(last['run_id']) } : null }
}

/** One run with the breaks it saw and the items it healed, or null. */
export const readRun = async (rm: ReadModels, merchantId: string, runId: string): Promise<JsonObject | null> => {
  const { rows } = await rm.pool.query<Row>(`select ${RUN_COLUMNS} from ${qualified(rm.schema, RUNS_TABLE)} where merchant_id = $1 and run_id = $2`, [merchantId, runId])
  const run = rows[0]
  if (run === undefined) return null
  const breaks = await rm.pool.query<Row>(
    `select *, ${AGE_BUCKET} from (select ${BREAK_COLUMNS} from ${qualified(rm.schema, BREAKS_TABLE)} b
       where b.merchant_id = $1 and ($2 in (b.first_seen_run_id, b.last_seen_run_id, b.resolved_run_id))) x order by first_seen_at, break_id`,
    [merchantId, runId],
  )
  const healed = await rm.pool.query<Row>(
    `select item_kind, item_id, merchant_order_id, merchant_refund_id, to_char(day, 'YYYY-MM-DD') as day, from_status, to_status, amount_satang::text as amount_satang, healed_at
       from ${qualified(rm.schema, HEALED_TABLE)} where run_id = $1 order by healed_at, item_id`,
    [runId],
  )
  return {
    ...runJson(run),
    breaks: breaks.rows.map(breakJson),
    healed: healed.rows.map((h) => ({
      item: { kind: text(h['item_kind']), id: text(h['item_id']), merchant_order_id: text(h['merchant_order_id']), merchant_refund_id: text(h['merchant_refund_id']) },
      day: text(h['day']),
      from: text(h['from_status']),
      to: text(h['to_status']),
      amount_satang: satang(h['amount_satang']),
      healed_at: iso(h['healed_at']),
    })),
  }
}

export type BreakFilters = {
  readonly class: BreakClass | null
  readonly status: BreakStatus | 'open' | null
  readonly minAgeDays: number | null
  /** The item's business day (yyyy-MM-dd). */
  readonly date: string | null
  readonly itemId: string | null
}

/** Breaks of the merchant, filtered, the oldest first sighting first. `status: open` is new or persisting. */
export const readBreaks = async (rm: Pick<ReadModels, 'schema'> & { readonly pool: Queryable }, merchantId: string, f: BreakFilters, page: { readonly limit: number; readonly after: PageCursor | null }): Promise<Page> => {
  const params: unknown[] = [merchantId]
  const where: string[] = ['b.merchant_id = $1']
  const add = (sql: (p: string) => string, value: unknown): void => {
    params.push(value)
    where.push(sql(`$${String(params.length)}`))
  }
  if (f.class !== null) add((p) => `b.class = ${p}`, f.class)
  if (f.status === 'open') where.push(`b.status in ('new', 'persisting')`)
  else if (f.status !== null) add((p) => `b.status = ${p}`, f.status)
  if (f.date !== null) add((p) => `b.day = ${p}::date`, f.date)
  if (f.itemId !== null) add((p) => `b.item_id = ${p}`, f.itemId)
  if (f.minAgeDays !== null) add((p) => `b.first_seen_at <= now() - make_interval(days => ${p}::int)`, f.minAgeDays)
  if (page.after !== null) {
    params.push(page.after.at, page.after.id)
    where.push(`(b.first_seen_at, b.break_id) > ($${String(params.length - 1)}::timestamptz, $${String(params.length)})`)
  }
  params.push(page.limit + 1)
  const { rows } = await rm.pool.query<Row>(
    `select *, ${AGE_BUCKET} from (select ${BREAK_COLUMNS} from ${qualified(rm.schema, BREAKS_TABLE)} b where ${where.join(' and ')}
       order by b.first_seen_at, b.break_id limit $${String(params.length)}) x order by first_seen_at, break_id`,
    params,
  )
  const items = rows.slice(0, page.limit)
  const last = items.at(-1)
  return { items: items.map(breakJson), next: rows.length > page.limit && last !== undefined ? { at: iso(last['first_seen_at']) ?? '', id: String(last['break_id']) } : null }
}

export const readBreak = async (rm: Pick<ReadModels, 'schema'> & { readonly pool: Queryable }, merchantId: string, breakId: string): Promise<JsonObject | null> => {
  const { rows } = await rm.pool.query<Row>(`select *, ${AGE_BUCKET} from (select ${BREAK_COLUMNS} from ${qualified(rm.schema, BREAKS_TABLE)} b where b.merchant_id = $1 and b.break_id = $2) x`, [merchantId, breakId])
  const row = rows[0]
  return row === undefined ? null : breakJson(row)
}

/** The verdict of each business day in from..to that a run covered, with the breaks of that day still open now. */
export const readDays = async (rm: Pick<ReadModels, 'schema'> & { readonly pool: Queryable }, merchantId: string, from: string, to: string): Promise<ReadonlyArray<JsonObject>> => {
  const { rows } = await rm.pool.query<Row>(
    `select d.*, to_char(d.day, 'YYYY-MM-DD') as day_text, d.checked_satang::text as checked_satang, d.healed_satang::text as healed_satang,
            d.at_stake_satang::text as at_stake_satang, d.unchecked_satang::text as unchecked_satang,
            (select count(*)::int from ${qualified(rm.schema, BREAKS_TABLE)} b where b.merchant_id = d.merchant_id and b.day = d.day and b.status in ('new', 'persisting')) as open_breaks_now
       from ${qualified(rm.schema, DAYS_TABLE)} d where d.merchant_id = $1 and d.day between $2::date and $3::date order by d.day`,
    [merchantId, from, to],
  )
  return rows.map((r) => ({
    day: text(r['day_text']),
    verdict: text(r['verdict']),
    run_id: text(r['run_id']),
    reconciled_at: iso(r['reconciled_at']),
    counts: countsOf(r),
    totals: totalsOf(r),
    open_breaks_now: int(r['open_breaks_now']),
  }))
}
