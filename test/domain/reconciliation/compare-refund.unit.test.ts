import { describe, expect, it } from 'vitest'
import { compareRefund } from '../../../src/domain/reconciliation/compare-refund.ts'
import { sat } from '../support/values.ts'
import { aRecordedRefund, aRefundItem, HOUR, notFound, POLICY, refundFound, status } from './builders.ts'

/** The comparison of a refund with the gateway's refund answer: every verdict whole, each rule at its edge. */

const DAY = 24 * HOUR
const ago = (ms: number): Date => new Date(POLICY.asOf.getTime() - ms)

describe('the gateway does not know the refund', () => {
  it('only tracked: pending until it is stale, then stale_pending naming the answer (nothing at stake)', () => {
    expect(compareRefund(aRefundItem({ trackedAt: ago(DAY - 1) }), notFound, POLICY)).toEqual({ _tag: 'Pending', why: 'tracked; the gateway does not know this refund yet' })
    expect(compareRefund(aRefundItem({ trackedAt: ago(DAY) }), notFound, POLICY)).toEqual({ _tag: 'Break', class: 'stale_pending', amountAtStake: 0n, detail: `tracked since ${ago(DAY).toISOString()}; the gateway answers 404001 not found` })
  })
  it('observed or recorded by satang: pending within the not-found grace from the observation, then missing_at_gateway', () => {
    const observed = aRefundItem({ status: status('RP'), statusObservedAt: ago(HOUR - 1), trackedAt: ago(10 * DAY) })
    expect(compareRefund(observed, notFound, POLICY)).toEqual({ _tag: 'Pending', why: 'the gateway does not know the refund yet (within the not-found grace)' })
    expect(compareRefund(aRecordedRefund({ statusObservedAt: ago(HOUR) }), notFound, POLICY)).toEqual({ _tag: 'Break', class: 'missing_at_gateway', amountAtStake: 4000n, detail: 'satang observed the refund; the gateway answers 404001 not found' })
    // Recorded without a status observed: the grace runs from when it was tracked; nothing recorded is nothing at stake.
    expect(compareRefund(aRefundItem({ recorded: { amount: sat(4000n), currency: 'THB' }, trackedAt: ago(HOUR) }), notFound, POLICY)).toMatchObject({ class: 'missing_at_gateway', amountAtStake: 4000n })
    expect(compareRefund(aRefundItem({ status: status('RP'), statusObservedAt: null, trackedAt: ago(HOUR - 1) }), notFound, POLICY)).toMatchObject({ _tag: 'Pending' })
    expect(compareRefund(aRefundItem({ status: status('RP'), statusObservedAt: ago(HOUR) }), notFound, POLICY)).toMatchObject({ class: 'missing_at_gateway', amountAtStake: 0n })
  })
  it('a query that failed: unchecked at the recorded amount, or nothing', () => {
    expect(compareRefund(aRecordedRefund(), { _tag: 'Failed', reason: 'timeout' }, POLICY)).toEqual({ _tag: 'Unchecked', reason: 'timeout', amountAtStake: 4000n })
    expect(compareRefund(aRefundItem(), { _tag: 'Failed', reason: 'timeout' }, POLICY)).toEqual({ _tag: 'Unchecked', reason: 'timeout', amountAtStake: 0n })
  })
})

describe('the gateway has the refund', () => {
  it('of an order satang never created: missing_internal at the gateway amount', () => {
    expect(compareRefund(aRefundItem({ orderKnown: false, orderCurrency: null }), refundFound(), POLICY)).toEqual({
      _tag: 'Break',
      class: 'missing_internal',
      amountAtStake: 4000n,
      detail: 'the gateway has refund REF-1 of order ORD-1, which satang never created',
    })
  })
  it('for another order: status_conflict naming both', () => {
    expect(compareRefund(aRecordedRefund(), refundFound({ merchantOrderId: 'ORD-2' }), POLICY)).toEqual({
      _tag: 'Break',
      class: 'status_conflict',
      amountAtStake: 4000n,
      detail: 'satang tracks the refund for order ORD-1; the gateway has it for ORD-2',
    })
  })
  it('another currency than recorded, or than the order when nothing is recorded; none known, none checked', () => {
    expect(compareRefund(aRecordedRefund(), refundFound({ currency: 'USD' }), POLICY)).toEqual({ _tag: 'Break', class: 'currency_mismatch', amountAtStake: 4000n, detail: 'satang recorded THB; the gateway answers USD' })
    expect(compareRefund(aRefundItem({ orderCurrency: 'EUR' }), refundFound(), POLICY)).toMatchObject({ class: 'currency_mismatch', detail: 'satang recorded EUR; the gateway answers THB' })
    expect(compareRefund(aRefundItem({ orderCurrency: null }), refundFound({ currency: 'USD' }), POLICY)).toEqual({ _tag: 'Heal', to: 'RS', amountAtStake: 4000n })
  })
  it('another amount than recorded (or unreadable): amount_mismatch; nothing recorded, no amount to compare', () => {
    expect(compareRefund(aRecordedRefund(), refundFound({ amount: sat(4500n), amountText: '45.00' }), POLICY)).toEqual({ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 500n, detail: 'satang recorded 40.00 THB; the gateway answers 45.00 THB' })
    expect(compareRefund(aRecordedRefund(), refundFound({ amount: null, amountText: 'x' }), POLICY)).toEqual({ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 4000n, detail: 'satang recorded 40.00 THB; the gateway answers "x", which is not an amount' })
    expect(compareRefund(aRefundItem(), refundFound({ amount: sat(4500n) }), POLICY)).toEqual({ _tag: 'Heal', to: 'RS', amountAtStake: 4500n })
  })
  it('an unknown status; a final status that agrees or not', () => {
    expect(compareRefund(aRecordedRefund(), refundFound({ status: status('R?') }), POLICY)).toEqual({ _tag: 'Break', class: 'unknown_status', amountAtStake: 4000n, detail: 'the gateway reports refund status R?, which no status table knows' })
    expect(compareRefund(aRecordedRefund(), refundFound(), POLICY)).toEqual({ _tag: 'Matched' })
    expect(compareRefund(aRecordedRefund(), refundFound({ status: status('RF') }), POLICY)).toEqual({ _tag: 'Break', class: 'status_conflict', amountAtStake: 4000n, detail: 'satang holds the final status RS; the gateway says RF' })
  })
  it('satang holds no final status: a final answer heals it; a pending one is pending, then stale from when it was tracked', () => {
    expect(compareRefund(aRefundItem({ status: status('RP') }), refundFound(), POLICY)).toEqual({ _tag: 'Heal', to: 'RS', amountAtStake: 4000n })
    expect(compareRefund(aRefundItem({ trackedAt: ago(DAY - 1) }), refundFound({ status: status('RP') }), POLICY)).toEqual({ _tag: 'Pending', why: 'still RP at the gateway' })
    expect(compareRefund(aRefundItem({ trackedAt: ago(DAY) }), refundFound({ status: status('RP') }), POLICY)).toEqual({ _tag: 'Break', class: 'stale_pending', amountAtStake: 4000n, detail: `still RP at the gateway since ${ago(DAY).toISOString()}` })
  })
})
