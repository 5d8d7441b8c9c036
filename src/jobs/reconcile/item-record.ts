import { eventIdOf } from '../../application/event-id.ts'
import type { JsonObject } from '../../domain/events/envelope.ts'
import { keyOf } from '../../domain/events/natural-key.ts'
import { itemKeyOf, type Evidence, type ItemRef } from '../../domain/reconciliation/events/index.ts'
import type { Comparison } from '../../domain/reconciliation/comparison.ts'
import { lifecycleStep } from '../../domain/reconciliation/lifecycle.ts'
import type { ItemRecord } from '../../domain/reconciliation/run.ts'
import type { RunContext } from './context.ts'

/** One checked item, everything the run records with it. */
export type Checked = {
  readonly ref: ItemRef
  readonly day: string
  /** The item's amount (order, refund or charge). */
  readonly amount: bigint
  readonly comparison: Comparison
  readonly satangView: JsonObject
  readonly gatewayView: JsonObject
  readonly evidence: Evidence
  /** For a healed item: its status before. */
  readonly healedFrom?: string | null
}

export const paymentRef = (merchantOrderId: string, stream: string | null): ItemRef => ({ kind: 'payment', id: merchantOrderId, merchantOrderId, merchantRefundId: null, merchantSubscribeId: null, stream })

export const refundRef = (merchantRefundId: string, merchantOrderId: string, stream: string): ItemRef => ({ kind: 'refund', id: merchantRefundId, merchantOrderId, merchantRefundId, merchantSubscribeId: null, stream })

/** The item of one date of a subscription: `<merchant_subscribe_id>@<yyyy-MM-dd>`. */
export const chargeRef = (merchantSubscribeId: string, date: string, stream: string): ItemRef => ({
  kind: 'subscription',
  id: `${merchantSubscribeId}@${date}`,
  merchantOrderId: null,
  merchantRefundId: null,
  merchantSubscribeId,
  stream,
})

export const unmatchedRef = (merchantOrderId: string): ItemRef => ({ kind: 'unmatched_callback', id: merchantOrderId, merchantOrderId, merchantRefundId: null, merchantSubscribeId: null, stream: null })

const stakeOf = (c: Comparison): bigint => (c._tag === 'Break' || c._tag === 'Unchecked' ? c.amountAtStake : 0n)
const detailOf = (c: Comparison): string => (c._tag === 'Break' ? c.detail : c._tag === 'Unchecked' ? `the gateway could not answer: ${c.reason}` : '')

/** The item's outcome through the break lifecycle, with the breaks it detects and resolves and its heal. */
export const itemRecordOf = (run: RunContext, c: Checked): ItemRecord => {
  const at = run.deps.now()
  const known = run.known.get(itemKeyOf(c.ref)) ?? []
  const step = lifecycleStep(c.comparison, known, {
    runId: run.runId,
    at,
    // Deterministic: a resumed run that sees the same break again gives it the same id.
    newBreakId: (cls) => eventIdOf(keyOf('reconciliation-break', run.merchantId, run.runId, c.ref.kind, c.ref.id, cls)),
  })
  const detectedClass = step.detect?.class ?? null
  return {
    checked: {
      kind: c.ref.kind,
      id: c.ref.id,
      day: c.day,
      outcome: step.outcome,
      breakClass: step.outcome === 'unchecked' ? 'query_failed' : (detectedClass ?? (step.outcome === 'acknowledged' ? (known.find((b) => b.breakId === step.breakId)?.class ?? null) : null)),
      breakId: step.breakId,
      amount: c.amount,
      atStake: stakeOf(c.comparison),
    },
    detect:
      step.detect === null
        ? null
        : {
            runId: run.runId,
            breakId: step.detect.breakId,
            class: step.detect.class,
            status: step.detect.status,
            item: c.ref,
            day: c.day,
            satangView: c.satangView,
            gatewayView: c.gatewayView,
            amountAtStake: stakeOf(c.comparison),
            detail: detailOf(c.comparison),
            firstSeenAt: step.detect.firstSeenAt,
            firstSeenRunId: step.detect.firstSeenRunId,
            detectedAt: at,
            evidence: c.evidence,
          },
    resolve: step.resolve.map((r) => ({ runId: run.runId, breakId: r.breakId, class: r.class, item: c.ref, resolution: r.resolution, resolvedAt: at, evidence: c.evidence })),
    healed:
      c.comparison._tag === 'Heal'
        ? { runId: run.runId, item: c.ref, day: c.day, from: c.healedFrom ?? null, to: c.comparison.to, amount: c.amount, healedAt: at, evidence: c.evidence }
        : null,
  }
}
