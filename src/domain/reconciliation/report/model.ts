import type { JsonObject } from '../../events/envelope.ts'
import { formatAmount } from '../../money.ts'
import { AGE_BUCKETS, type AgeBucket } from '../ageing.ts'
import { BREAK_CLASSES, ITEM_OUTCOMES, type ItemOutcome } from '../break-class.ts'
import type { CheckedItem } from '../events/values.ts'
import type { Verdict } from '../verdict.ts'

/*
 * The reconciliation report (`satang report reconciliation`): per Bangkok day, the verdict and the
 * counts and amounts of each outcome and break class (from the items of the run that covered the
 * day), the ageing of the breaks still open, the open breaks, the items healed, and the ledger's
 * gateway receivable beside the sum the items make. Pure: the reads fill it, the formats print it.
 */

/** A count of items and the satang they carry. */
export type Figure = { readonly count: number; readonly amount: bigint }

/** Per break class: how many items, their amounts and the satang at stake. */
export type ClassFigure = Figure & { readonly atStake: bigint }

/** Items by outcome: every item, and payments (orders, subscription charges, callbacks about unknown orders) apart from refunds. */
export type OutcomeFigures = Readonly<Record<ItemOutcome, Figure>>

export type DayFigures = {
  readonly outcomes: OutcomeFigures
  /** Items that are not refunds (orders, subscription charges, unmatched callbacks), by outcome. */
  readonly payments: OutcomeFigures
  /** Refund items, by outcome: their amounts are money going back, never added to the payments'. */
  readonly refunds: OutcomeFigures
  /** Every break class, in BREAK_CLASSES order (zeros included): breaks open at the run, and unchecked items as query_failed. */
  readonly classes: Readonly<Record<string, ClassFigure>>
  readonly atStake: bigint
}

export type ReportDay = DayFigures & {
  readonly day: string
  /** null: no completed run covered the day. */
  readonly verdict: Verdict | null
  readonly runId: string | null
  readonly reconciledAt: Date | null
  /** Breaks of the day still open when the report was made. */
  readonly openBreaksNow: number
}

export type ReportBreak = {
  readonly breakId: string
  readonly class: string
  readonly status: string
  readonly itemKind: string
  readonly itemId: string
  readonly merchantOrderId: string | null
  readonly merchantRefundId: string | null
  readonly merchantSubscribeId: string | null
  readonly itemStream: string | null
  readonly day: string
  readonly atStake: bigint
  readonly satangView: JsonObject
  readonly gatewayView: JsonObject
  readonly detail: string
  readonly traceId: string | null
  readonly observationKey: string | null
  readonly firstSeenAt: Date
  readonly firstSeenRunId: string
  readonly lastSeenAt: Date
  readonly lastSeenRunId: string
  readonly ageDays: number
  readonly ageBucket: AgeBucket
}

export type ReportHealed = {
  readonly runId: string
  readonly itemKind: string
  readonly itemId: string
  readonly day: string
  readonly from: string | null
  readonly to: string
  readonly amount: bigint
  readonly healedAt: Date
}

export type AgeingCell = { readonly class: string; readonly bucket: AgeBucket; readonly count: number; readonly atStake: bigint }

/** The ledger's gateway receivable at the end of the last day, beside what the items add up to. */
export type LedgerCheck = {
  readonly date: string
  /** gateway_receivable, debits minus credits, every channel, THB. */
  readonly receivable: bigint
  /** Paid orders + successful subscription charges − successful refunds, completed by the end of `date` (orders, refunds, subscription_charges read models). */
  readonly expected: { readonly paidOrders: bigint; readonly charges: bigint; readonly refunds: bigint; readonly total: bigint }
}

/** What the report was built from: an auditor rebuilds it from these. */
export type ReportSources = {
  /** Every run whose figures the report shows, with its stream and where its last event sits in the log. */
  readonly runs: ReadonlyArray<{ readonly runId: string; readonly stream: string; readonly lastEventPosition: string }>
  /** The checkpoint of each read model read (the last event it had applied). */
  readonly checkpoints: Readonly<Record<string, string | null>>
  /** The last event of the log when the report was made (or the as-of position). */
  readonly logPosition: string | null
}

export type ReconciliationReport = {
  readonly merchantId: string
  readonly from: string
  readonly to: string
  readonly generatedAt: Date
  /** The instant ages are measured at (the as-of instant, else when the report was made). */
  readonly asOf: { readonly instant: Date; readonly position: string | null; readonly requested: string | null }
  readonly days: ReadonlyArray<ReportDay>
  readonly openBreaks: ReadonlyArray<ReportBreak>
  readonly healed: ReadonlyArray<ReportHealed>
  readonly ledger: LedgerCheck
  readonly sources: ReportSources
}

const zero: Figure = { count: 0, amount: 0n }

/** Counts and amounts of each outcome and break class among `items` (one day's, of one run). */
const noOutcomes = (): Record<ItemOutcome, Figure> => Object.fromEntries(ITEM_OUTCOMES.map((o) => [o, zero])) as Record<ItemOutcome, Figure>

export const dayFigures = (items: ReadonlyArray<CheckedItem>): DayFigures => {
  const outcomes = noOutcomes()
  const payments = noOutcomes()
  const refunds = noOutcomes()
  const classes: Record<string, ClassFigure> = Object.fromEntries(BREAK_CLASSES.map((c) => [c, { ...zero, atStake: 0n }]))
  let atStake = 0n
  for (const i of items) {
    const o = outcomes[i.outcome]
    outcomes[i.outcome] = { count: o.count + 1, amount: o.amount + i.amount }
    const side = i.kind === 'refund' ? refunds : payments
    side[i.outcome] = { count: side[i.outcome].count + 1, amount: side[i.outcome].amount + i.amount }
    if (i.outcome === 'break') atStake += i.atStake
    if (i.breakClass !== null && (i.outcome === 'break' || i.outcome === 'unchecked')) {
      const c = classes[i.breakClass] ?? { ...zero, atStake: 0n }
      classes[i.breakClass] = { count: c.count + 1, amount: c.amount + i.amount, atStake: c.atStake + i.atStake }
    }
  }
  return { outcomes, payments, refunds, classes, atStake }
}

/** The figures of several days added up. */
export const sumFigures = (days: ReadonlyArray<DayFigures>): DayFigures => {
  const outcomes = noOutcomes()
  const payments = noOutcomes()
  const refunds = noOutcomes()
  const classes: Record<string, ClassFigure> = Object.fromEntries(BREAK_CLASSES.map((c) => [c, { ...zero, atStake: 0n }]))
  let atStake = 0n
  for (const d of days) {
    for (const o of ITEM_OUTCOMES) {
      outcomes[o] = { count: outcomes[o].count + d.outcomes[o].count, amount: outcomes[o].amount + d.outcomes[o].amount }
      payments[o] = { count: payments[o].count + d.payments[o].count, amount: payments[o].amount + d.payments[o].amount }
      refunds[o] = { count: refunds[o].count + d.refunds[o].count, amount: refunds[o].amount + d.refunds[o].amount }
    }
    for (const [k, v] of Object.entries(d.classes)) {
      const c = classes[k] ?? { ...zero, atStake: 0n }
      classes[k] = { count: c.count + v.count, amount: c.amount + v.amount, atStake: c.atStake + v.atStake }
    }
    atStake += d.atStake
  }
  return { outcomes, payments, refunds, classes, atStake }
}

const SERIOUSNESS: ReadonlyArray<Verdict | 'not_reconciled'> = ['not_reconciled', 'incomplete', 'breaks', 'reconciled_with_pending', 'reconciled']

/** The verdict of the whole period: its most serious day; `not_reconciled` when a day has no run. */
export const periodVerdict = (days: ReadonlyArray<Pick<ReportDay, 'verdict'>>): Verdict | 'not_reconciled' => {
  const seen = new Set(days.map((d) => d.verdict ?? 'not_reconciled'))
  return SERIOUSNESS.find((v) => seen.has(v)) ?? 'not_reconciled'
}

/** Open breaks by class and age bucket (only the cells that hold a break). */
export const ageingOf = (breaks: ReadonlyArray<Pick<ReportBreak, 'class' | 'ageBucket' | 'atStake'>>): ReadonlyArray<AgeingCell> => {
  const cells = new Map<string, AgeingCell>()
  for (const b of breaks) {
    const key = `${b.class}\u0000${b.ageBucket}`
    const c = cells.get(key) ?? { class: b.class, bucket: b.ageBucket, count: 0, atStake: 0n }
    cells.set(key, { ...c, count: c.count + 1, atStake: c.atStake + b.atStake })
  }
  const classRank = (c: string): number => (BREAK_CLASSES as ReadonlyArray<string>).indexOf(c)
  return [...cells.values()].sort((a, b) => classRank(a.class) - classRank(b.class) || AGE_BUCKETS.indexOf(a.bucket) - AGE_BUCKETS.indexOf(b.bucket))
}

export const ledgerDifference = (l: LedgerCheck): bigint => l.receivable - l.expected.total

/** Satang and baht side by side, as every amount of the report shows. */
export const money = (satang: bigint): { readonly satang: string; readonly baht: string } => ({ satang: satang.toString(), baht: formatAmount(satang) })
