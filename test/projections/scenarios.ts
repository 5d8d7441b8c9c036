import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { eventSourceOf, toEventToAppend, type DomainEvent } from '../../src/domain/events/registry.ts'
import { redactPayerData } from '../../src/domain/events/redaction.ts'
import { classifyPaymentStatus, DEFAULT_PAYMENT_STATUS_TABLE, extendStatusTable } from '../../src/domain/gateway/statuses.ts'
import { decide, fold, orderStreamName, paymentRequestAccepted, type OrderCommand, type OrderEvent } from '../../src/domain/order/index.ts'
import { aCheckoutAnswer, anOrderCreated, aPaymentNotification, aPaymentRequested, aQueryAnswer, aRedirectForm, notified, queried, redirected } from '../domain/order/builders.ts'
import { at, MERCHANT_ID, sat } from '../domain/support/values.ts'

const extended = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { PF: { meaning: 'failed', outcome: 'failed' } })
export const STATUS_TABLE = E.isRight(extended) ? extended.right : DEFAULT_PAYMENT_STATUS_TABLE

/** One observation of an order, as the gateway (or a forger) might deliver it. */
export type Observation = { readonly via: 'notification' | 'query' | 'redirect' | 'forged'; readonly status: string; readonly amountOk: boolean; readonly minute: number }

export const observationArb: fc.Arbitrary<Observation> = fc.record({
  via: fc.constantFrom('notification', 'query', 'redirect', 'forged'),
  // PF: failed; ZZ: a code no table knows (kept, non-final, flagged for review)
  status: fc.constantFrom('WP', 'PI', 'PS', 'PS', 'PF', 'ZZ'),
  amountOk: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
  minute: fc.integer({ min: 2, max: 600 }),
})

export type OrderPlan = { readonly amount: bigint; readonly service: string; readonly observations: ReadonlyArray<Observation> }

export const orderPlanArb: fc.Arbitrary<OrderPlan> = fc.record({
  amount: fc.bigInt({ min: 100n, max: 5_000_000n }),
  service: fc.constantFrom('svc.checkout.apply', 'qr_promptpay', 'credit_card'),
  observations: fc.array(observationArb, { maxLength: 6 }),
})

const gatewayIdOf = (i: number): string => `2026010100${String(i).padStart(8, '0')}`

/** The events of one order decided by the domain from the plan's observations (duplicates and stale ones decide nothing). */
export const orderEventsOf = (index: number, plan: OrderPlan): { readonly stream: string; readonly events: ReadonlyArray<OrderEvent> } => {
  const merchantOrderId = `ORD-${String(index)}`
  const gatewayOrderId = gatewayIdOf(index)
  const amountText = (plan.amount / 100n).toString() + '.' + (plan.amount % 100n).toString().padStart(2, '0')
  const events: OrderEvent[] = [
    anOrderCreated({ merchantOrderId, amount: sat(plan.amount), service: plan.service }),
    aPaymentRequested(),
    paymentRequestAccepted.make({
      gatewayOrderId,
      statusCode: 'PI',
      classification: classifyPaymentStatus(STATUS_TABLE, 'PI'),
      amount: sat(plan.amount),
      currency: 'THB',
      createTime: at(1),
      linkUrl: `https://gateway.example/checkout/${gatewayOrderId}`,
      traceId: `trace-${String(index)}`,
      response: redactPayerData(aCheckoutAnswer({ merchant_order_id: merchantOrderId, order_id: gatewayOrderId })),
      receivedAt: at(1),
    }),
  ]
  for (const o of plan.observations) {
    const fields = { merchant_order_id: merchantOrderId, order_id: gatewayOrderId, order_status: o.status, order_amount: o.amountOk ? amountText : '1.00' }
    const command: OrderCommand =
      o.via === 'notification'
        ? notified(aPaymentNotification(fields), { statusTable: STATUS_TABLE, at: at(o.minute) })
        : o.via === 'query'
          ? queried(aQueryAnswer(fields), { statusTable: STATUS_TABLE, at: at(o.minute) })
          : o.via === 'redirect'
            ? redirected(aRedirectForm(fields))
            : notified(aPaymentNotification(fields), { verified: false, statusTable: STATUS_TABLE, at: at(o.minute) })
    const decided = decide(command, fold(events))
    if (E.isRight(decided)) events.push(...decided.right)
  }
  return { stream: orderStreamName(MERCHANT_ID, merchantOrderId), events }
}

export type Appended = { readonly stream: string; readonly event: DomainEvent; readonly eventId: string }

/** Interleaves several streams' events (each stream keeps its order) by the picks given. */
export const interleave = <A>(streams: ReadonlyArray<ReadonlyArray<A>>, picks: ReadonlyArray<number>): A[] => {
  const cursors = streams.map(() => 0)
  const out: A[] = []
  let p = 0
  for (;;) {
    const open = streams.map((s, i) => i).filter((i) => (cursors[i] ?? 0) < (streams[i]?.length ?? 0))
    if (open.length === 0) return out
    const pick = open[(picks[p++ % Math.max(1, picks.length)] ?? 0) % open.length] ?? 0
    const item = streams[pick]?.[cursors[pick] ?? 0]
    cursors[pick] = (cursors[pick] ?? 0) + 1
    if (item !== undefined) out.push(item)
  }
}

/** Appends one event as the application does (id, metadata with the usual source). */
export const appendEvent = async (store: EventStore, stream: string, event: DomainEvent, eventId: string = randomUUID()): Promise<void> => {
  const appended = await store.append(stream, [toEventToAppend(event, eventId, { correlationId: 'test', causationId: 'test', recordedAt: new Date().toISOString(), source: eventSourceOf(event) })], 'any')()
  if (E.isLeft(appended)) throw new Error(`append to ${stream} failed: ${appended.left._tag}`)
}
