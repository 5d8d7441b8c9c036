import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PAYMENT_STATUS_TABLE, extendStatusTable } from '../../../src/domain/gateway/statuses.ts'
import { decide, fold, orderStreamName, type OrderCommand, type OrderEvent } from '../../../src/domain/order/index.ts'
import { paymentAnswerOf, type PaymentAnswer } from '../../../src/domain/reconciliation/answer.ts'
import { BREAK_CLASSES, ITEM_OUTCOMES, type BreakClass } from '../../../src/domain/reconciliation/break-class.ts'
import { compare } from '../../../src/domain/reconciliation/compare.ts'
import { breakClassOf } from '../../../src/domain/reconciliation/comparison.ts'
import type { CheckedItem } from '../../../src/domain/reconciliation/events/index.ts'
import { settleHeal } from '../../../src/domain/reconciliation/heal.ts'
import { paymentItemOf } from '../../../src/domain/reconciliation/item.ts'
import { lifecycleStep, type KnownBreak } from '../../../src/domain/reconciliation/lifecycle.ts'
import { countItems } from '../../../src/domain/reconciliation/run.ts'
import { anAcceptedCheckout, aPaymentNotification, aQueryAnswer, notified, ORDER_ID, queried } from '../order/builders.ts'
import { at, MERCHANT_ID } from '../support/values.ts'
import { failed, HOUR, notFound } from './builders.ts'

const extended = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { PF: { meaning: 'failed', outcome: 'failed' } })
const table = extended._tag === 'Right' ? extended.right : DEFAULT_PAYMENT_STATUS_TABLE
const STREAM = orderStreamName(MERCHANT_ID, ORDER_ID)

/** What satang observed: notifications and queries with any status and, now and then, another amount. */
const observation = fc
  .record({ via: fc.constantFrom('notification', 'query'), status: fc.constantFrom('WP', 'PI', 'PS', 'PF', 'ZZ'), amount: fc.constantFrom('100.00', '100.00', '90.00') })
  .map(({ via, status, amount }): OrderCommand =>
    via === 'notification' ? notified(aPaymentNotification({ order_status: status, order_amount: amount }), { statusTable: table }) : queried(aQueryAnswer({ order_status: status, order_amount: amount }), { statusTable: table }),
  )

/** What the gateway answers to the reconciliation's query. */
const answerArb: fc.Arbitrary<{ readonly answer: PaymentAnswer; readonly query: OrderCommand | null }> = fc.oneof(
  fc
    .record({ status: fc.constantFrom('WP', 'PI', 'PS', 'PF', 'ZZ'), amount: fc.constantFrom('100.00', '100.00', '100.00', '120.00'), currency: fc.constantFrom('THB', 'THB', 'THB', 'USD') })
    .map(({ status, amount, currency }) => {
      const wire = aQueryAnswer({ order_status: status, order_amount: amount, order_currency: currency })
      return { answer: paymentAnswerOf(wire, table, 'trace'), query: queried(wire, { statusTable: table, at: at(4000) }) }
    }),
  fc.constant({ answer: notFound, query: null }),
  fc.constant({ answer: failed, query: null }),
)

const knownArb: fc.Arbitrary<ReadonlyArray<KnownBreak>> = fc.array(
  fc.record({ class: fc.constantFrom<BreakClass>(...BREAK_CLASSES), status: fc.constantFrom<'new' | 'persisting' | 'acknowledged'>('new', 'persisting', 'acknowledged') }).map(({ class: c, status }) => ({ breakId: `b-${c}`, class: c, status, firstSeenAt: at(0), firstSeenRunId: 'run-0' })),
  { maxLength: 3 },
)

const historyOf = (commands: ReadonlyArray<OrderCommand>): OrderEvent[] => {
  const events: OrderEvent[] = [...anAcceptedCheckout()]
  for (const c of commands) {
    const decided = decide(c, fold(events))
    if (decided._tag === 'Right') events.push(...decided.right)
  }
  return events
}

describe('reconciliation over random histories (property)', () => {
  it('every item is classified exactly once, and healing never regresses a final status', () => {
    fc.assert(
      fc.property(fc.array(observation, { maxLength: 8 }), answerArb, knownArb, fc.integer({ min: 0, max: 72 }), fc.constantFrom(0n, 5000n, 15000n), (commands, { answer, query }, known, hours, refunded) => {
        const events = historyOf(commands)
        const before = fold(events)
        if (before._tag !== 'Order') throw new Error('no order')
        const item = paymentItemOf(STREAM, before, { total: refunded, ids: refunded > 0n ? ['R-1'] : [] })
        const policy = { asOf: new Date(at(0).getTime() + hours * HOUR), notFoundGraceMs: HOUR, stalePendingMs: 24 * HOUR }
        let verdict = compare({ kind: 'payment', item, answer }, policy)

        // Healing goes through the aggregate; its decision stands.
        if (verdict._tag === 'Heal') {
          expect(item.status?.final ?? false).toBe(false)
          if (query !== null) {
            const decided = decide(query, before)
            const appended = decided._tag === 'Right' ? decided.right : []
            const after = fold([...events, ...appended])
            if (after._tag !== 'Order') throw new Error('no order')
            verdict = settleHeal(verdict, {
              mismatches: appended.flatMap((e) => (e.type === 'DiscrepancyObserved' ? e.data.mismatches.map((m) => m.field) : [])),
              wasSettled: false,
              isSettled: after.status?.classification.final === true,
            })
          }
        }
        // Whatever the answer, recording it never moves a final status.
        if (query !== null && before.status?.classification.final === true) {
          const decided = decide(query, before)
          const after = fold([...events, ...(decided._tag === 'Right' ? decided.right : [])])
          expect(after._tag === 'Order' ? after.status?.code : null).toBe(before.status.code)
        }

        const step = lifecycleStep(verdict, known, { runId: 'run-1', at: policy.asOf, newBreakId: (c) => `b-${c}` })
        expect(ITEM_OUTCOMES).toContain(step.outcome)
        const cls = breakClassOf(verdict)
        if (cls === null) {
          expect(['matched', 'pending', 'healed']).toContain(step.outcome)
          expect(step.detect).toBeNull()
        } else {
          expect(BREAK_CLASSES).toContain(cls)
          expect(['break', 'unchecked', 'acknowledged']).toContain(step.outcome)
          if (step.detect !== null) expect(step.detect.class).toBe(cls)
          if (answer._tag === 'Failed') expect(step.outcome).toBe('unchecked')
        }
      }),
      { numRuns: 500 },
    )
  })

  it('the verdict is reconciled only when nothing is unchecked, open or pending; incomplete whenever an item is unchecked', () => {
    const checked = fc.record({
      outcome: fc.constantFrom(...ITEM_OUTCOMES),
      cls: fc.constantFrom<BreakClass>(...BREAK_CLASSES),
      amount: fc.bigInt({ min: 0n, max: 99_999_999n }),
    })
    fc.assert(
      fc.property(fc.array(checked, { maxLength: 40 }), (raw) => {
        const items: CheckedItem[] = raw.map((r, i) => ({
          kind: 'payment',
          id: `O-${String(i)}`,
          day: '2026-01-01',
          outcome: r.outcome,
          breakClass: r.outcome === 'unchecked' ? 'query_failed' : r.outcome === 'break' || r.outcome === 'acknowledged' ? r.cls : null,
          breakId: null,
          amount: r.amount,
          atStake: r.outcome === 'break' ? r.amount : 0n,
        }))
        const { counts, verdict } = countItems(items)
        expect(counts.checked).toBe(items.length)
        expect(counts.matched + counts.healed + counts.pending + counts.unchecked + counts.acknowledged + counts.breaks).toBe(items.length)
        if (verdict === 'reconciled') expect(items.every((i) => i.outcome === 'matched' || i.outcome === 'healed' || i.outcome === 'acknowledged')).toBe(true)
        if (items.some((i) => i.outcome === 'unchecked')) expect(verdict).toBe('incomplete')
        if (items.some((i) => i.outcome === 'break')) expect(verdict === 'breaks' || verdict === 'incomplete').toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
