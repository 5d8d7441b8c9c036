import { quarantineCallback, withDayTotals } from '../../../src/domain/events/common/callback-quarantined.ts'
import { signInLockedOut } from '../../../src/domain/events/common/console-sign-in-locked-out.ts'
import { signedIn, signInFailed, userAdded, userDisabled, userPasswordReset } from '../../../src/domain/console-users/events/index.ts'
import type { DomainEvent } from '../../../src/domain/events/registry.ts'
import { refundAmountReserved, refundLedgersOpened } from '../../../src/domain/refund/index.ts'
import type { OrderEvent } from '../../../src/domain/order/index.ts'
import { decideAcknowledge, initialBreakState } from '../../../src/domain/reconciliation/index.ts'
import { decideClose, evolvePeriods, initialPeriodsState } from '../../../src/domain/ledger/period.ts'
import { runEventsOf } from '../reconciliation/run-events.ts'
import type { RefundEvent } from '../../../src/domain/refund/index.ts'
import type { SubscriptionEvent } from '../../../src/domain/subscription/index.ts'
import * as order from '../order/builders.ts'
import * as refund from '../refund/builders.ts'
import * as sub from '../subscription/builders.ts'
import { at, MERCHANT_ID, sat } from '../support/values.ts'

/** Events of every type, decided by the aggregates from realistic commands (payer data included). */
export const orderEvents = (): ReadonlyArray<OrderEvent> => {
  const accepted = order.anAcceptedCheckout()
  const unknown = order.given(order.anOrderCreated(), order.aPaymentRequested()).when({ type: 'RecordPaymentOutcomeUnknown', reason: 'timeout', httpStatus: 504, traceId: 't', since: at(1) }).events()
  const failed = order.given(order.anOrderCreated(), order.aPaymentRequested()).when({ type: 'RecordPaymentRequestFailed', failure: { reason: 'validation', violations: [{ path: 'customer', rule: 'is required' }] }, failedAt: at(1) }).events()
  return [
    ...accepted,
    ...unknown,
    ...failed,
    ...order.given(...accepted).when(order.redirected(order.aRedirectForm({ order_amount: '1.00' }))).events(),
    ...order.given(...accepted).when(order.notified(order.aPaymentNotification())).events(),
    ...order.given(...accepted).when(order.notified(order.aPaymentNotification(), { verified: false })).events(),
    ...order.given(...accepted).when(order.queried(order.aQueryAnswer({ order_status: 'ZZ' }))).events(),
    ...order.given(...accepted).when({ type: 'ObservePaymentNotFound', code: 404001, message: 'not found', traceId: 't-nf', observedAt: at(7) }).events(),
  ]
}

export const refundEvents = (): ReadonlyArray<RefundEvent> => [
  refund.aRefundTracked(),
  ...refund.given(refund.aRefundTracked()).when(refund.refundNotified(refund.aRefundNotification())).events(),
  ...refund.given(refund.aRefundTracked()).when(refund.refundQueried(refund.aRefundRecord({ refund_amount: '999.00' }))).events(),
  ...refund.given(refund.aRefundTracked()).when({ type: 'ObserveRefundNotFound', code: 404001, message: 'not found', traceId: 't-nf', observedAt: at(8) }).events(),
]

export const subscriptionEvents = (): ReadonlyArray<SubscriptionEvent> => {
  const active = sub.anActiveSubscription()
  const failed = (date: string) => sub.subscriptionNotified(sub.aSubscriptionNotification({ status: 'FAIL', billing_date: date }))
  const suspended = sub.run(active, failed('2026-01-15'), failed('2026-01-16'), failed('2026-01-17'))
  const updating = sub.given(...active).when({ type: 'RequestSubscriptionUpdate', request: sub.anUpdateRequest(), requestedAt: at(100) }).events()
  const updated = sub
    .given(...active, ...updating)
    .when({
      type: 'RecordSubscriptionUpdated',
      response: { merchant_id: MERCHANT_ID, merchant_subscribe_id: sub.SUBSCRIBE_ID, recurring_bill_id: sub.BILL_ID, recurring_bill_status: 'ACTIVE', link_url: 'https://g.example/s' },
      traceId: 't-u',
      receivedAt: at(101),
    })
    .events()
  const cancelling = sub.given(...active).when({ type: 'RequestSubscriptionCancel', request: { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: sub.SUBSCRIBE_ID }, requestedAt: at(200) }).events()
  const cancelled = sub.given(...active, ...cancelling).when({ type: 'RecordSubscriptionCancelled', traceId: null, receivedAt: at(201) }).events()
  const unknown = sub.given(...active, ...cancelling).when({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'http_5xx', httpStatus: 502, traceId: null, since: at(201) }).events()
  const failedRequest = sub.given(...active, ...cancelling).when({ type: 'RecordSubscriptionRequestFailed', failure: { reason: 'not_sent', detail: 'ECONNREFUSED' }, failedAt: at(201) }).events()
  return [
    ...suspended,
    ...sub.given(...active).when(sub.subscriptionNotified(sub.aSubscriptionNotification({ billing_date: '2026-01-15' }))).events(),
    ...sub.given(...active).when(sub.subscriptionRedirected(sub.aSubscriptionRedirect())).events(),
    ...updating,
    ...updated,
    ...cancelling,
    ...cancelled,
    ...unknown,
    ...failedRequest,
  ]
}

/** A run that finds a break, heals an item and resolves an older break; another run superseded; an acknowledgement. */
export const reconciliationEvents = (): ReadonlyArray<DomainEvent> => {
  const item = { kind: 'payment', id: 'ORD-9', merchantOrderId: 'ORD-9', merchantRefundId: null, merchantSubscribeId: null, stream: `order-${MERCHANT_ID}-ORD-9` } as const
  const started = {
    merchantId: MERCHANT_ID,
    scope: { kind: 'days', from: '2026-01-01', to: '2026-01-01' },
    parameters: { concurrency: 16, asOf: at(0), notFoundGraceMs: 3_600_000, stalePendingMs: 86_400_000, chargeGraceMs: 86_400_000 },
    startedBy: { trigger: 'cli', actor: 'ops' },
    itemsInScope: 2,
    startedAt: at(0),
  } as const
  const evidence = { traceId: 't-q', observationKey: 'query:ORD-9' }
  const run = runEventsOf([
    { type: 'StartRun', started: { ...started, runId: 'run-1' } },
    {
      type: 'RecordItems',
      at: at(1),
      items: [
        {
          checked: { kind: 'payment', id: 'ORD-9', day: '2026-01-01', outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b-1', amount: 10000n, atStake: 2000n },
          detect: { runId: 'run-1', breakId: 'b-1', class: 'amount_mismatch', status: 'new', item, day: '2026-01-01', satangView: { amount_satang: '10000' }, gatewayView: { amount_satang: '12000' }, amountAtStake: 2000n, detail: 'x', firstSeenAt: at(1), firstSeenRunId: 'run-1', detectedAt: at(1), evidence },
          resolve: [{ runId: 'run-1', breakId: 'b-0', class: 'stale_pending', item, resolution: 'reclassified', resolvedAt: at(1), evidence }],
          healed: null,
        },
        {
          checked: { kind: 'payment', id: 'ORD-8', day: '2026-01-01', outcome: 'healed', breakClass: null, breakId: null, amount: 5000n, atStake: 0n },
          detect: null,
          resolve: [],
          healed: { runId: 'run-1', item: { ...item, id: 'ORD-8', merchantOrderId: 'ORD-8' }, day: '2026-01-01', from: 'PI', to: 'PS', amount: 5000n, healedAt: at(1), evidence },
        },
      ],
    },
    { type: 'CompleteRun', days: ['2026-01-01'], at: at(2) },
  ])
  const superseded = runEventsOf([
    { type: 'StartRun', started: { ...started, runId: 'run-0' } },
    { type: 'SupersedeRun', by: 'run-1', reason: 'a run of another scope', at: at(0) },
  ])
  const ack = decideAcknowledge({ type: 'AcknowledgeBreak', breakId: 'b-1', current: { class: 'amount_mismatch', status: 'new' }, actor: 'ops', reason: 'bank fee', at: at(3) }, initialBreakState)
  if (ack._tag === 'Left') throw new Error('ack refused')
  return [...run, ...superseded, ...ack.right]
}

/** A forged notification (payer data included, to be redacted) quarantined; an order's refundable ledger and the upgrade marker. */
export const trustEvents = (): ReadonlyArray<DomainEvent> => [
  withDayTotals(
    quarantineCallback({
      callback: 'payment_notification',
      reason: 'bad_signature',
      detail: 'signature does not match the gateway key',
      violations: [],
      fingerprint: 'a'.repeat(64),
      signatureVerified: false,
      receivedAt: at(9),
      fields: { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: order.ORDER_ID, order_status: 'PS', order_amount: '1.00', customer: { full_name: 'Somchai Jaidee', phone: '0812345678' }, sign: 'AAAA' },
      body: { sha256: 'b'.repeat(64), bytes: 236, text: '' },
      headBytes: 2048,
    }),
    [{ callback: 'payment_notification', events: 1, bytes: 812 }],
  ),
  refundAmountReserved.make({ merchantId: MERCHANT_ID, merchantOrderId: order.ORDER_ID, merchantRefundId: 'RF-1', amount: sat(2500n), currency: 'THB', basis: 'decided', source: 'notification', reservedAt: at(10) }),
  refundLedgersOpened.make({ merchantId: MERCHANT_ID, refundsCarried: 3, ordersCarried: 2, openedAt: at(11) }),
]

/** Finance closes the books through 1 January 2026, then through 3 January. */
export const ledgerEvents = (): ReadonlyArray<DomainEvent> => {
  const first = decideClose({ type: 'ClosePeriod', merchantId: MERCHANT_ID, date: '2026-01-01', ruleVersion: 1, closedBy: 'finance@shop.example', reason: 'month-end review', at: at(24 * 60) }, initialPeriodsState)
  if (first._tag === 'Left') throw new Error('close refused')
  const state = first.right.reduce(evolvePeriods, initialPeriodsState)
  const second = decideClose({ type: 'ClosePeriod', merchantId: MERCHANT_ID, date: '2026-01-03', ruleVersion: 1, closedBy: 'finance@shop.example', reason: null, at: at(4 * 24 * 60) }, state)
  if (second._tag === 'Left') throw new Error('close refused')
  return [...first.right, ...second.right]
}

/** Console sign-ins from one address locked out for a minute after six wrong tokens. */
export const consoleEvents = (): ReadonlyArray<DomainEvent> => [
  signInLockedOut({ address: '198.51.100.23', failures: 6, windowSeconds: 60, lockedAt: at(12), lockedUntil: at(13) }),
  signInLockedOut({ address: '198.51.100.24', user: 'somchai', lockedBy: 'account', failures: 5, windowSeconds: 900, lockedAt: at(14), lockedUntil: at(15) }),
  userAdded('somchai', 'finance', 'cli:root', at(10)),
  userDisabled('somchai', 'cli:root', at(16)),
  userPasswordReset('somchai', 'cli:root', at(17)),
  signedIn({ user: 'somchai', method: 'password', roles: ['finance'], scopes: ['read', 'reconcile:write'], address: '198.51.100.24', at: at(11) }),
  signInFailed({ user: 'somchai', method: 'password', reason: 'wrong_password', address: '198.51.100.24', failures: 2, delayMs: 500, at: at(13) }),
]

export const allEvents = (): ReadonlyArray<DomainEvent> => [...orderEvents(), ...refundEvents(), ...subscriptionEvents(), ...reconciliationEvents(), ...trustEvents(), ...ledgerEvents(), ...consoleEvents()]

