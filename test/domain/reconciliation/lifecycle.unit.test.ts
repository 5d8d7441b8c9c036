import { describe, expect, it } from 'vitest'
import { ageBucketOf, ageDays } from '../../../src/domain/reconciliation/ageing.ts'
import { breakOf, heal, matched, pending, unchecked } from '../../../src/domain/reconciliation/comparison.ts'
import { settleHeal } from '../../../src/domain/reconciliation/heal.ts'
import { lifecycleStep, type KnownBreak } from '../../../src/domain/reconciliation/lifecycle.ts'
import { verdictOf } from '../../../src/domain/reconciliation/verdict.ts'
import { at } from '../support/values.ts'

const run = { runId: 'run-2', at: at(100), newBreakId: (cls: string) => `b-${cls}` }
const known = (o: Partial<KnownBreak> = {}): KnownBreak => ({ breakId: 'b-old', class: 'amount_mismatch', status: 'new', firstSeenAt: at(0), firstSeenRunId: 'run-1', ...o })

describe('break lifecycle', () => {
  it('given no known break, when the item is broken, then a new break is detected', () => {
    expect(lifecycleStep(breakOf('amount_mismatch', 5n, 'x'), [], run)).toEqual({
      outcome: 'break',
      breakId: 'b-amount_mismatch',
      detect: { breakId: 'b-amount_mismatch', class: 'amount_mismatch', status: 'new', firstSeenAt: at(100), firstSeenRunId: 'run-2' },
      resolve: [],
    })
  })
  it('given a known break of the same class, then it persists with its first sighting', () => {
    expect(lifecycleStep(breakOf('amount_mismatch', 5n, 'x'), [known()], run).detect).toEqual({ breakId: 'b-old', class: 'amount_mismatch', status: 'persisting', firstSeenAt: at(0), firstSeenRunId: 'run-1' })
  })
  it('given a known break, when the item is consistent, then it is resolved (healed when a heal made it so)', () => {
    expect(lifecycleStep(matched, [known()], run)).toEqual({ outcome: 'matched', breakId: null, detect: null, resolve: [{ breakId: 'b-old', class: 'amount_mismatch', resolution: 'consistent' }] })
    expect(lifecycleStep(heal('PS', 1n), [known({ class: 'stale_pending' })], run).resolve).toEqual([{ breakId: 'b-old', class: 'stale_pending', resolution: 'healed' }])
    expect(lifecycleStep(pending('still PI'), [known({ class: 'query_failed' })], run).outcome).toBe('pending')
  })
  it('given a heal, when stepped, then the item is healed and its known break resolved as healed, all of it', () => {
    expect(lifecycleStep(heal('PS', 1n), [known({ class: 'stale_pending' })], run)).toEqual({ outcome: 'healed', breakId: null, detect: null, resolve: [{ breakId: 'b-old', class: 'stale_pending', resolution: 'healed' }] })
    expect(lifecycleStep(heal('PS', 1n), [], run)).toEqual({ outcome: 'healed', breakId: null, detect: null, resolve: [] })
  })
  it('given a known break of another class, then it is resolved as reclassified and the new class detected', () => {
    const step = lifecycleStep(breakOf('status_conflict', 5n, 'x'), [known()], run)
    expect(step.resolve).toEqual([{ breakId: 'b-old', class: 'amount_mismatch', resolution: 'reclassified' }])
    expect(step.detect?.status).toBe('new')
  })
  it('given a known break, when the query fails, then nothing is known about it: it stays open, and a query_failed break is detected', () => {
    const step = lifecycleStep(unchecked('timeout', 5n), [known()], run)
    expect(step).toMatchObject({ outcome: 'unchecked', resolve: [], detect: { class: 'query_failed', status: 'new' } })
  })
  it('given an acknowledged break still seen, then the item is acknowledged and nothing is detected', () => {
    expect(lifecycleStep(breakOf('amount_mismatch', 5n, 'x'), [known({ status: 'acknowledged' })], run)).toEqual({ outcome: 'acknowledged', breakId: 'b-old', detect: null, resolve: [] })
  })
  it('an acknowledgement never stands in for a check: an acknowledged query_failed item is still unchecked', () => {
    expect(lifecycleStep(unchecked('timeout', 5n), [known({ class: 'query_failed', status: 'acknowledged' })], run).outcome).toBe('unchecked')
  })
})

describe('settling a heal through the aggregate', () => {
  const healing = { _tag: 'Heal', to: 'RS', amountAtStake: 4000n } as const
  it('healed when the observation settled the item', () => {
    expect(settleHeal(healing, { mismatches: [], wasSettled: false, isSettled: true })).toBe(healing)
  })
  it('matched when the item was settled meanwhile (a notification came first)', () => {
    expect(settleHeal(healing, { mismatches: [], wasSettled: true, isSettled: true })).toEqual(matched)
  })
  it('a refund above what the order still allows is refund_exceeds_payment, never applied', () => {
    expect(settleHeal(healing, { mismatches: ['refundable_amount'], wasSettled: false, isSettled: false })).toMatchObject({ _tag: 'Break', class: 'refund_exceeds_payment', amountAtStake: 4000n })
  })
})

describe('verdicts and ageing', () => {
  it('reconciled only when nothing is unchecked, broken or pending', () => {
    expect(verdictOf({ unchecked: 0, breaks: 0, pending: 0 })).toBe('reconciled')
    expect(verdictOf({ unchecked: 0, breaks: 0, pending: 3 })).toBe('reconciled_with_pending')
    expect(verdictOf({ unchecked: 0, breaks: 1, pending: 3 })).toBe('breaks')
    expect(verdictOf({ unchecked: 1, breaks: 1, pending: 0 })).toBe('incomplete')
  })
  it('ageing buckets 0–1, 2–7, 8–30, > 30 days', () => {
    expect([0, 1, 2, 7, 8, 30, 31].map(ageBucketOf)).toEqual(['0-1', '0-1', '2-7', '2-7', '8-30', '8-30', '>30'])
    expect(ageDays(at(0), at(60 * 24 * 2 - 1))).toBe(1)
    expect(ageDays(at(0), at(60 * 24 * 2))).toBe(2)
  })
})
