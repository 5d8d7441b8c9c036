import type { JsonObject } from '../../events/envelope.ts'
import { satangNumber } from '../../ledger/report.ts'
import { formatAmount } from '../../money.ts'
import { ITEM_OUTCOMES } from '../break-class.ts'
import { ageingOf, ledgerDifference, periodVerdict, sumFigures, type DayFigures, type ReconciliationReport } from './model.ts'

/* The report as one JSON document (`--json`, and report.json of `--out`). Satang as JSON integers, baht as text. */

const amounts = (satang: bigint, name = 'amount'): JsonObject => ({ [`${name}_satang`]: satangNumber(satang), [name]: formatAmount(satang) })

const outcomesJson = (f: DayFigures['outcomes']): JsonObject => Object.fromEntries(ITEM_OUTCOMES.map((o) => [o === 'break' ? 'breaks' : o, { count: f[o].count, ...amounts(f[o].amount) }]))

const figuresJson = (f: DayFigures): JsonObject => ({
  ...outcomesJson(f.outcomes),
  payments: outcomesJson(f.payments),
  refunds: outcomesJson(f.refunds),
  by_class: Object.fromEntries(Object.entries(f.classes).map(([k, c]) => [k, { count: c.count, ...amounts(c.amount), ...amounts(c.atStake, 'at_stake') }])),
  ...amounts(f.atStake, 'at_stake'),
})

export const reportJson = (r: ReconciliationReport): JsonObject => {
  const diff = ledgerDifference(r.ledger)
  return {
    report: 'reconciliation',
    merchant_id: r.merchantId,
    from: r.from,
    to: r.to,
    generated_at: r.generatedAt.toISOString(),
    as_of: { instant: r.asOf.instant.toISOString(), position: r.asOf.position, requested: r.asOf.requested },
    verdict: periodVerdict(r.days),
    totals: figuresJson(sumFigures(r.days)),
    days: r.days.map((d) => ({
      day: d.day,
      verdict: d.verdict ?? 'not_reconciled',
      run_id: d.runId,
      reconciled_at: d.reconciledAt?.toISOString() ?? null,
      open_breaks_now: d.openBreaksNow,
      ...figuresJson(d),
    })),
    ageing: ageingOf(r.openBreaks).map((c) => ({ class: c.class, age_bucket: c.bucket, count: c.count, ...amounts(c.atStake, 'at_stake') })),
    open_breaks: r.openBreaks.map((b) => ({
      break_id: b.breakId,
      class: b.class,
      status: b.status,
      item: { kind: b.itemKind, id: b.itemId, merchant_order_id: b.merchantOrderId, merchant_refund_id: b.merchantRefundId, merchant_subscribe_id: b.merchantSubscribeId, stream: b.itemStream },
      day: b.day,
      ...amounts(b.atStake, 'amount_at_stake'),
      satang_view: b.satangView,
      gateway_view: b.gatewayView,
      detail: b.detail,
      evidence: { trace_id: b.traceId, observation_key: b.observationKey },
      first_seen_at: b.firstSeenAt.toISOString(),
      first_seen_run_id: b.firstSeenRunId,
      last_seen_at: b.lastSeenAt.toISOString(),
      last_seen_run_id: b.lastSeenRunId,
      age_days: b.ageDays,
      age_bucket: b.ageBucket,
    })),
    healed: r.healed.map((h) => ({ run_id: h.runId, item: { kind: h.itemKind, id: h.itemId }, day: h.day, from: h.from, to: h.to, ...amounts(h.amount), healed_at: h.healedAt.toISOString() })),
    ledger: {
      date_bangkok: r.ledger.date,
      ...amounts(r.ledger.receivable, 'gateway_receivable'),
      expected: {
        ...amounts(r.ledger.expected.paidOrders, 'paid_orders'),
        ...amounts(r.ledger.expected.charges, 'subscription_charges'),
        ...amounts(r.ledger.expected.refunds, 'refunds'),
        ...amounts(r.ledger.expected.total, 'total'),
      },
      ...amounts(diff, 'difference'),
      agrees: diff === 0n,
    },
    sources: {
      runs: r.sources.runs.map((s) => ({ run_id: s.runId, stream: s.stream, last_event_position: s.lastEventPosition })),
      checkpoints: { ...r.sources.checkpoints },
      log_position: r.sources.logPosition,
    },
  }
}
