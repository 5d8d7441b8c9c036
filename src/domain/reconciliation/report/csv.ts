import { formatAmount } from '../../money.ts'
import { BREAK_CLASSES } from '../break-class.ts'
import type { ReconciliationReport } from './model.ts'

/* The report's tables as CSV records (`--csv DIR`: days.csv, breaks.csv, healed.csv): satang and baht columns, no totals rows. */

/** `numeric`: the columns of numbers (counts, satang, baht); every other column is text. */
export type CsvTable = { readonly file: string; readonly columns: ReadonlyArray<string>; readonly numeric: ReadonlyArray<string>; readonly rows: ReadonlyArray<ReadonlyArray<string>> }

const OUTCOME_COLUMNS = [
  ['matched', 'matched'],
  ['healed', 'healed'],
  ['pending', 'pending'],
  ['unchecked', 'unchecked'],
  ['acknowledged', 'acknowledged'],
  ['break', 'breaks'],
] as const

const DAY_NUMBERS = [
  ...OUTCOME_COLUMNS.flatMap(([, name]) => [`${name}_count`, `${name}_satang`, name]),
  'at_stake_satang',
  'at_stake',
  'open_breaks_now',
  ...BREAK_CLASSES.flatMap((c) => [`${c}_count`, `${c}_at_stake_satang`]),
]

export const daysTable = (r: ReconciliationReport): CsvTable => ({
  file: 'days.csv',
  columns: ['day', 'verdict', 'run_id', 'reconciled_at', ...DAY_NUMBERS],
  numeric: DAY_NUMBERS,
  rows: r.days.map((d) => [
    d.day,
    d.verdict ?? 'not_reconciled',
    d.runId ?? '',
    d.reconciledAt?.toISOString() ?? '',
    ...OUTCOME_COLUMNS.flatMap(([o]) => [String(d.outcomes[o].count), d.outcomes[o].amount.toString(), formatAmount(d.outcomes[o].amount)]),
    d.atStake.toString(),
    formatAmount(d.atStake),
    String(d.openBreaksNow),
    ...BREAK_CLASSES.flatMap((c) => [String(d.classes[c]?.count ?? 0), (d.classes[c]?.atStake ?? 0n).toString()]),
  ]),
})

export const breaksTable = (r: ReconciliationReport): CsvTable => ({
  file: 'breaks.csv',
  columns: [
    'break_id',
    'class',
    'status',
    'item_kind',
    'item_id',
    'merchant_order_id',
    'merchant_refund_id',
    'merchant_subscribe_id',
    'day',
    'amount_at_stake_satang',
    'amount_at_stake',
    'first_seen_at',
    'last_seen_at',
    'age_days',
    'age_bucket',
    'detail',
    'trace_id',
    'observation_key',
  ],
  numeric: ['amount_at_stake_satang', 'amount_at_stake', 'age_days'],
  rows: r.openBreaks.map((b) => [
    b.breakId,
    b.class,
    b.status,
    b.itemKind,
    b.itemId,
    b.merchantOrderId ?? '',
    b.merchantRefundId ?? '',
    b.merchantSubscribeId ?? '',
    b.day,
    b.atStake.toString(),
    formatAmount(b.atStake),
    b.firstSeenAt.toISOString(),
    b.lastSeenAt.toISOString(),
    String(b.ageDays),
    b.ageBucket,
    b.detail,
    b.traceId ?? '',
    b.observationKey ?? '',
  ]),
})

export const healedTable = (r: ReconciliationReport): CsvTable => ({
  file: 'healed.csv',
  columns: ['run_id', 'item_kind', 'item_id', 'day', 'from_status', 'to_status', 'amount_satang', 'amount', 'healed_at'],
  numeric: ['amount_satang', 'amount'],
  rows: r.healed.map((h) => [h.runId, h.itemKind, h.itemId, h.day, h.from ?? '', h.to, h.amount.toString(), formatAmount(h.amount), h.healedAt.toISOString()]),
})

export const csvTables = (r: ReconciliationReport): ReadonlyArray<CsvTable> => [daysTable(r), breaksTable(r), healedTable(r)]
