import { formatAmount } from '../../money.ts'
import { BREAK_CLASSES, type ItemOutcome } from '../break-class.ts'
import type { ReconciliationReport } from './model.ts'
import { bangkokLocal } from './people.ts'

/*
 * The report's tables as CSV records (`--csv DIR`: days.csv, breaks.csv, healed.csv): satang and baht
 * columns, no totals rows; each UTC instant (`*_at`, ISO-8601) has its Bangkok wall time beside it
 * (`*_at_bangkok`). Every column is described in COLUMN_DICTIONARY (its readable header for
 * `--header human` and its meaning; docs/finance.md "CSV columns" lists them all).
 */

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

/** Payments and refunds apart, for the outcomes finance adds up. */
const SIDE_OUTCOMES: ReadonlyArray<readonly [ItemOutcome, string]> = [
  ['matched', 'matched'],
  ['healed', 'healed'],
]
const SIDES = ['payments', 'refunds'] as const

const DAY_NUMBERS = [
  ...OUTCOME_COLUMNS.flatMap(([, name]) => [`${name}_count`, `${name}_satang`, name]),
  ...SIDES.flatMap((side) => SIDE_OUTCOMES.flatMap(([, name]) => [`${side}_${name}_count`, `${side}_${name}_satang`, `${side}_${name}`])),
  'at_stake_satang',
  'at_stake',
  'open_breaks_now',
  ...BREAK_CLASSES.flatMap((c) => [`${c}_count`, `${c}_at_stake_satang`]),
]

export const daysTable = (r: ReconciliationReport): CsvTable => ({
  file: 'days.csv',
  columns: ['day', 'verdict', 'run_id', 'reconciled_at', 'reconciled_at_bangkok', ...DAY_NUMBERS],
  numeric: DAY_NUMBERS,
  rows: r.days.map((d) => [
    d.day,
    d.verdict ?? 'not_reconciled',
    d.runId ?? '',
    d.reconciledAt?.toISOString() ?? '',
    d.reconciledAt === null ? '' : bangkokLocal(d.reconciledAt),
    ...OUTCOME_COLUMNS.flatMap(([o]) => [String(d.outcomes[o].count), d.outcomes[o].amount.toString(), formatAmount(d.outcomes[o].amount)]),
    ...SIDES.flatMap((side) => SIDE_OUTCOMES.flatMap(([o]) => [String(d[side][o].count), d[side][o].amount.toString(), formatAmount(d[side][o].amount)])),
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
    'first_seen_at_bangkok',
    'last_seen_at',
    'last_seen_at_bangkok',
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
    bangkokLocal(b.firstSeenAt),
    b.lastSeenAt.toISOString(),
    bangkokLocal(b.lastSeenAt),
    String(b.ageDays),
    b.ageBucket,
    b.detail,
    b.traceId ?? '',
    b.observationKey ?? '',
  ]),
})

export const healedTable = (r: ReconciliationReport): CsvTable => ({
  file: 'healed.csv',
  columns: ['run_id', 'item_kind', 'item_id', 'day', 'from_status', 'to_status', 'amount_satang', 'amount', 'healed_at', 'healed_at_bangkok'],
  numeric: ['amount_satang', 'amount'],
  rows: r.healed.map((h) => [h.runId, h.itemKind, h.itemId, h.day, h.from ?? '', h.to, h.amount.toString(), formatAmount(h.amount), h.healedAt.toISOString(), bangkokLocal(h.healedAt)]),
})

export const csvTables = (r: ReconciliationReport): ReadonlyArray<CsvTable> => [daysTable(r), breaksTable(r), healedTable(r)]

/** A column's readable header (`--header human`) and what it holds. */
export type ColumnDoc = { readonly human: string; readonly meaning: string }

const OUTCOME_MEANING: Readonly<Record<string, string>> = {
  matched: 'items both sides agree on',
  healed: 'items the run healed (satang had missed a notification; the gateway answer was recorded)',
  pending: 'items legitimately still pending on both sides',
  unchecked: 'items the gateway could not answer for (not checked)',
  acknowledged: 'items still inconsistent whose break a person acknowledged',
  breaks: 'items with an open break',
}
const title = (s: string): string => `${(s[0] ?? '').toUpperCase()}${s.slice(1)}`

const outcomeDocs = (prefix: string, name: string, who: string): ReadonlyArray<readonly [string, ColumnDoc]> => {
  const label = prefix === '' ? title(name) : `${title(prefix)} ${name}`
  return [
    [`${prefix === '' ? '' : `${prefix}_`}${name}_count`, { human: `${label} (items)`, meaning: `number of ${who}${OUTCOME_MEANING[name] ?? name}` }],
    [`${prefix === '' ? '' : `${prefix}_`}${name}_satang`, { human: `${label} (satang)`, meaning: `their amounts added up, in satang (integer)` }],
    [`${prefix === '' ? '' : `${prefix}_`}${name}`, { human: `${label} (THB)`, meaning: `the same in baht, two decimals` }],
  ]
}

/** Every column of days.csv, breaks.csv and healed.csv, and of the trial balance CSV (`report ledger --csv`, the console's ledger.csv). */
export const COLUMN_DICTIONARY: Readonly<Record<string, ColumnDoc>> = Object.fromEntries([
  ['day', { human: 'Business day (Bangkok)', meaning: 'the Asia/Bangkok business day, yyyy-MM-dd' }],
  ['verdict', { human: 'Verdict', meaning: 'reconciled, reconciled_with_pending, breaks, incomplete, or not_reconciled (no run covered the day)' }],
  ['run_id', { human: 'Run id', meaning: 'the reconciliation run whose items the figures come from' }],
  ['reconciled_at', { human: 'Reconciled at (UTC)', meaning: 'when that run completed, ISO-8601 UTC' }],
  ['reconciled_at_bangkok', { human: 'Reconciled at (Bangkok)', meaning: 'the same instant in Asia/Bangkok wall time, yyyy-MM-dd HH:mm:ss' }],
  ...OUTCOME_COLUMNS.flatMap(([, name]) => outcomeDocs('', name, '')),
  ...SIDES.flatMap((side) => SIDE_OUTCOMES.flatMap(([, name]) => outcomeDocs(side, name, side === 'payments' ? 'payment items (orders, subscription charges): ' : 'refund items: '))),
  ['at_stake_satang', { human: 'At stake (satang)', meaning: 'the satang at stake in the open breaks of the day, as the run saw them' }],
  ['at_stake', { human: 'At stake (THB)', meaning: 'the same in baht' }],
  ['open_breaks_now', { human: 'Open breaks now', meaning: "the day's breaks still open (new or persisting) when the report was made" }],
  ...BREAK_CLASSES.flatMap((c) => [
    [`${c}_count`, { human: `${c} (items)`, meaning: `items of the day with a ${c} break (unchecked items count as query_failed)` }],
    [`${c}_at_stake_satang`, { human: `${c} at stake (satang)`, meaning: `the satang at stake in them` }],
  ]),
  ['break_id', { human: 'Break id', meaning: 'the break, as satang reconcile ack and the console name it' }],
  ['class', { human: 'Class', meaning: 'the break class (docs/finance.md "Break classes")' }],
  ['status', { human: 'Status', meaning: 'new (first seen by the last run) or persisting' }],
  ['item_kind', { human: 'Item kind', meaning: 'payment, refund, subscription or unmatched_callback' }],
  ['item_id', { human: 'Item id', meaning: "the item's id (the merchant order, refund or subscription id, or a charge's)" }],
  ['merchant_order_id', { human: 'Merchant order id', meaning: "the order's id, when the item is or belongs to an order" }],
  ['merchant_refund_id', { human: 'Merchant refund id', meaning: "the refund's id, for a refund" }],
  ['merchant_subscribe_id', { human: 'Merchant subscription id', meaning: "the subscription's id, for a subscription charge" }],
  ['amount_at_stake_satang', { human: 'At stake (satang)', meaning: 'the satang at stake in the break' }],
  ['amount_at_stake', { human: 'At stake (THB)', meaning: 'the same in baht' }],
  ['first_seen_at', { human: 'First seen (UTC)', meaning: 'when a run first saw the break, ISO-8601 UTC' }],
  ['first_seen_at_bangkok', { human: 'First seen (Bangkok)', meaning: 'the same instant in Asia/Bangkok wall time' }],
  ['last_seen_at', { human: 'Last seen (UTC)', meaning: 'when a run last saw it, ISO-8601 UTC' }],
  ['last_seen_at_bangkok', { human: 'Last seen (Bangkok)', meaning: 'the same instant in Asia/Bangkok wall time' }],
  ['age_days', { human: 'Age (days)', meaning: 'whole days since first seen' }],
  ['age_bucket', { human: 'Age bucket', meaning: '0-1, 2-7, 8-30 or >30 days' }],
  ['detail', { human: 'Detail', meaning: 'what the run found, in words' }],
  ['trace_id', { human: 'Gateway trace id', meaning: "the gateway's trace id of the answer that showed the break (evidence)" }],
  ['observation_key', { human: 'Observation key', meaning: 'the observation recorded with it (evidence; the console links it to the event)' }],
  ['from_status', { human: 'From status', meaning: 'the status satang held before the healing' }],
  ['to_status', { human: 'To status', meaning: 'the status the gateway answered, now recorded' }],
  ['amount_satang', { human: 'Amount (satang)', meaning: "the item's amount in satang" }],
  ['amount', { human: 'Amount (THB)', meaning: 'the same in baht' }],
  ['healed_at', { human: 'Healed at (UTC)', meaning: 'when the run recorded the healing, ISO-8601 UTC' }],
  ['healed_at_bangkok', { human: 'Healed at (Bangkok)', meaning: 'the same instant in Asia/Bangkok wall time' }],
  ['account', { human: 'Account', meaning: 'the ledger account' }],
  ['normal_balance', { human: 'Normal balance', meaning: 'debit or credit: the side the account normally holds' }],
  ['channel', { human: 'Channel', meaning: 'the payment channel the entries came through' }],
  ['currency', { human: 'Currency', meaning: 'ISO 4217 code (THB)' }],
  ['debit_satang', { human: 'Debit (satang)', meaning: 'debits added up, satang' }],
  ['credit_satang', { human: 'Credit (satang)', meaning: 'credits added up, satang' }],
  ['balance_satang', { human: 'Balance (satang)', meaning: 'debits minus credits, satang (negative: a credit balance)' }],
  ['debit', { human: 'Debit (THB)', meaning: 'debits in baht' }],
  ['credit', { human: 'Credit (THB)', meaning: 'credits in baht' }],
  ['balance', { human: 'Balance (THB)', meaning: 'debits minus credits in baht' }],
] as ReadonlyArray<readonly [string, ColumnDoc]>)

/** A column's readable header; the column's own name when the dictionary does not hold it. */
export const humanHeader = (column: string): string => COLUMN_DICTIONARY[column]?.human ?? column
