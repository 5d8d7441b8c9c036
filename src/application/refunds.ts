import { freshProjection, servedFrom } from './read-models.ts'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { JsonObject } from './ports/event-store.ts'
import { MerchantOrderId, MerchantRefundId } from '../domain/gateway/fields.ts'
import { formatAmount } from '../domain/money.ts'
import { orderStreamName } from '../domain/order/index.ts'
import { needsReview, refundStreamName, type Refund } from '../domain/refund/index.ts'
import { decodeAll, decodeAt, type Violation } from '../domain/violations.ts'
import { nullable } from '../domain/events/codecs.ts'
import { TrackedBy } from '../domain/refund/events/refund-tracked.ts'
import { BahtText, DiscrepancyView, discrepancyView, IsoInstantText, StatusView, statusView } from '../domain/views.ts'
import type { Cause, RecordingDeps } from './deps.ts'
import { gatewayFailure } from './payments.ts'
import { recordRefundDecision } from './refund-context.ts'
import { conflict, invalid, notFound, notRecorded, ok, unreadable, type UseCaseResult } from './results.ts'
import { load, orderKind, record, refundKind } from './streams.ts'

const iso = (d: Date): string => d.toISOString()

/** A refund as the merchant API shows it (the JSON of `refundView`). */
export const RefundView = t.type(
  {
    merchant_id: t.string,
    merchant_refund_id: t.string,
    merchant_order_id: t.string,
    tracked_by: TrackedBy,
    tracked_at: IsoInstantText,
    refund_order_id: nullable(t.string),
    status: nullable(StatusView),
    recorded: nullable(t.type({ refund_amount: BahtText, refund_currency: t.string, recorded_at: IsoInstantText })),
    needs_review: t.boolean,
    unclassified_statuses: t.array(t.string),
    discrepancies: t.array(DiscrepancyView),
  },
  'RefundView',
)
export type RefundView = t.TypeOf<typeof RefundView>

/** A refund as the merchant API shows it, folded from its stream. */
export const refundView = (r: Refund): RefundView => ({
  merchant_id: r.merchantId,
  merchant_refund_id: r.merchantRefundId,
  merchant_order_id: r.merchantOrderId,
  tracked_by: r.trackedBy,
  tracked_at: iso(r.trackedAt),
  refund_order_id: r.refundOrderId,
  status: r.status === null ? null : statusView(r.status),
  recorded: r.recorded === null ? null : { refund_amount: formatAmount(r.recorded.amount), refund_currency: r.recorded.currency, recorded_at: iso(r.recorded.recordedAt) },
  needs_review: needsReview(r),
  unclassified_statuses: [...r.unclassifiedStatuses],
  discrepancies: r.discrepancies.map(discrepancyView),
})

/** `POST /v1/refunds`: the refund to track and its order (`merchant_id` may be sent only as satang's own). */
export const TrackRefundRequest = t.intersection([t.type({ merchant_refund_id: MerchantRefundId, merchant_order_id: MerchantOrderId }), t.partial({ merchant_id: t.unknown })])

export type Refunds = {
  readonly track: (input: unknown, cause: Cause) => Promise<UseCaseResult>
  readonly get: (merchantRefundId: string, refresh: boolean, cause: Cause) => Promise<UseCaseResult>
}

/**
 * Refunds: the gateway spec has no refund request, so a merchant registers a `merchant_refund_id` to
 * track for one of its orders; the refund enters the ledger by refund notification or refund query.
 */
export const makeRefunds = (deps: RecordingDeps): Refunds => {
  const recordRefund = record(deps, refundKind)

  const view = async (stream: string, status: 'created' | 'ok', extra: JsonObject = {}): Promise<UseCaseResult> => {
    const loaded = await load(deps, refundKind, stream)()
    if (E.isLeft(loaded)) return unreadable(loaded.left)
    const s = loaded.right.state
    return s._tag === 'Refund' ? ok({ ...refundView(s), ...extra }, status) : notFound('no such refund is tracked')
  }

  const track = async (input: unknown, cause: Cause): Promise<UseCaseResult> => {
    if (!t.UnknownRecord.is(input)) return invalid([{ path: '', rule: 'must be a JSON object' }])
    const own: Violation[] = []
    if (input['merchant_id'] !== undefined && input['merchant_id'] !== deps.merchantId) own.push({ path: 'merchant_id', rule: `must be ${deps.merchantId} (the merchant this satang serves) or absent` })
    const extra = Object.keys(input).filter((k) => !['merchant_refund_id', 'merchant_order_id', 'merchant_id'].includes(k))
    for (const k of extra) own.push({ path: k, rule: 'is not a field of a refund to track' })
    const decoded = decodeAll(TrackRefundRequest, input)
    if (E.isLeft(decoded) || own.length > 0) return invalid([...own, ...(E.isLeft(decoded) ? decoded.left : [])])
    const { merchant_refund_id: refundId, merchant_order_id: orderId } = decoded.right
    const order = await load(deps, orderKind, orderStreamName(deps.merchantId, orderId))()
    if (E.isLeft(order)) return unreadable(order.left)
    if (order.right.state._tag !== 'Order') return notFound(`no payment with merchant_order_id ${orderId}`)
    const stream = refundStreamName(deps.merchantId, refundId)
    const done = await recordRefund(stream, () => ({ type: 'TrackRefund', merchantId: deps.merchantId, merchantRefundId: refundId, merchantOrderId: orderId, trackedAt: deps.now() }), {
      cause,
    })()
    if (E.isLeft(done)) {
      const e = done.left
      if (e._tag === 'Rejected' && e.rejection._tag === 'RefundTrackedForAnotherOrder') return conflict(`merchant_refund_id ${refundId} is tracked for order ${e.rejection.merchantOrderId}`)
      return notRecorded(e, (r) => r._tag)
    }
    return view(stream, done.right.appended.length > 0 ? 'created' : 'ok')
  }

  const get = async (merchantRefundId: string, refresh: boolean, cause: Cause): Promise<UseCaseResult> => {
    const checked = decodeAt('merchant_refund_id', MerchantRefundId, merchantRefundId)
    if (E.isLeft(checked)) return invalid(checked.left)
    const stream = refundStreamName(deps.merchantId, merchantRefundId)
    if (!refresh) {
      const projected = await freshProjection(deps, stream, (q) => q.refund(stream))
      return projected === undefined ? view(stream, 'ok', servedFrom(undefined)) : ok({ ...refundView(projected.value), ...servedFrom(projected.position) }, 'ok')
    }
    const loaded = await load(deps, refundKind, stream)()
    if (E.isLeft(loaded)) return unreadable(loaded.left)
    if (loaded.right.state._tag !== 'Refund') return notFound('no such refund is tracked')
    const answer = await deps.gateway.queryRefund({ merchant_id: deps.merchantId, merchant_refund_id: merchantRefundId })()
    if (E.isLeft(answer)) {
      const e = answer.left
      // Not at the gateway (yet): the merchant may not have made the refund; nothing to record.
      if (e._tag === 'GatewayRejected' && deps.resolve.notFoundCodes.includes(e.code)) return view(stream, 'ok', { refresh: { found: false, code: e.code, trace_id: e.traceId } })
      return gatewayFailure(e)
    }
    const done = await recordRefundDecision(
      deps,
      stream,
      answer.right.data.merchant_order_id,
      (order) => ({ type: 'ObserveRefundByQuery', answer: answer.right.data, traceId: answer.right.traceId, observedAt: deps.now(), statusTable: deps.statusTables.refund, order }),
      { cause, source: 'query', traceId: answer.right.traceId },
    )
    if (E.isLeft(done)) return notRecorded(done.left, (r) => r._tag)
    return view(stream, 'ok', { refresh: { found: true } })
  }

  return { track, get }
}
