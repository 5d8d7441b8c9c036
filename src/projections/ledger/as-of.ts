import type { Position } from '../../application/ports/event-store.ts'
import type { BalanceRow, BalanceScope } from '../../domain/ledger/report.ts'
import { withReadModelsAsOf, type AsOfDeps, type Queryable } from '../as-of.ts'
import { readCheckpoints } from '../checkpoints.ts'
import { LEDGER_ENTRIES, LEDGER_PROJECTION_NAME, ledgerProjection } from './projection.ts'
import { qualified } from '../types.ts'

/*
 * The trial balance and daily balances as the ledger stood at a position of the log. A posting line
 * comes from one event and is never changed, so while the ledger's checkpoint is at or past the
 * position, the lines of the events up to it (`global_position <= position`) are exactly what a
 * rebuild stopped there holds. Behind its checkpoint, the ledger is built up to the position from the log.
 */

type SumRow = { account: string; channel: string; currency: string; debit: string; credit: string }

const sums = async (db: Queryable, schema: string, scope: BalanceScope, upTo: Position | null): Promise<ReadonlyArray<BalanceRow>> => {
  const r = await db.query<SumRow>(
    `select account, channel, currency, sum(debit_satang)::bigint::text as debit, sum(credit_satang)::bigint::text as credit
     from ${qualified(schema, LEDGER_ENTRIES)}
     where ($1::date is null or posting_date_bangkok <= $1::date)
       and ($2::text is null or currency = $2::text)
       and ($3::text is null or channel = $3::text)
       and ($4::text is null or global_position <= $4::text)
     group by account, channel, currency
     order by account collate "C", channel collate "C", currency collate "C"`,
    [scope.date, scope.currency, scope.channel, upTo],
  )
  return r.rows.map((row) => ({ account: row.account, channel: row.channel, currency: row.currency, debit: BigInt(row.debit), credit: BigInt(row.credit) }))
}

/** Whether the ledger projection has applied the log at least up to `position`. */
const ledgerReached = async (deps: AsOfDeps, schema: string, position: Position): Promise<boolean> => {
  const cp = (await readCheckpoints(deps.pool, schema, [LEDGER_PROJECTION_NAME])).get(LEDGER_PROJECTION_NAME)
  return cp?.position !== null && cp?.position !== undefined && cp.position >= position
}

/** The trial balance as of `position` (null: the log was empty: no rows). */
export const readTrialBalanceAsOf = async (deps: AsOfDeps, schema: string, scope: BalanceScope, position: Position | null): Promise<ReadonlyArray<BalanceRow>> => {
  if (position === null) return []
  if (await ledgerReached(deps, schema, position)) return sums(deps.pool, schema, scope, position)
  return withReadModelsAsOf(deps, [ledgerProjection], position, (rm) => sums(rm.db, rm.schema, scope, null))
}

export type DailyBalance = { readonly date: string; readonly account: string; readonly currency: string; readonly closing: bigint }

const daily = async (db: Queryable, schema: string, from: string, to: string, upTo: Position | null): Promise<ReadonlyArray<DailyBalance>> => {
  const r = await db.query<{ date: string; account: string; currency: string; closing: string }>(
    `with moves as (
       select posting_date_bangkok as d, account, currency, sum(debit_satang - credit_satang) as net
         from ${qualified(schema, LEDGER_ENTRIES)} where ($3::text is null or global_position <= $3::text) group by 1, 2, 3),
     accounts as (select distinct account, currency from moves),
     days as (select generate_series($1::date, $2::date, interval '1 day')::date as d)
     select to_char(days.d, 'YYYY-MM-DD') as date, a.account, a.currency,
            (select coalesce(sum(m.net), 0) from moves m where m.account = a.account and m.currency = a.currency and m.d <= days.d)::bigint::text as closing
       from days cross join accounts a order by a.account collate "C", a.currency, days.d`,
    [from, to, upTo],
  )
  return r.rows.map((row) => ({ date: row.date, account: row.account, currency: row.currency, closing: BigInt(row.closing) }))
}

/** The closing balance of every account (all channels) at the end of each Bangkok day from..to: now (`asOf` null), or as of a position (null: the log was empty). */
export const readDailyBalances = async (deps: AsOfDeps, schema: string, from: string, to: string, asOf: { readonly position: Position | null } | null): Promise<ReadonlyArray<DailyBalance>> => {
  if (asOf === null) return daily(deps.pool, schema, from, to, null)
  const position = asOf.position
  if (position === null) return []
  if (await ledgerReached(deps, schema, position)) return daily(deps.pool, schema, from, to, position)
  return withReadModelsAsOf(deps, [ledgerProjection], position, (rm) => daily(rm.db, rm.schema, from, to, null))
}
