import type { JsonObject } from '../../domain/events/envelope.ts'
import { satangNumber } from '../../domain/ledger/report.ts'
import { ageBucketOf, ageDays } from '../../domain/reconciliation/ageing.ts'
import type { DaySummary, ItemRef, OutcomeCounts, OutcomeTotals, ReconciliationRunCompletedData } from '../../domain/reconciliation/events/index.ts'
import { countItems, checkedItems, openBreaksOf, type Run } from '../../domain/reconciliation/run.ts'

/**
 * The result of a run as `satang reconcile --json` prints it (docs/finance.md "satang reconcile"): verdict,
 * counts, totals in satang, the verdict of each day, the breaks still open at its end with both views
 * and their age, the breaks it resolved, the items it healed.
 */
export type RunReport = JsonObject

const itemJson = (i: ItemRef): JsonObject => ({
  kind: i.kind,
  id: i.id,
  merchant_order_id: i.merchantOrderId,
  merchant_refund_id: i.merchantRefundId,
  merchant_subscribe_id: i.merchantSubscribeId,
  stream: i.stream,
})

export const countsJson = (c: OutcomeCounts): JsonObject => ({
  checked: c.checked,
  matched: c.matched,
  healed: c.healed,
  pending: c.pending,
  unchecked: c.unchecked,
  acknowledged: c.acknowledged,
  open_breaks: c.breaks,
  breaks: { ...c.byClass },
})

export const totalsJson = (t: OutcomeTotals): JsonObject => ({
  checked_satang: satangNumber(t.checked),
  healed_satang: satangNumber(t.healed),
  at_stake_satang: satangNumber(t.atStake),
  unchecked_satang: satangNumber(t.unchecked),
})

const dayJson = (d: DaySummary): JsonObject => ({ day: d.day, verdict: d.verdict, counts: countsJson(d.counts), totals: totalsJson(d.totals) })

export type ReportContext = {
  readonly dryRun: boolean
  readonly resumed: boolean
  readonly supersededRuns: ReadonlyArray<string>
  readonly asOf: Date
  readonly finishedAt: Date
  /** The summary as completed (a dry run computes it without appending). */
  readonly completion: ReconciliationRunCompletedData
}

export const runReport = (run: Run, ctx: ReportContext): RunReport => {
  const s = run.started
  const c = ctx.completion
  const items = checkedItems(run)
  const outcomeOf = new Map(items.flatMap((i) => (i.breakId === null ? [] : [[i.breakId, i.outcome] as const])))
  return {
    run_id: s.runId,
    merchant_id: s.merchantId,
    dry_run: ctx.dryRun,
    resumed: ctx.resumed,
    superseded_runs: [...ctx.supersededRuns],
    scope: { kind: s.scope.kind, from: s.scope.from, to: s.scope.to },
    started_by: { trigger: s.startedBy.trigger, actor: s.startedBy.actor },
    as_of: ctx.asOf.toISOString(),
    started_at: s.startedAt.toISOString(),
    completed_at: c.completedAt.toISOString(),
    duration_ms: Math.max(0, ctx.finishedAt.getTime() - s.startedAt.getTime()),
    verdict: c.verdict,
    counts: countsJson(c.counts),
    totals: totalsJson(c.totals),
    days: c.days.map(dayJson),
    breaks: openBreaksOf(run).map((b) => {
      const age = ageDays(b.firstSeenAt, ctx.finishedAt)
      return {
        break_id: b.breakId,
        class: b.class,
        status: b.status,
        outcome: outcomeOf.get(b.breakId) ?? 'break',
        item: itemJson(b.item),
        day: b.day,
        satang_view: b.satangView,
        gateway_view: b.gatewayView,
        amount_at_stake_satang: satangNumber(b.amountAtStake),
        detail: b.detail,
        first_seen_at: b.firstSeenAt.toISOString(),
        first_seen_run_id: b.firstSeenRunId,
        last_seen_at: b.detectedAt.toISOString(),
        age_days: age,
        age_bucket: ageBucketOf(age),
        evidence: { trace_id: b.evidence.traceId, observation_key: b.evidence.observationKey },
      }
    }),
    resolved: [...run.resolved.values()].map((r) => ({ break_id: r.breakId, class: r.class, item: itemJson(r.item), resolution: r.resolution, resolved_at: r.resolvedAt.toISOString() })),
    healed: run.healed.map((h) => ({ item: itemJson(h.item), day: h.day, from: h.from, to: h.to, amount_satang: satangNumber(h.amount), healed_at: h.healedAt.toISOString() })),
  }
}

/** The counts of what a run has checked so far (progress, and the summary of a run that could not complete). */
export const progressCounts = (run: Run): OutcomeCounts => countItems(checkedItems(run)).counts
