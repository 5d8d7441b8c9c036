import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BREAK_CLASSES } from '../../../src/domain/reconciliation/break-class.ts'
import { alignedFields, BREAK_GUIDANCE, breakSentence } from '../../../src/domain/reconciliation/report/explain.ts'
import { dayFigures, sumFigures } from '../../../src/domain/reconciliation/report/model.ts'
import { bahtText, groupedBaht, satangOfText } from '../../../src/domain/reconciliation/report/people.ts'

/** Issue 27: a break explained to a person, money as people write it, payments and refunds apart. */

const satangView = { merchant_order_id: 'AMT-1', gateway_order_id: 'G-1', request_phase: 'accepted', status: { code: 'PS', final: true, outcome: 'success', known: true }, status_source: 'notification', amount_satang: '9900', currency: 'THB', refunded_satang: '0', refund_ids: [], created_at: '2026-11-26T03:00:00.000Z' }
const gatewayView = { answered: true, found: true, order_id: 'G-1', status: { code: 'PS', final: true, outcome: 'success', known: true }, order_amount: '90.00', amount_satang: '9000', currency: 'THB', complete_time: '2026-11-26T03:01:00.000Z', trace_id: 't-1' }

describe('money for people', () => {
  it('baht with thousands separators and the sign, negatives too', () => {
    expect(groupedBaht(4719356n)).toBe('47,193.56')
    expect(groupedBaht(99n)).toBe('0.99')
    expect(groupedBaht(-123456789n)).toBe('-1,234,567.89')
    expect(bahtText(9900n)).toBe('฿99.00')
    expect(bahtText(-900n)).toBe('-฿9.00')
    expect(bahtText(100000000n)).toBe('฿1,000,000.00')
  })
  it('reads baht text and satang digits, refuses anything else', () => {
    expect(satangOfText('90.00', false)).toBe(9000n)
    expect(satangOfText('90.5', false)).toBe(9050n)
    expect(satangOfText('90', false)).toBe(9000n)
    expect(satangOfText('9000', true)).toBe(9000n)
    expect(satangOfText('9.001', false)).toBeNull()
    expect(satangOfText('1e3', true)).toBeNull()
  })
})

describe('a break explained', () => {
  it('aligns the fields by meaning: an amount mismatch differs in exactly one field, listed first', () => {
    const fields = alignedFields('payment', satangView, gatewayView)
    expect(fields.filter((f) => f.differs).map((f) => f.label)).toEqual(['Amount'])
    expect(fields[0]).toEqual({ label: 'Amount', kind: 'money', satang: '9900', gateway: '9000', differs: true })
    expect(fields.find((f) => f.label === 'Gateway order id')).toMatchObject({ satang: 'G-1', gateway: 'G-1', differs: false })
    expect(fields.find((f) => f.label === 'Status')).toMatchObject({ satang: 'PS (success)', gateway: 'PS (success)', differs: false })
    expect(breakSentence(fields, 900n, 'amount differs')).toBe('satang recorded ฿99.00, the gateway says ฿90.00: ฿9.00 at stake.')
  })

  it('a status conflict differs in the status; a "not found" says so', () => {
    const conflict = alignedFields('payment', satangView, { ...gatewayView, amount_satang: '9900', status: { code: 'PF', outcome: 'failure' } })
    expect(conflict.filter((f) => f.differs).map((f) => f.label)).toEqual(['Status'])
    expect(breakSentence(conflict, 9900n, '')).toBe('satang recorded status PS (success), the gateway says PF (failure): ฿99.00 at stake.')
    const missing = alignedFields('payment', satangView, { answered: true, found: false, code: 404, message: 'order not found', trace_id: 't' })
    expect(breakSentence(missing, 9900n, '')).toBe('satang recorded status PS (success), the gateway says not found: order not found: ฿99.00 at stake.')
  })

  it('a refund compares its amount with the gateway refund amount; a subscription its observed with its expected', () => {
    const refund = alignedFields('refund', { merchant_refund_id: 'R-1', merchant_order_id: 'O-1', amount_satang: '4000', currency: 'THB', status: { code: 'RS' } }, { refund_order_id: 'GR-1', merchant_order_id: 'O-1', refund_amount: '50.00', currency: 'THB', status: { code: 'RS' } })
    expect(refund.filter((f) => f.differs).map((f) => f.label)).toEqual(['Amount'])
    const sub = alignedFields('subscription', { date: '2026-11-20', observed: 'none' }, { date: '2026-11-20', expected: 'attempt due', billing_amount_satang: '29900', currency: 'THB' })
    expect(sub[0]).toMatchObject({ label: 'What happened', satang: 'none', gateway: 'attempt due', differs: true })
    expect(breakSentence(sub, 29900n, '')).toBe('satang recorded what happened none, the gateway says attempt due: ฿299.00 at stake.')
  })

  it('without a comparable difference the sentence is the detail with the money at stake', () => {
    expect(breakSentence(alignedFields('payment', { amount_satang: '100' }, { amount_satang: '100' }), 100n, 'still pending long past the expiry.')).toBe('still pending long past the expiry: ฿1.00 at stake.')
  })

  it('every class has guidance, and it is what docs/finance.md says', () => {
    const docs = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'finance.md'), 'utf8')
    for (const c of BREAK_CLASSES) {
      const g = BREAK_GUIDANCE[c]
      expect(g.meaning.length, c).toBeGreaterThan(10)
      const row = (docs.split('\n').find((l) => l.startsWith(`| \`${c}\` |`)) ?? '').replaceAll('`', '')
      // the action in the docs names the same first step
      expect(row, c).toContain(g.action.split(/[;:]/)[0]?.replace(/^as for an amount mismatch/, 'as above') ?? '')
    }
  })
})

describe('payments and refunds apart', () => {
  it('a refund matched is never added to the payments matched', () => {
    const f = dayFigures([
      { kind: 'payment', id: 'P-1', day: '2026-11-26', outcome: 'matched', breakClass: null, breakId: null, amount: 25000n, atStake: 0n },
      { kind: 'subscription', id: 'S-1', day: '2026-11-26', outcome: 'matched', breakClass: null, breakId: null, amount: 10000n, atStake: 0n },
      { kind: 'refund', id: 'R-1', day: '2026-11-26', outcome: 'matched', breakClass: null, breakId: null, amount: 4000n, atStake: 0n },
      { kind: 'refund', id: 'R-2', day: '2026-11-26', outcome: 'healed', breakClass: null, breakId: null, amount: 1000n, atStake: 0n },
    ])
    expect(f.payments.matched).toEqual({ count: 2, amount: 35000n })
    expect(f.refunds.matched).toEqual({ count: 1, amount: 4000n })
    expect(f.refunds.healed).toEqual({ count: 1, amount: 1000n })
    expect(f.outcomes.matched).toEqual({ count: 3, amount: 39000n })
    const two = sumFigures([f, f])
    expect(two.payments.matched).toEqual({ count: 4, amount: 70000n })
    expect(two.refunds.matched).toEqual({ count: 2, amount: 8000n })
  })
})
