import type { Pool } from 'pg'
import type { BalanceRow, BalanceScope, LedgerPeriods } from '../../domain/ledger/report.ts'
import { qualified } from '../types.ts'
import { LEDGER_ENTRIES, LEDGER_PERIODS, LEDGER_RULES_STATE, type FactIdentity } from './projection.ts'

/*
 * Reads of the ledger read model (src/projections/ledger/projection.ts), for the HTTP routes and `satang report ledger`.
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

type EntryRow = FactIdentity & {
  entry_id: string
  line: number
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

/** The periods of the ledger as `satang report ledger` states them. */
export const readLedgerPeriods = async (rm: { readonly pool: Queryable; readonly schema: string }): Promise<LedgerPeriods> => {
  const closed = await rm.pool.query<{ event_id: string; from_date: string | null; through_date: string; rule_version: number; closed_by: string; reason: string | null; closed_at: Date }>(
    `select event_id::text as event_id, to_char(from_date, 'YYYY-MM-DD') as from_date, to_char(through_date, 'YYYY-MM-DD') as through_date, rule_version, closed_by, reason, closed_at
       from ${qualified(rm.schema, LEDGER_PERIODS)} order by through_date`,
  )
  const state = await rm.pool.query<{ rules_version: number; adjustments: string }>(
    `select rules_version, (select count(*) from ${qualified(rm.schema, LEDGER_ENTRIES)} where entry_kind = 'adjustment')::text as adjustments from ${qualified(rm.schema, LEDGER_RULES_STATE)}`,
  )
  return {
    closed: closed.rows.map((r) => ({ eventId: r.event_id, fromDate: r.from_date, throughDate: r.through_date, ruleVersion: r.rule_version, closedBy: r.closed_by, reason: r.reason, closedAt: r.closed_at })),
    openRulesVersion: state.rows[0]?.rules_version ?? null,
    adjustmentLines: Number(state.rows[0]?.adjustments ?? '0'),
  }
}
