import * as E from 'fp-ts/lib/Either.js'
import { describeHandleError } from '../../application/command-handler.ts'
import type { ScopedPayment } from '../../application/ports/read-models.ts'
import { load, orderKind, record } from '../../application/streams.ts'
import type { DiscrepancyObservedData, MismatchField } from '../../domain/events/common/discrepancy-observed.ts'
import { notFoundObservationKey } from '../../domain/events/common/query-not-found.ts'
import { paymentObservationKey, type OrderCommand, type OrderEvent, type OrderState } from '../../domain/order/index.ts'
import type { PaymentAnswer } from '../../domain/reconciliation/answer.ts'
import { compare } from '../../domain/reconciliation/compare.ts'
import { heal, unchecked, type Comparison } from '../../domain/reconciliation/comparison.ts'
import { settleHeal } from '../../domain/reconciliation/heal.ts'
import { paymentItemOf, type PaymentItem } from '../../domain/reconciliation/item.ts'
import type { ItemRecord } from '../../domain/reconciliation/run.ts'
import { paymentGatewayView, paymentSatangView } from '../../domain/reconciliation/views.ts'
import type { PaymentQueryResponse } from '../../domain/gateway/payment-query.ts'
import { askPayment, type Asked } from './ask-gateway.ts'
import type { RunContext } from './context.ts'
import { itemRecordOf, paymentRef } from './item-record.ts'

/** The item failed in a way the run cannot record (the event store); the run stops and is resumed later. */
export class ItemStoreFailed extends Error {
  override readonly name = 'ItemStoreFailed'
}

const itemOf = (p: ScopedPayment, s: OrderState): PaymentItem | null => (s._tag === 'Order' ? paymentItemOf(p.stream, s, { total: p.refunded, ids: p.refundIds }) : null)

const evidenceOf = (run: RunContext, merchantOrderId: string, asked: Asked<PaymentAnswer, PaymentQueryResponse>) => ({
  traceId: asked.traceId,
  observationKey:
    asked.raw !== null
      ? paymentObservationKey('query', asked.raw)
      : asked.answer._tag === 'NotFound'
        ? notFoundObservationKey('payment', run.merchantId, merchantOrderId, asked.answer.code)
        : null,
})

/**
 * The command that records the gateway's answer through the order's own rules: the query's
 * observation (evidence, and the heal when it carries a final status satang missed), "not found" as
 * evidence, or, for a create whose outcome was unknown and that never reached the gateway, its failure.
 */
const commandFor = (run: RunContext, asked: Asked<PaymentAnswer, PaymentQueryResponse>, c: Comparison): OrderCommand | null => {
  const now = run.deps.now()
  if (asked.raw !== null) return { type: 'ObservePaymentByQuery', answer: asked.raw, traceId: asked.traceId, observedAt: now, statusTable: run.deps.statusTables.payment }
  const a = asked.answer
  if (a._tag !== 'NotFound') return null
  return c._tag === 'Heal'
    ? { type: 'RecordPaymentRequestFailed', failure: { reason: 'not_found_by_query', code: a.code, message: a.message, traceId: a.traceId }, failedAt: now }
    : { type: 'ObservePaymentNotFound', code: a.code, message: a.message, traceId: a.traceId, observedAt: now }
}

/**
 * The mismatches satang recorded earlier for this very answer (a DiscrepancyObserved of the same
 * observation key): the aggregate decided then, and the same answer again decides nothing new.
 */
export const mismatchesRecordedFor = (discrepancies: ReadonlyArray<DiscrepancyObservedData>, key: string | null): ReadonlyArray<MismatchField> =>
  key === null ? [] : discrepancies.filter((d) => d.observationKey === key).flatMap((d) => d.mismatches.map((m) => m.field))

const mismatchFields = (appended: ReadonlyArray<OrderEvent>) => appended.flatMap((e) => (e.type === 'DiscrepancyObserved' ? e.data.mismatches.map((m) => m.field) : []))

const settled = (to: string, s: OrderState): boolean => s._tag === 'Order' && (to === 'not_found' ? s.request.phase === 'failed' : s.status?.classification.final === true)

/** A status this very run recorded from a query before its process died (the run is resumed): it healed the item. */
const healedEarlier = (run: RunContext, item: PaymentItem): boolean =>
  run.resumed && item.status !== null && item.status.final && item.statusSource === 'query' && item.statusObservedAt !== null && item.statusObservedAt >= run.startedAt

/** Queries one order, records the answer through the order aggregate (unless a dry run), and classifies it. */
export const checkPayment = async (run: RunContext, p: ScopedPayment): Promise<ItemRecord> => {
  const asked = await askPayment(run.deps, p.merchantOrderId)
  const ref = paymentRef(p.merchantOrderId, p.stream)
  const evidence = evidenceOf(run, p.merchantOrderId, asked)
  const gatewayView = paymentGatewayView(asked.answer)

  const seen: { item?: PaymentItem | null; comparison?: Comparison; recorded?: ReadonlyArray<MismatchField> } = {}
  /** Classifies the order as the stream holds it now; the command that records the answer (null: nothing to record). */
  const classify = (s: OrderState): OrderCommand | null => {
    const item = itemOf(p, s)
    seen.item = item
    seen.recorded = s._tag === 'Order' ? mismatchesRecordedFor(s.discrepancies, evidence.observationKey) : []
    seen.comparison = item === null ? unchecked('the order stream holds no order', 0n) : compare({ kind: 'payment', item, answer: asked.answer }, run.policy)
    return commandFor(run, asked, seen.comparison)
  }

  let after: OrderState | undefined
  let appended: ReadonlyArray<OrderEvent> = []
  const recording = run.dryRun ? null : commandFor(run, asked, unchecked('', 0n))
  if (recording === null) {
    // Nothing will be recorded (a dry run, or no answer): the stream is only read.
    const loaded = await load(run.deps, orderKind, p.stream)()
    if (E.isLeft(loaded)) throw new ItemStoreFailed(`order ${p.merchantOrderId}: ${describeHandleError(loaded.left, () => 'rejected')}`)
    classify(loaded.right.state)
  } else {
    // Read, classify and record in one command: the order's own rules decide on the stream as it is.
    const handled = await record(run.recording, orderKind)(p.stream, (l) => classify(l.state) ?? recording, {
      cause: { correlationId: run.runId, causationId: run.runId },
      source: 'reconciliation',
      traceId: asked.traceId,
    })()
    if (E.isLeft(handled)) {
      const e = handled.left
      // A create's failure decided meanwhile (another resolution got there first) is no failure of the run.
      if (e._tag !== 'Rejected') throw new ItemStoreFailed(`order ${p.merchantOrderId}: ${describeHandleError(e, () => 'rejected')}`)
    } else {
      after = handled.right.state
      appended = handled.right.appended
    }
  }

  const item = seen.item ?? null
  let comparison = seen.comparison ?? unchecked('not classified', 0n)
  let healedFrom: string | null = null
  if (item !== null && comparison._tag === 'Heal') {
    healedFrom = item.status?.code ?? item.phase
    if (!run.dryRun) comparison = settleHeal(comparison, { mismatches: [...(seen.recorded ?? []), ...mismatchFields(appended)], wasSettled: false, isSettled: after !== undefined && settled(comparison.to, after) })
  } else if (item !== null && comparison._tag === 'Matched' && healedEarlier(run, item) && item.status !== null) {
    comparison = heal(item.status.code, item.amount)
  }
  return itemRecordOf(run, {
    ref,
    day: p.day,
    amount: item?.amount ?? 0n,
    comparison,
    satangView: item === null ? { merchant_order_id: p.merchantOrderId, order: null } : paymentSatangView(item),
    gatewayView,
    evidence,
    healedFrom,
  })
}
