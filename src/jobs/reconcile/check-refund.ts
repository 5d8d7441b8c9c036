import * as E from 'fp-ts/lib/Either.js'
import { describeHandleError } from '../../application/command-handler.ts'
import type { ScopedRefund } from '../../application/ports/read-models.ts'
import { recordRefundDecision } from '../../application/refund-context.ts'
import { load, record, refundKind } from '../../application/streams.ts'
import type { MismatchField } from '../../domain/events/common/discrepancy-observed.ts'
import { notFoundObservationKey } from '../../domain/events/common/query-not-found.ts'
import type { RefundRecord } from '../../domain/gateway/refund-query.ts'
import type { RefundAnswer } from '../../domain/reconciliation/answer.ts'
import { compare } from '../../domain/reconciliation/compare.ts'
import { heal, unchecked, type Comparison } from '../../domain/reconciliation/comparison.ts'
import { settleHeal } from '../../domain/reconciliation/heal.ts'
import { refundItemOf, type RefundItem } from '../../domain/reconciliation/item.ts'
import type { ItemRecord } from '../../domain/reconciliation/run.ts'
import { refundGatewayView, refundSatangView } from '../../domain/reconciliation/views.ts'
import { refundObservationKey, type RefundCommand, type RefundEvent, type RefundOrderContext, type RefundState } from '../../domain/refund/index.ts'
import { askRefund, type Asked } from './ask-gateway.ts'
import { ItemStoreFailed, mismatchesRecordedFor } from './check-payment.ts'
import type { RunContext } from './context.ts'
import { itemRecordOf, refundRef } from './item-record.ts'

const itemOf = (r: ScopedRefund, s: RefundState): RefundItem | null => (s._tag === 'Refund' ? refundItemOf(r.stream, s, { known: r.orderKnown, currency: r.orderCurrency }) : null)

const settled = (s: RefundState): boolean => s._tag === 'Refund' && (s.recorded !== null || s.status?.classification.final === true)

const commandFor = (run: RunContext, asked: Asked<RefundAnswer, RefundRecord>, order: RefundOrderContext): RefundCommand | null => {
  const now = run.deps.now()
  if (asked.raw !== null) return { type: 'ObserveRefundByQuery', answer: asked.raw, traceId: asked.traceId, observedAt: now, statusTable: run.deps.statusTables.refund, order }
  const a = asked.answer
  return a._tag === 'NotFound' ? { type: 'ObserveRefundNotFound', code: a.code, message: a.message, traceId: a.traceId, observedAt: now } : null
}

/** Queries one refund, records the answer through the refund aggregate (unless a dry run), and classifies it. */
export const checkRefund = async (run: RunContext, r: ScopedRefund): Promise<ItemRecord> => {
  const asked = await askRefund(run.deps, r.merchantRefundId)
  const ref = refundRef(r.merchantRefundId, r.merchantOrderId, r.stream)
  const evidence = {
    traceId: asked.traceId,
    observationKey: asked.raw !== null ? refundObservationKey('query', asked.raw) : asked.answer._tag === 'NotFound' ? notFoundObservationKey('refund', run.merchantId, r.merchantRefundId, asked.answer.code) : null,
  }

  const loaded = await load(run.deps, refundKind, r.stream)()
  if (E.isLeft(loaded)) throw new ItemStoreFailed(`refund ${r.merchantRefundId}: ${describeHandleError(loaded.left, () => 'rejected')}`)
  const seen: { item: RefundItem | null; comparison: Comparison; recorded: ReadonlyArray<MismatchField> } = { item: null, comparison: unchecked('not classified', 0n), recorded: [] }
  const classify = (s: RefundState): void => {
    seen.item = itemOf(r, s)
    seen.recorded = s._tag === 'Refund' ? mismatchesRecordedFor(s.discrepancies, evidence.observationKey) : []
    seen.comparison = seen.item === null ? unchecked('the refund stream holds no refund', 0n) : compare({ kind: 'refund', item: seen.item, answer: asked.answer }, run.policy)
  }
  classify(loaded.right.state)

  let after: RefundState | undefined
  let appended: ReadonlyArray<RefundEvent> = []
  // A query answer is decided against the order's refundable ledger (application/refund-context.ts):
  // two refunds of one order are never both recorded against the same stale total.
  const provenance = { cause: { correlationId: run.runId, causationId: run.runId }, source: 'reconciliation', traceId: asked.traceId } as const
  const raw = asked.raw
  const notFound = commandFor(run, asked, { paidAmount: null, currency: r.orderCurrency, refundedByOthers: 0n })
  const handled = run.dryRun
    ? null
    : raw !== null
      ? await recordRefundDecision(
          run.deps,
          r.stream,
          raw.merchant_order_id,
          (order, l) => {
            classify(l.state)
            return { type: 'ObserveRefundByQuery', answer: raw, traceId: asked.traceId, observedAt: run.deps.now(), statusTable: run.deps.statusTables.refund, order }
          },
          provenance,
        )
      : notFound === null
        ? null
        : await record(run.deps, refundKind)(
            r.stream,
            (l) => {
              classify(l.state)
              return notFound
            },
            provenance,
          )()
  if (handled !== null) {
    if (E.isLeft(handled)) {
      if (handled.left._tag !== 'Rejected') throw new ItemStoreFailed(`refund ${r.merchantRefundId}: ${describeHandleError(handled.left, () => 'rejected')}`)
    } else {
      after = handled.right.state
      appended = handled.right.appended
    }
  }

  const item = seen.item
  let comparison = seen.comparison
  let healedFrom: string | null = null
  if (item !== null && comparison._tag === 'Heal') {
    healedFrom = item.status?.code ?? null
    if (!run.dryRun) {
      const mismatches = [...seen.recorded, ...appended.flatMap((e) => (e.type === 'DiscrepancyObserved' ? e.data.mismatches.map((m) => m.field) : []))]
      comparison = settleHeal(comparison, { mismatches, wasSettled: false, isSettled: after !== undefined && settled(after) })
    }
  } else if (item !== null && comparison._tag === 'Matched' && run.resumed && item.statusSource === 'query' && item.statusObservedAt !== null && item.statusObservedAt >= run.startedAt && item.status !== null) {
    comparison = heal(item.status.code, item.recorded?.amount ?? 0n)
  }
  return itemRecordOf(run, {
    ref,
    day: r.day,
    amount: item?.recorded?.amount ?? (asked.answer._tag === 'Found' ? (asked.answer.amount ?? 0n) : 0n),
    comparison,
    satangView: item === null ? { merchant_refund_id: r.merchantRefundId, refund: null } : refundSatangView(item),
    gatewayView: refundGatewayView(asked.answer),
    evidence,
    healedFrom,
  })
}
