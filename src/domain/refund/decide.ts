import * as E from 'fp-ts/lib/Either.js'
import { badSignature } from '../events/common/callback-rejected.ts'
import { discrepancyObserved, mismatchesOf, type Mismatch } from '../events/common/discrepancy-observed.ts'
import { notificationReceived } from '../events/common/notification-received.ts'
import { notFoundObservationKey, queryNotFound } from '../events/common/query-not-found.ts'
import type { ObservationSource } from '../events/codecs.ts'
import { gatewayInstantOf, satangOf } from '../events/gateway-values.ts'
import { redactPayerData } from '../events/redaction.ts'
import { classifyRefundStatus, type StatusTable } from '../gateway/statuses.ts'
import type { RefundRecord } from '../gateway/refund-query.ts'
import type { ObserveRefundByQuery, ObserveRefundNotFound, ReceiveRefundNotification, RefundCommand, RefundOrderContext, TrackRefund } from './commands.ts'
import { evolve } from './evolve.ts'
import type { RefundEvent } from './events/index.ts'
import { refundRecorded } from './events/refund-recorded.ts'
import { refundStatusObserved } from './events/refund-status-observed.ts'
import { refundTracked } from './events/refund-tracked.ts'
import type { RefundRejection } from './rejections.ts'
import type { Refund, RefundState } from './state.ts'
import { refundObservationKey } from './stream.ts'

type Decision = E.Either<RefundRejection, ReadonlyArray<RefundEvent>>

const events = (...es: ReadonlyArray<RefundEvent>): Decision => E.right(es)
const nothing: Decision = E.right([])

const trackRefund = (c: TrackRefund, s: RefundState): Decision => {
  if (s._tag === 'NoRefund') {
    return events(refundTracked.make({ merchantId: c.merchantId, merchantRefundId: c.merchantRefundId, merchantOrderId: c.merchantOrderId, trackedBy: 'merchant', trackedAt: c.trackedAt }))
  }
  // Tracking again for the same order changes nothing (the merchant API may retry).
  return s.merchantOrderId === c.merchantOrderId ? nothing : E.left({ _tag: 'RefundTrackedForAnotherOrder', merchantOrderId: s.merchantOrderId })
}

type Observation = {
  readonly source: ObservationSource
  readonly record: RefundRecord
  readonly traceId: string | null
  readonly observedAt: Date
  readonly statusTable: StatusTable
  readonly order: RefundOrderContext
  readonly evidence: ReadonlyArray<RefundEvent>
}

const disagreements = (s: Refund, r: RefundRecord, order: RefundOrderContext): Array<Mismatch> =>
  mismatchesOf([
    ['merchant_id', s.merchantId, r.merchant_id],
    ['merchant_order_id', s.merchantOrderId, r.merchant_order_id],
    ['refund_order_id', s.refundOrderId, r.refund_order_id],
    ['currency', order.currency, r.refund_currency],
    ['amount', s.recorded === null ? null : s.recorded.amount.toString(), satangOf(r.refund_amount)?.toString() ?? null],
  ])

const observeTracked = (o: Observation, s: Refund): Decision => {
  const r = o.record
  const key = refundObservationKey(o.source, r)
  if (s.observationKeys.has(key)) return nothing
  const discrepancy = (mismatches: ReadonlyArray<Mismatch>): Decision =>
    events(
      ...o.evidence,
      discrepancyObserved.make({ source: o.source, observationKey: key, observedAt: o.observedAt, statusCode: r.refund_status, mismatches: [...mismatches] }),
    )
  const mismatches = disagreements(s, r, o.order)
  if (mismatches.length > 0) return discrepancy(mismatches)
  const amount = satangOf(r.refund_amount)
  if (amount === null) return E.left({ _tag: 'MalformedGatewayMessage', violations: [{ path: 'refund_amount', rule: 'must be an amount' }] })
  const classification = classifyRefundStatus(o.statusTable, r.refund_status)
  if (s.status !== null && s.status.classification.final && !classification.needsReview) {
    // Late and stale: a notification is still kept (every callback becomes an event); a query answer leaves nothing.
    if (!classification.final) return events(...o.evidence)
    if (classification.code !== s.status.code) return discrepancy([{ field: 'final_status', expected: s.status.code, observed: classification.code }])
  }
  const succeeded = classification.final && classification.outcome === 'succeeded' && s.recorded === null
  if (succeeded) {
    const refundable = (o.order.paidAmount ?? 0n) - o.order.refundedByOthers
    if (amount > refundable) return discrepancy([{ field: 'refundable_amount', expected: (refundable < 0n ? 0n : refundable).toString(), observed: amount.toString() }])
  }
  const completeTime = gatewayInstantOf(r.complete_time)
  const observed = refundStatusObserved.make({
    merchantId: r.merchant_id,
    merchantRefundId: r.merchant_refund_id,
    merchantOrderId: r.merchant_order_id,
    gatewayOrderId: r.order_id,
    refundOrderId: r.refund_order_id,
    statusCode: r.refund_status,
    classification,
    amount,
    currency: r.refund_currency,
    completeTime,
    source: o.source,
    observedAt: o.observedAt,
    observationKey: key,
    traceId: o.traceId,
  })
  if (!succeeded) return events(...o.evidence, observed)
  return events(
    ...o.evidence,
    observed,
    refundRecorded.make({
      merchantId: r.merchant_id,
      merchantRefundId: r.merchant_refund_id,
      merchantOrderId: r.merchant_order_id,
      refundOrderId: r.refund_order_id,
      amount,
      currency: r.refund_currency,
      completeTime,
      source: o.source,
      observedAt: o.observedAt,
      observationKey: key,
    }),
  )
}

/**
 * An authoritative refund observation. A refund nobody tracked is tracked from it (the gateway is the
 * authority on which refunds exist). Duplicates are dropped, disagreements (another order, another
 * currency, an amount above what is still refundable) are discrepancies and are not applied, and a
 * final status never regresses. The first final, succeeded observation records the refund.
 */
const observe = (o: Observation, s: RefundState): Decision => {
  const r = o.record
  const tracked: ReadonlyArray<RefundEvent> =
    s._tag === 'Refund'
      ? []
      : [refundTracked.make({ merchantId: r.merchant_id, merchantRefundId: r.merchant_refund_id, merchantOrderId: r.merchant_order_id, trackedBy: o.source, trackedAt: o.observedAt })]
  const state = tracked.reduce(evolve, s)
  // Stryker disable next-line ConditionalExpression,StringLiteral: narrows the type only; RefundTracked was just applied, so the state is a Refund
  if (state._tag === 'NoRefund') return nothing
  return E.map((decided: ReadonlyArray<RefundEvent>) => [...tracked, ...decided])(observeTracked(o, state))
}

const observeByQuery = (c: ObserveRefundByQuery, s: RefundState): Decision =>
  observe({ source: 'query', record: c.answer, traceId: c.traceId, observedAt: c.observedAt, statusTable: c.statusTable, order: c.order, evidence: [] }, s)

const receiveNotification = (c: ReceiveRefundNotification, s: RefundState): Decision =>
  observe(
    {
      source: 'notification',
      record: c.notification,
      traceId: null,
      observedAt: c.receivedAt,
      statusTable: c.statusTable,
      order: c.order,
      evidence: [
        notificationReceived.make({
          kind: 'REFUND',
          observationKey: refundObservationKey('notification', c.notification),
          receivedAt: c.receivedAt,
          payload: redactPayerData(c.notification),
        }),
      ],
    },
    s,
  )

/** A "not found" answer about a tracked refund is kept once as evidence; about an untracked one, nothing. */
const observeNotFound = (c: ObserveRefundNotFound, s: RefundState): Decision => {
  if (s._tag !== 'Refund') return nothing
  const key = notFoundObservationKey('refund', s.merchantId, s.merchantRefundId, c.code)
  if (s.observationKeys.has(key)) return nothing
  return events(queryNotFound.make({ kind: 'refund', code: c.code, message: c.message, traceId: c.traceId, observationKey: key, observedAt: c.observedAt }))
}

/** What a command means for a refund: the events to append, or why it is refused. Pure. */
export const decide = (c: RefundCommand, s: RefundState): Decision => {
  switch (c.type) {
    case 'TrackRefund':
      return trackRefund(c, s)
    case 'ObserveRefundByQuery':
      return observeByQuery(c, s)
    case 'ObserveRefundNotFound':
      return observeNotFound(c, s)
    case 'ReceiveRefundNotification':
      if (!c.signature.verified) return events(badSignature('refund_notification', c.signature, c.callbackId, c.receivedAt, c.notification))
      return receiveNotification(c, s)
  }
}
