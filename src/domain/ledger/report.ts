import type { JsonObject } from '../events/envelope.ts'
import { formatAmount } from '../money.ts'
import { normalSideOf } from './accounts.ts'

/*
 * The trial balance as the merchant API (`GET /v1/ledger/balances`) and `satang report ledger` show
 * it: one row per account, channel and currency, with totals per currency (debits = credits). Pure.
 */

/** Sums of one account on one channel in one currency. A balance is `debit - credit`. */
export type BalanceRow = {
  readonly account: string
  readonly channel: string
  readonly currency: string
  readonly debit: bigint
  readonly credit: bigint
}

/** What the trial balance covers: every entry, or those up to the end of a Bangkok date; optionally one currency or channel. */
export type BalanceScope = {
  /** `yyyy-MM-dd`, Asia/Bangkok: entries posted on that date or before. */
  readonly date: string | null
  readonly currency: string | null
  readonly channel: string | null
}

export type CurrencyTotal = { readonly currency: string; readonly debit: bigint; readonly credit: bigint }

const DAY_MS = 86_400_000

/** The instant a Bangkok calendar date ends (the next day's 00:00 in Asia/Bangkok, UTC+7). */
export const endOfBangkokDay = (date: string): Date => new Date(Date.parse(`${date}T00:00:00.000+07:00`) + DAY_MS)

/** Satang as a JSON number; exact up to 2^53 - 1 satang (about 90 trillion baht). */
export const satangNumber = (n: bigint): number => {
  const v = Number(n)
  if (!Number.isSafeInteger(v)) throw new RangeError(`${n.toString()} satang is beyond what JSON numbers hold exactly`)
  return v
}

/** Debit and credit totals per currency, currencies in alphabetical order. */
export const currencyTotals = (rows: ReadonlyArray<BalanceRow>): ReadonlyArray<CurrencyTotal> => {
  const sums = new Map<string, { debit: bigint; credit: bigint }>()
  for (const r of rows) {
    const s = sums.get(r.currency) ?? { debit: 0n, credit: 0n }
    sums.set(r.currency, { debit: s.debit + r.debit, credit: s.credit + r.credit })
  }
  return [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([currency, s]) => ({ currency, ...s }))
}

export const isBalancedTotals = (totals: ReadonlyArray<CurrencyTotal>): boolean => totals.every((t) => t.debit === t.credit)

const amounts = (debit: bigint, credit: bigint) => ({
  debit_satang: satangNumber(debit),
  credit_satang: satangNumber(credit),
  balance_satang: satangNumber(debit - credit),
  debit: formatAmount(debit),
  credit: formatAmount(credit),
  balance: formatAmount(debit - credit),
})

/** The JSON of a trial balance (HTTP and `--json`): amounts in satang (numbers) and as baht text. */
export const trialBalanceJson = (rows: ReadonlyArray<BalanceRow>, scope: BalanceScope): JsonObject => {
  const totals = currencyTotals(rows)
  return {
    as_of:
      scope.date === null
        ? { date_bangkok: null, until_utc: null }
        : { date_bangkok: scope.date, until_utc: endOfBangkokDay(scope.date).toISOString() },
    filters: { currency: scope.currency, channel: scope.channel },
    balances: rows.map((r) => ({ account: r.account, normal_balance: normalSideOf(r.account), channel: r.channel, currency: r.currency, ...amounts(r.debit, r.credit) })),
    totals: totals.map((t) => ({ currency: t.currency, ...amounts(t.debit, t.credit), balanced: t.debit === t.credit })),
    balanced: isBalancedTotals(totals),
  }
}

/** Columns of `--csv`: one row per account, channel and currency (no totals row). */
export const TRIAL_BALANCE_CSV_COLUMNS = ['account', 'normal_balance', 'channel', 'currency', 'debit_satang', 'credit_satang', 'balance_satang', 'debit', 'credit', 'balance'] as const

/** The columns of `--csv` that hold numbers (satang and baht); the others are text. */
export const TRIAL_BALANCE_CSV_NUMERIC: ReadonlyArray<string> = ['debit_satang', 'credit_satang', 'balance_satang', 'debit', 'credit', 'balance']

export const trialBalanceCsvRecords = (rows: ReadonlyArray<BalanceRow>): ReadonlyArray<ReadonlyArray<string>> =>
  rows.map((r) => [
    r.account,
    normalSideOf(r.account) ?? '',
    r.channel,
    r.currency,
    r.debit.toString(),
    r.credit.toString(),
    (r.debit - r.credit).toString(),
    formatAmount(r.debit),
    formatAmount(r.credit),
    formatAmount(r.debit - r.credit),
  ])

/** A human table of the trial balance, with a totals line per currency saying whether debits = credits. */
export const trialBalanceText = (rows: ReadonlyArray<BalanceRow>, scope: BalanceScope): string => {
  const title = [
    'Trial balance',
    scope.date === null ? 'all entries' : `as of the end of ${scope.date} (Asia/Bangkok; entries posted before ${endOfBangkokDay(scope.date).toISOString()})`,
    scope.currency === null ? '' : `currency ${scope.currency}`,
    scope.channel === null ? '' : `channel ${scope.channel}`,
  ]
    .filter((s) => s !== '')
    .join(', ')
  const totals = currencyTotals(rows)
  const header = ['ACCOUNT', 'CHANNEL', 'CURRENCY', 'DEBIT', 'CREDIT', 'BALANCE']
  const body = rows.map((r) => [r.account, r.channel, r.currency, formatAmount(r.debit), formatAmount(r.credit), formatAmount(r.debit - r.credit)])
  const totalLines = totals.map((t) => ['TOTAL', '', t.currency, formatAmount(t.debit), formatAmount(t.credit), formatAmount(t.debit - t.credit)])
  const all = [header, ...body, ...totalLines]
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
  const numeric = (i: number): boolean => i >= 3
  const render = (r: ReadonlyArray<string>): string =>
    r
      .map((cell, i) => (numeric(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  const lines = [title, '', render(header), rule, ...body.map(render)]
  if (rows.length === 0) lines.push('(no ledger entries)')
  lines.push(rule, ...totalLines.map(render))
  if (totals.length === 0) lines.push('debits = credits (nothing posted)')
  for (const t of totals) {
    lines.push(t.debit === t.credit ? `${t.currency}: debits = credits (${formatAmount(t.debit)})` : `${t.currency}: NOT BALANCED: debits ${formatAmount(t.debit)} ≠ credits ${formatAmount(t.credit)}`)
  }
  return `${lines.join('\n')}\n`
}

/** A closed period as the ledger records it: the days `fromDate` (null: the first) through `throughDate`. */
export type ClosedPeriod = {
  readonly eventId: string
  readonly fromDate: string | null
  readonly throughDate: string
  readonly ruleVersion: number
  readonly closedBy: string
  readonly reason: string | null
  readonly closedAt: Date
}

export type LedgerPeriods = {
  readonly closed: ReadonlyArray<ClosedPeriod>
  /** The rule version the open period's lines are at (null: the ledger's tables are not there). */
  readonly openRulesVersion: number | null
  /** Adjustment lines in the ledger: rule changes booked for facts of closed periods. */
  readonly adjustmentLines: number
}

const dayAfter = (date: string): string => new Date(Date.parse(`${date}T00:00:00.000Z`) + DAY_MS).toISOString().slice(0, 10)

/** The JSON of the periods (`satang report ledger --json`, under `periods`). */
export const ledgerPeriodsJson = (p: LedgerPeriods): JsonObject => {
  const last = p.closed[p.closed.length - 1]
  return {
    closed: p.closed.map((c) => ({
      from_date_bangkok: c.fromDate,
      through_date_bangkok: c.throughDate,
      rule_version: c.ruleVersion,
      closed_by: c.closedBy,
      reason: c.reason,
      closed_at: c.closedAt.toISOString(),
      event_id: c.eventId,
    })),
    closed_through_bangkok: last?.throughDate ?? null,
    open_from_bangkok: last === undefined ? null : dayAfter(last.throughDate),
    open_rule_version: p.openRulesVersion,
    adjustment_lines: p.adjustmentLines,
  }
}

/** The periods for people: which days are closed, by whom and by which rule version, and what is open. */
export const ledgerPeriodsText = (p: LedgerPeriods): string => {
  const rules = p.openRulesVersion === null ? '' : `, posted by posting rules v${String(p.openRulesVersion)}`
  const last = p.closed[p.closed.length - 1]
  if (last === undefined) return `Periods (Asia/Bangkok business days): none closed; every day is open${rules}\n`
  const header = ['FROM', 'THROUGH', 'RULES', 'CLOSED BY', 'CLOSED AT (UTC)', 'REASON']
  const body = p.closed.map((c) => [c.fromDate ?? '(first)', c.throughDate, `v${String(c.ruleVersion)}`, c.closedBy, c.closedAt.toISOString(), c.reason ?? ''])
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((r) => (r[i] ?? '').length)))
  const render = (r: ReadonlyArray<string>): string =>
    r
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd()
  const adjustments = p.adjustmentLines === 0 ? '' : `; ${String(p.adjustmentLines)} adjustment lines book rule changes for facts of closed periods`
  return [`Periods (Asia/Bangkok business days): closed through ${last.throughDate}`, render(header), ...body.map(render), `open from ${dayAfter(last.throughDate)}${rules}${adjustments}`, ''].join('\n')
}
