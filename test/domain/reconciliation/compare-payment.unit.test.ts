import { describe, expect, it } from 'vitest'
import { comparePayment } from '../../../src/domain/reconciliation/compare-payment.ts'
import { at, sat } from '../support/values.ts'
import { aPaidItem, aPaymentItem, found, HOUR, notFound, POLICY, status } from './builders.ts'

/** The comparison of an order with the gateway's payment answer: every verdict whole, each rule at its edge. */

// POLICY: as of at(3 days), not-found grace 1 h, stale pending after 24 h.
const recent = new Date(POLICY.asOf.getTime() - HOUR + 60_000)
const longAgo = new Date(POLICY.asOf.getTime() - HOUR)

describe('the gateway does not know the order', () => {
  it('nothing was sent, or the create failed: consistent', () => {
    expect(comparePayment(aPaymentItem({ status: null, phase: 'not_requested', since: longAgo }), notFound, POLICY)).toEqual({ _tag: 'Matched' })
    expect(comparePayment(aPaymentItem({ status: null, phase: 'failed', since: longAgo }), notFound, POLICY)).toEqual({ _tag: 'Matched' })
  })

  it('a create whose outcome is open: pending within the grace, then healed as not found (nothing at stake)', () => {
    for (const phase of ['requested', 'outcome_unknown'] as const) {
      expect(comparePayment(aPaymentItem({ status: null, phase, since: recent }), notFound, POLICY)).toEqual({ _tag: 'Pending', why: 'the gateway does not know the order yet; its create may still be in flight' })
      expect(comparePayment(aPaymentItem({ status: null, phase, since: longAgo }), notFound, POLICY)).toEqual({ _tag: 'Heal', to: 'not_found', amountAtStake: 0n })
    }
  })

  it('an order satang holds as accepted: pending within the grace, then missing_at_gateway naming the answer', () => {
    expect(comparePayment(aPaymentItem({ since: recent }), notFound, POLICY)).toEqual({ _tag: 'Pending', why: 'the gateway does not know the order yet (within the not-found grace)' })
    expect(comparePayment(aPaymentItem({ since: longAgo }), notFound, POLICY)).toEqual({
      _tag: 'Break',
      class: 'missing_at_gateway',
      amountAtStake: 10000n,
      detail: 'satang recorded the order as accepted; the gateway answers 404001 not found',
    })
  })

  it('a status observed is never "not sent": an order with a status in any phase is missing at the gateway', () => {
    for (const phase of ['not_requested', 'failed', 'requested', 'outcome_unknown'] as const) {
      expect(comparePayment(aPaymentItem({ phase, since: longAgo }), notFound, POLICY)).toMatchObject({ _tag: 'Break', class: 'missing_at_gateway' })
    }
  })
})

describe('the gateway has the order', () => {
  it('satang recorded the create as failed: status_conflict at the gateway amount (or the order amount when unreadable)', () => {
    const failedItem = aPaymentItem({ status: null, phase: 'failed' })
    expect(comparePayment(failedItem, found({ amount: sat(9000n) }), POLICY)).toEqual({ _tag: 'Break', class: 'status_conflict', amountAtStake: 9000n, detail: 'satang recorded the create as failed; the gateway has the order with status PS' })
    expect(comparePayment(failedItem, found({ amount: null }), POLICY)).toMatchObject({ class: 'status_conflict', amountAtStake: 10000n })
    // A failed create whose order was observed anyway is compared like any other.
    expect(comparePayment(aPaymentItem({ phase: 'failed', status: status('PS') }), found(), POLICY)).toEqual({ _tag: 'Matched' })
    expect(comparePayment(aPaymentItem({ phase: 'requested', status: null }), found(), POLICY)).toEqual({ _tag: 'Heal', to: 'PS', amountAtStake: 10000n })
  })

  it('another currency, another amount, an unreadable amount, an unknown status: each named', () => {
    expect(comparePayment(aPaidItem(), found({ currency: 'USD' }), POLICY)).toEqual({ _tag: 'Break', class: 'currency_mismatch', amountAtStake: 10000n, detail: 'satang recorded THB; the gateway answers USD' })
    expect(comparePayment(aPaidItem(), found({ amount: sat(10050n), amountText: '100.50' }), POLICY)).toEqual({ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 50n, detail: 'satang recorded 100.00 THB; the gateway answers 100.50 THB' })
    expect(comparePayment(aPaidItem(), found({ amount: null, amountText: 'abc' }), POLICY)).toEqual({ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 10000n, detail: 'satang recorded 100.00 THB; the gateway answers "abc", which is not an amount' })
    expect(comparePayment(aPaidItem(), found({ status: status('ZZ') }), POLICY)).toEqual({ _tag: 'Break', class: 'unknown_status', amountAtStake: 10000n, detail: 'the gateway reports status ZZ, which no status table knows' })
  })

  it('satang holds a final status: the same one is consistent, another is a status_conflict', () => {
    expect(comparePayment(aPaidItem(), found(), POLICY)).toEqual({ _tag: 'Matched' })
    expect(comparePayment(aPaidItem(), found({ status: status('PF') }), POLICY)).toEqual({ _tag: 'Break', class: 'status_conflict', amountAtStake: 10000n, detail: 'satang holds the final status PS; the gateway says PF' })
  })

  it('satang holds a status that is not final: a final answer heals it; a pending one is pending, then stale', () => {
    expect(comparePayment(aPaymentItem(), found(), POLICY)).toEqual({ _tag: 'Heal', to: 'PS', amountAtStake: 10000n })
    expect(comparePayment(aPaymentItem({ status: status('ZZ') }), found(), POLICY)).toEqual({ _tag: 'Heal', to: 'PS', amountAtStake: 10000n })
    const created = new Date(POLICY.asOf.getTime() - 24 * HOUR)
    expect(comparePayment(aPaymentItem({ createdAt: created }), found({ status: status('PI') }), POLICY)).toEqual({
      _tag: 'Break',
      class: 'stale_pending',
      amountAtStake: 10000n,
      detail: `still PI at the gateway since ${created.toISOString()}`,
    })
    expect(comparePayment(aPaymentItem({ createdAt: new Date(created.getTime() + 1) }), found({ status: status('PI') }), POLICY)).toEqual({ _tag: 'Pending', why: 'still PI at the gateway' })
    // The link's expiry, when the gateway sends one, is what makes it stale.
    expect(comparePayment(aPaymentItem({ createdAt: created }), found({ status: status('PI'), dueAt: at(60 * 24 * 3) }), POLICY)).toEqual({ _tag: 'Pending', why: 'still PI at the gateway' })
  })

  it('refunds above what the order paid: refund_exceeds_payment by the excess; exactly what was paid is fine', () => {
    expect(comparePayment(aPaidItem({ refunded: 10000n, refundIds: ['R-1'] }), found(), POLICY)).toEqual({ _tag: 'Matched' })
    expect(comparePayment(aPaidItem({ refunded: 12000n, refundIds: ['R-1', 'R-2'] }), found(), POLICY)).toEqual({
      _tag: 'Break',
      class: 'refund_exceeds_payment',
      amountAtStake: 2000n,
      detail: 'refunds R-1, R-2 total 120.00 THB; the order paid 100.00 THB',
    })
    // A failed order paid nothing: any refund exceeds it.
    const failedOrder = aPaymentItem({ status: status('PF'), refunded: 100n, refundIds: ['R-1'] })
    expect(comparePayment(failedOrder, found({ status: status('PF') }), POLICY)).toEqual({ _tag: 'Break', class: 'refund_exceeds_payment', amountAtStake: 100n, detail: 'refunds R-1 total 1.00 THB; the order paid 0.00 THB' })
  })

  it('a query that failed: unchecked, the order amount at stake', () => {
    expect(comparePayment(aPaidItem(), { _tag: 'Failed', reason: 'TransportFailed: timeout' }, POLICY)).toEqual({ _tag: 'Unchecked', reason: 'TransportFailed: timeout', amountAtStake: 10000n })
  })
})

describe('an accepted create without a status (its answer disagreed with the order)', () => {
  it('given the gateway does not know the order, when compared past the grace, then it is missing at the gateway, not healed', () => {
    // given: accepted, but the answer's amount or currency disagreed, so satang holds no status
    for (const phase of ['accepted', 'resolved_by_observation'] as const) {
      const item = aPaymentItem({ status: null, phase, since: longAgo })
      // when/then
      expect(comparePayment(item, notFound, POLICY)).toEqual({
        _tag: 'Break',
        class: 'missing_at_gateway',
        amountAtStake: 10000n,
        detail: 'satang recorded the order as accepted; the gateway answers 404001 not found',
      })
    }
  })
})
