import type { DomainEvent } from '../../src/domain/events/registry.ts'
import { redactPayerData } from '../../src/domain/events/redaction.ts'
import { classifyRefundStatus, DEFAULT_REFUND_STATUS_TABLE } from '../../src/domain/gateway/statuses.ts'
import { fold, isPaid, type OrderEvent } from '../../src/domain/order/index.ts'
import { refundRecorded, refundStatusObserved, refundStreamName, refundTracked } from '../../src/domain/refund/index.ts'
import {
  subscriptionActivated,
  subscriptionChargeFailed,
  subscriptionCharged,
  subscriptionCreated,
  subscriptionRequested,
  subscriptionStreamName,
} from '../../src/domain/subscription/index.ts'
import { decideAcknowledge, initialBreakState, breakStreamName, runStreamName, type RunCommand } from '../../src/domain/reconciliation/index.ts'
import { runEventsOf } from '../domain/reconciliation/run-events.ts'
import { at, MERCHANT_ID, sat } from '../domain/support/values.ts'

type Item = { readonly stream: string; readonly event: DomainEvent }

/**
 * Refund and subscription streams to go with generated orders, so that every projection has work:
 * a refund of part of every third paid order, and a handful of monthly subscriptions with charges
 * (one failing now and then). Each stream's events are in order; callers interleave the streams.
 */
export const otherStreamsForProjections = (
  orders: ReadonlyArray<{ readonly stream: string; readonly events: ReadonlyArray<OrderEvent> }>,
  opts: { readonly subscriptions?: number; readonly refundEvery?: number; readonly subscriptionPrefix?: string; readonly reconciliationRuns?: number } = {},
): Item[][] => {
  const out: Item[][] = []
  let paidSeen = 0
  for (const o of orders) {
    const s = fold(o.events)
    if (s._tag !== 'Order' || !isPaid(s)) continue
    paidSeen += 1
    if (paidSeen % (opts.refundEvery ?? 3) !== 0) continue
    const merchantRefundId = `RF-${s.order.merchantOrderId}`
    const stream = refundStreamName(MERCHANT_ID, merchantRefundId)
    const amount = sat(s.order.amount / 2n)
    const refundOrderId = `R${s.gatewayOrderId ?? '0'}`
    const key = `notification:${merchantRefundId}:RS`
    out.push([
      { stream, event: refundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId, merchantOrderId: s.order.merchantOrderId, trackedBy: 'merchant', trackedAt: at(30) }) },
      {
        stream,
        event: refundStatusObserved.make({
          merchantId: MERCHANT_ID,
          merchantRefundId,
          merchantOrderId: s.order.merchantOrderId,
          gatewayOrderId: s.gatewayOrderId ?? '0',
          refundOrderId,
          statusCode: 'RS',
          classification: classifyRefundStatus(DEFAULT_REFUND_STATUS_TABLE, 'RS'),
          amount,
          currency: 'THB',
          completeTime: at(40),
          source: 'notification',
          observedAt: at(41),
          observationKey: key,
          traceId: null,
        }),
      },
      {
        stream,
        event: refundRecorded.make({
          merchantId: MERCHANT_ID,
          merchantRefundId,
          merchantOrderId: s.order.merchantOrderId,
          refundOrderId,
          amount,
          currency: 'THB',
          completeTime: at(40),
          source: 'notification',
          observedAt: at(41),
          observationKey: key,
        }),
      },
    ])
  }
  for (let i = 1; i <= (opts.subscriptions ?? 8); i++) {
    const merchantSubscribeId = `SUB-${opts.subscriptionPrefix ?? ''}${String(i)}`
    const stream = subscriptionStreamName(MERCHANT_ID, merchantSubscribeId)
    const recurringBillId = `RB${String(1000 + i)}`
    const plan = {
      planName: 'Monthly beans',
      planDesc: null,
      intervalType: 'MONTHLY' as const,
      interval: 1,
      totalTerms: 12,
      billingAmount: sat(29_900n + BigInt(i)),
      currency: 'THB',
      retry: 'Y' as const,
      startDate: '2026-01-31',
      startDateRequested: '2026-01-31',
    }
    const events: Item[] = [
      { stream, event: subscriptionRequested.make({ requestSeq: 1, operation: 'create', merchantId: MERCHANT_ID, merchantSubscribeId, plan, merchantUrls: { notifyUrl: null, redirectUrl: null }, request: redactPayerData({ merchant_subscribe_id: merchantSubscribeId }), requestedAt: at(0) }) },
      { stream, event: subscriptionCreated.make({ requestSeq: 1, recurringBillId, gatewayStatus: 'CREATED', linkUrl: null, createTime: at(1), traceId: null, resolvedBy: 'api_response', response: null, receivedAt: at(1) }) },
      { stream, event: subscriptionActivated.make({ recurringBillId, observationKey: `act-${String(i)}`, notificationType: 'Created', activatedAt: at(2) }) },
    ]
    const dates = ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30']
    dates.slice(0, 1 + (i % 4)).forEach((date, k) => {
      const observationKey = `charge-${String(i)}-${date}`
      events.push(
        (i + k) % 5 === 4
          ? { stream, event: subscriptionChargeFailed.make({ recurringBillId, observationKey, notificationType: 'Deducted', billingDate: date, observedAt: at(60 * 24 * k + 3) }) }
          : { stream, event: subscriptionCharged.make({ recurringBillId, observationKey, notificationType: 'Deducted', billingDate: date, amount: plan.billingAmount, currency: 'THB', amountReported: true, observedAt: at(60 * 24 * k + 3) }) },
      )
    })
    out.push(events)
  }
  for (let i = 1; i <= (opts.reconciliationRuns ?? 1); i++) out.push(...reconciliationStreams(`${opts.subscriptionPrefix ?? ''}${String(i)}`, orders.slice(0, 3)))
  return out
}

/** A reconciliation run over a few orders (one matched, one healed, one break), completed, and the break acknowledged. */
const reconciliationStreams = (label: string, orders: ReadonlyArray<{ readonly stream: string; readonly events: ReadonlyArray<OrderEvent> }>): Item[][] => {
  const runId = `00000000-0000-4000-8000-${label.replace(/[^0-9]/g, '').padStart(12, '0').slice(-12)}`
  const stream = runStreamName(MERCHANT_ID, runId)
  const items = orders.flatMap((o) => {
    const s = fold(o.events)
    return s._tag === 'Order' ? [{ id: s.order.merchantOrderId, stream: o.stream, amount: s.order.amount }] : []
  })
  const ref = (id: string, itemStream: string) => ({ kind: 'payment', id, merchantOrderId: id, merchantRefundId: null, merchantSubscribeId: null, stream: itemStream }) as const
  const evidence = { traceId: null, observationKey: null }
  const breakId = `b-${runId}`
  const commands: RunCommand[] = [
    {
      type: 'StartRun',
      started: {
        runId,
        merchantId: MERCHANT_ID,
        scope: { kind: 'days', from: '2026-01-01', to: '2026-01-01' },
        parameters: { concurrency: 16, asOf: at(100), notFoundGraceMs: 3_600_000, stalePendingMs: 86_400_000, chargeGraceMs: 86_400_000 },
        startedBy: { trigger: 'scheduler', actor: null },
        itemsInScope: items.length,
        startedAt: at(100),
      },
    },
    {
      type: 'RecordItems',
      at: at(101),
      items: items.map((item, k) => ({
        checked: { kind: 'payment', id: item.id, day: '2026-01-01', outcome: k === 1 ? 'healed' : k === 2 ? 'break' : 'matched', breakClass: k === 2 ? 'amount_mismatch' : null, breakId: k === 2 ? breakId : null, amount: item.amount, atStake: k === 2 ? 100n : 0n },
        detect:
          k === 2
            ? { runId, breakId, class: 'amount_mismatch', status: 'new', item: ref(item.id, item.stream), day: '2026-01-01', satangView: {}, gatewayView: {}, amountAtStake: 100n, detail: 'x', firstSeenAt: at(101), firstSeenRunId: runId, detectedAt: at(101), evidence }
            : null,
        resolve: [],
        healed: k === 1 ? { runId, item: ref(item.id, item.stream), day: '2026-01-01', from: 'PI', to: 'PS', amount: item.amount, healedAt: at(101), evidence } : null,
      })),
    },
    { type: 'CompleteRun', days: ['2026-01-01'], at: at(102) },
  ]
  const run = runEventsOf(commands)
  const ack = decideAcknowledge({ type: 'AcknowledgeBreak', breakId, current: { class: 'amount_mismatch', status: 'new' }, actor: 'ops', reason: 'agreed', at: at(103) }, initialBreakState)
  if (ack._tag === 'Left') throw new Error('ack refused')
  return [run.map((event) => ({ stream, event })), ack.right.map((event) => ({ stream: breakStreamName(MERCHANT_ID, breakId), event }))]
}
