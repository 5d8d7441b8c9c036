import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decideAcknowledge, evolveBreakState, initialBreakState, type AcknowledgeBreak } from '../../../src/domain/reconciliation/acknowledge.ts'
import { absDiff, heal, matched, pending } from '../../../src/domain/reconciliation/comparison.ts'
import { settleHeal } from '../../../src/domain/reconciliation/heal.ts'
import { reconciliationBreakAcknowledged } from '../../../src/domain/reconciliation/events/index.ts'
import { T0 } from '../support/values.ts'

describe('settling a heal once the aggregate has seen it', () => {
  const healing = { _tag: 'Heal', to: 'PS', amountAtStake: 10000n } as const
  const refused = (...mismatches: Parameters<typeof settleHeal>[1]['mismatches']) => settleHeal(healing, { mismatches, wasSettled: false, isSettled: false })

  it('a refused observation is a break of the class of its first mismatch, naming every mismatch', () => {
    expect(refused('amount', 'currency')).toStrictEqual({ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 10000n, detail: "the aggregate refused the gateway's answer: amount, currency disagree" })
    expect(refused('currency')).toStrictEqual({ _tag: 'Break', class: 'currency_mismatch', amountAtStake: 10000n, detail: "the aggregate refused the gateway's answer: currency disagree" })
    expect(refused('refundable_amount')).toStrictEqual({ _tag: 'Break', class: 'refund_exceeds_payment', amountAtStake: 10000n, detail: "the aggregate refused the gateway's answer: refundable_amount disagree" })
  })

  it('every identifier or status mismatch is a status conflict', () => {
    const fields = ['final_status', 'gateway_order_id', 'merchant_id', 'merchant_order_id', 'merchant_refund_id', 'merchant_subscribe_id', 'operation', 'recurring_bill_id', 'refund_order_id', 'service'] as const
    for (const f of fields) expect(refused(f)).toStrictEqual({ _tag: 'Break', class: 'status_conflict', amountAtStake: 10000n, detail: `the aggregate refused the gateway's answer: ${f} disagree` })
  })

  it('settled by someone else first: matched; settled by it: the heal; not settled: pending, saying why', () => {
    expect(settleHeal(healing, { mismatches: [], wasSettled: true, isSettled: true })).toStrictEqual(matched)
    expect(settleHeal(healing, { mismatches: [], wasSettled: false, isSettled: true })).toBe(healing)
    expect(settleHeal(healing, { mismatches: [], wasSettled: false, isSettled: false })).toStrictEqual(pending('the gateway answer was recorded but did not settle the item'))
    expect(pending('x')).toStrictEqual({ _tag: 'Pending', why: 'x' })
    expect(heal('PS', 10000n)).toStrictEqual(healing)
  })
})

describe('absDiff', () => {
  it('is the distance between two amounts, whichever is larger', () => {
    expect([absDiff(10n, 3n), absDiff(3n, 10n), absDiff(7n, 7n), absDiff(0n, 5n)]).toEqual([7n, 7n, 0n, 5n])
  })
})

describe('acknowledging a reconciliation break', () => {
  const command = (o: Partial<AcknowledgeBreak> = {}): AcknowledgeBreak => ({
    type: 'AcknowledgeBreak',
    breakId: 'brk-1',
    current: { class: 'amount_mismatch', status: 'new' },
    actor: 'ops@example.com',
    reason: '  refunded by hand  ',
    at: T0,
    ...o,
  })
  const acknowledged = reconciliationBreakAcknowledged.make({ breakId: 'brk-1', class: 'amount_mismatch', actor: 'ops@example.com', reason: 'refunded by hand', acknowledgedAt: T0 })

  it('records who, when and the trimmed reason', () => {
    expect(decideAcknowledge(command(), initialBreakState)).toStrictEqual(E.right([acknowledged]))
  })

  it('refuses a blank reason, an unknown break, a resolved break; records nothing twice', () => {
    expect(decideAcknowledge(command({ reason: ' \n ' }), initialBreakState)).toStrictEqual(E.left({ _tag: 'ReasonRequired' }))
    expect(decideAcknowledge(command({ reason: '' }), initialBreakState)).toStrictEqual(E.left({ _tag: 'ReasonRequired' }))
    expect(decideAcknowledge(command({ current: null }), initialBreakState)).toStrictEqual(E.left({ _tag: 'NoSuchBreak', breakId: 'brk-1' }))
    expect(decideAcknowledge(command({ current: { class: 'amount_mismatch', status: 'resolved' } }), initialBreakState)).toStrictEqual(E.left({ _tag: 'BreakResolved', breakId: 'brk-1' }))
    const state = evolveBreakState(initialBreakState, acknowledged)
    expect(decideAcknowledge(command({ reason: 'again' }), state)).toStrictEqual(E.right([]))
  })

  it('the first acknowledgement stands', () => {
    const first = evolveBreakState(initialBreakState, acknowledged)
    expect(first).toStrictEqual({ acknowledged: acknowledged.data })
    const second = reconciliationBreakAcknowledged.make({ ...acknowledged.data, reason: 'other', actor: 'b' })
    expect(evolveBreakState(first, second)).toBe(first)
  })
})
