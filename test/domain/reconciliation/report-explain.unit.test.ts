import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BREAK_CLASSES } from '../../../src/domain/reconciliation/break-class.ts'
import { alignedFields, BREAK_GUIDANCE, breakSentence, guidanceOf, type AlignedField } from '../../../src/domain/reconciliation/report/explain.ts'
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
    expect([satangOfText('-90.50', false), satangOfText('-9050', true)]).toEqual([-9050n, -9050n])
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

describe('every field aligned, whole', () => {
  const row = (label: string, kind: 'money' | 'time' | 'text', satang: string | null, gateway: string | null, differs = false): AlignedField => ({ label, kind, satang, gateway, differs })

  it('given a payment both views describe in full, when aligned, then each field is in its row and only the differing one comes first', () => {
    const satang = { ...satangView, refunded_satang: '500', refund_ids: ['R-1', 'R-2'], status: { ...satangView.status, observed_at: '2026-11-26T03:02:00.000Z' } }
    const gateway = { ...gatewayView, merchant_order_id: 'AMT-1', refunded_satang: '500' }
    expect(alignedFields('payment', satang, gateway)).toEqual([
      row('Amount', 'money', '9900', '9000', true),
      row('Status', 'text', 'PS (success)', 'PS (success)'),
      row('Refunded amount', 'money', '500', '500'),
      row('Currency', 'text', 'THB', 'THB'),
      row('Created', 'time', '2026-11-26T03:00:00.000Z', null),
      row('Completed', 'time', null, '2026-11-26T03:01:00.000Z'),
      row('Status observed', 'time', '2026-11-26T03:02:00.000Z', null),
      row('Merchant order id', 'text', 'AMT-1', 'AMT-1'),
      row('Gateway order id', 'text', 'G-1', 'G-1'),
      row('Refund ids', 'text', 'R-1, R-2', null),
      row('Gateway trace id', 'text', null, 't-1'),
    ])
  })

  it('given several differing fields, when aligned, then they all come first in the fixed order, each once, and the sentence names the first', () => {
    const satang = { amount_satang: '9900', refunded_satang: '500', currency: 'THB', merchant_order_id: 'A-1' }
    const gateway = { amount_satang: '9900', refunded_satang: '0', currency: 'USD', merchant_order_id: 'A-1' }
    const fields = alignedFields('payment', satang, gateway)
    expect(fields).toEqual([row('Refunded amount', 'money', '500', '0', true), row('Currency', 'text', 'THB', 'USD', true), row('Amount', 'money', '9900', '9900'), row('Merchant order id', 'text', 'A-1', 'A-1')])
    expect(breakSentence(fields, 500n, 'refunds differ')).toBe('satang recorded refunded amount ฿5.00, the gateway says ฿0.00: ฿5.00 at stake.')
    expect(breakSentence(fields.slice(1), 0n, '')).toBe('satang recorded currency THB, the gateway says USD: ฿0.00 at stake.')
  })

  it('given a refund both views describe in full, when aligned, then its ids are the refund ids and it has no refunded amount', () => {
    const satang = { merchant_refund_id: 'R-1', merchant_order_id: 'O-1', amount_satang: '4000', currency: 'THB', status: { code: 'RS' }, created_at: '2026-11-26T04:00:00.000Z', refunded_satang: '4000', gateway_order_id: 'G-9' }
    const gateway = { refund_order_id: 'GR-1', merchant_order_id: 'O-1', refund_amount: '50.00', currency: 'THB', status: { code: 'RS', outcome: 'success' }, complete_time: '2026-11-26T04:01:00.000Z', trace_id: 't-2', order_id: 'G-9' }
    expect(alignedFields('refund', satang, gateway)).toEqual([
      row('Amount', 'money', '4000', '5000', true),
      row('Status', 'text', 'RS', 'RS (success)'),
      row('Currency', 'text', 'THB', 'THB'),
      row('Created', 'time', '2026-11-26T04:00:00.000Z', null),
      row('Completed', 'time', null, '2026-11-26T04:01:00.000Z'),
      row('Merchant order id', 'text', 'O-1', 'O-1'),
      row('Merchant refund id', 'text', 'R-1', null),
      row('Gateway refund id', 'text', null, 'GR-1'),
      row('Gateway trace id', 'text', null, 't-2'),
    ])
  })

  it('given a subscription break, when aligned, then it shows what happened, the date, the amount billed and the currency', () => {
    expect(alignedFields('subscription', { date: '2026-11-20', observed: 'none' }, { date: '2026-11-21', expected: 'attempt due', billing_amount_satang: '29900', currency: 'THB' })).toEqual([
      row('What happened', 'text', 'none', 'attempt due', true),
      row('Date', 'text', '2026-11-20', '2026-11-21', true),
      row('Amount billed', 'money', null, '29900'),
      row('Currency', 'text', null, 'THB'),
    ])
    expect(alignedFields('subscription', { date: '2026-11-20' }, {})).toEqual([row('Date', 'text', '2026-11-20', null)])
  })

  it('given money the gateway writes in baht, or satang digits that are not digits, when aligned, then the amount is read from the baht text', () => {
    expect(alignedFields('payment', { amount_satang: '99.00' }, { amount_satang: '90.00', order_amount: '90.00' })).toEqual([row('Amount', 'money', null, '9000')])
    expect(alignedFields('payment', {}, { order_amount: '90.5' })).toEqual([row('Amount', 'money', null, '9050')])
    expect(alignedFields('payment', {}, { order_amount: 'ninety' })).toEqual([])
    expect(alignedFields('refund', {}, { amount_satang: '123456789012345' })).toEqual([row('Amount', 'money', null, '123456789012345')])
  })

  it('given values that are not text, when aligned, then numbers, booleans, lists and objects print as text, and null, an empty list or a missing path as nothing', () => {
    const satang = { merchant_order_id: 1001, gateway_order_id: null, status: null, refund_ids: ['R-1', 2, true, null, { id: 'R-4' }, ['R-5']], currency: { code: 'THB' } }
    const gateway = { merchant_order_id: 1001, order_id: false, status: { code: 'PS' }, trace_id: [] }
    expect(alignedFields('payment', satang, gateway)).toEqual([
      row('Status', 'text', null, 'PS'),
      row('Currency', 'text', '{"code":"THB"}', null),
      row('Merchant order id', 'text', '1001', '1001'),
      row('Gateway order id', 'text', null, 'false'),
      row('Refund ids', 'text', 'R-1, 2, true, , {"id":"R-4"}, R-5', null),
    ])
    expect(alignedFields('payment', { status: { outcome: 'success' } }, { status: 'PS' })).toEqual([])
  })

  it('given a gateway that did not answer, or found nothing, when aligned and explained, then the status says why and the sentence names what satang recorded', () => {
    const noAnswer = alignedFields('payment', { amount_satang: '9900', currency: 'THB' }, { answered: false, reason: 'timeout', found: false })
    expect(noAnswer).toEqual([row('Amount', 'money', '9900', null), row('Status', 'text', null, 'no answer (timeout)'), row('Currency', 'text', 'THB', null)])
    expect(breakSentence(noAnswer, 0n, 'query failed')).toBe('satang recorded ฿99.00, the gateway gave no answer (timeout): ฿0.00 at stake.')
    const failed = alignedFields('payment', { currency: 'THB' }, { answered: false })
    expect(failed).toEqual([row('Status', 'text', null, 'no answer (failed)'), row('Currency', 'text', 'THB', null)])
    expect(breakSentence(failed, 0n, 'query failed')).toBe('satang recorded it, the gateway gave no answer (failed): ฿0.00 at stake.')
    const notFound = alignedFields('refund', { amount_satang: '4000' }, { answered: true, found: false })
    expect(notFound).toEqual([row('Amount', 'money', '4000', null), row('Status', 'text', null, 'not found')])
    expect(breakSentence(notFound, 4000n, '')).toBe('satang recorded ฿40.00, the gateway gave not found: ฿40.00 at stake.')
    const unknownOrder = alignedFields('payment', {}, { found: false, message: 'unknown order', amount_satang: '100' })
    expect(unknownOrder).toEqual([row('Amount', 'money', null, '100'), row('Status', 'text', null, 'not found: unknown order')])
    expect(breakSentence(unknownOrder, 100n, '')).toBe('satang recorded it, the gateway gave not found: unknown order: ฿1.00 at stake.')
  })

  it('given no differing field and a gateway that answered, when explained, then the sentence is the detail, its trailing dots and spaces cut', () => {
    const fields = alignedFields('payment', { status: { code: 'PS' } }, { status: { code: 'PS', outcome: 'success' } })
    expect(fields).toEqual([row('Status', 'text', 'PS', 'PS (success)')])
    expect(breakSentence(fields, 100n, 'still pending. . ')).toBe('still pending: ฿1.00 at stake.')
    expect(breakSentence([], 100n, 'no fields')).toBe('no fields: ฿1.00 at stake.')
  })
})

describe('guidance by class name', () => {
  it('given a class name, when its guidance is asked, then a known class has its guidance and any other name none', () => {
    expect(guidanceOf('amount_mismatch')).toEqual(BREAK_GUIDANCE.amount_mismatch)
    expect(guidanceOf('no_such_class')).toBeNull()
  })
})
