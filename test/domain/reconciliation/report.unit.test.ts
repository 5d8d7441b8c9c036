import { describe, expect, it } from 'vitest'
import { BREAK_CLASSES } from '../../../src/domain/reconciliation/break-class.ts'
import { ageingOf, dayFigures, money, periodVerdict, sumFigures } from '../../../src/domain/reconciliation/report/model.ts'
import type { CheckedItem } from '../../../src/domain/reconciliation/events/index.ts'

const item = (o: Partial<CheckedItem>): CheckedItem => ({ kind: 'payment', id: 'A', day: '2026-11-20', outcome: 'matched', breakClass: null, breakId: null, amount: 1000n, atStake: 0n, ...o })

describe('the reconciliation report model', () => {
  it('counts and amounts per outcome and per break class; unchecked items count as query_failed', () => {
    const f = dayFigures([
      item({}),
      item({ id: 'B', amount: 2500n }),
      item({ id: 'C', outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b', amount: 10000n, atStake: 2000n }),
      item({ id: 'D', outcome: 'unchecked', breakClass: 'query_failed', breakId: 'q', amount: 700n }),
      item({ id: 'E', outcome: 'acknowledged', breakClass: 'stale_pending', breakId: 's', amount: 300n }),
    ])
    expect(f.outcomes.matched).toEqual({ count: 2, amount: 3500n })
    expect(f.outcomes.break).toEqual({ count: 1, amount: 10000n })
    expect(f.outcomes.unchecked).toEqual({ count: 1, amount: 700n })
    expect(f.classes['amount_mismatch']).toEqual({ count: 1, amount: 10000n, atStake: 2000n })
    expect(f.classes['query_failed']).toEqual({ count: 1, amount: 700n, atStake: 0n })
    // an acknowledged break is closed: not counted in its class
    expect(f.classes['stale_pending']).toEqual({ count: 0, amount: 0n, atStake: 0n })
    expect(f.atStake).toBe(2000n)
    expect(sumFigures([f, f]).outcomes.matched).toEqual({ count: 4, amount: 7000n })
  })

  it('the period takes its most serious day; a day no run covered is not_reconciled', () => {
    expect(periodVerdict([{ verdict: 'reconciled' }, { verdict: 'breaks' }, { verdict: 'reconciled_with_pending' }])).toBe('breaks')
    expect(periodVerdict([{ verdict: 'breaks' }, { verdict: 'incomplete' }])).toBe('incomplete')
    expect(periodVerdict([{ verdict: 'reconciled' }, { verdict: null }])).toBe('not_reconciled')
  })

  it('ageing: by class in the class order, then by bucket', () => {
    expect(
      ageingOf([
        { class: 'stale_pending', ageBucket: '>30', atStake: 5n },
        { class: 'amount_mismatch', ageBucket: '2-7', atStake: 1n },
        { class: 'amount_mismatch', ageBucket: '0-1', atStake: 2n },
        { class: 'amount_mismatch', ageBucket: '0-1', atStake: 3n },
      ]),
    ).toEqual([
      { class: 'amount_mismatch', bucket: '0-1', count: 2, atStake: 5n },
      { class: 'amount_mismatch', bucket: '2-7', count: 1, atStake: 1n },
      { class: 'stale_pending', bucket: '>30', count: 1, atStake: 5n },
    ])
  })

  it('given two breaks of one class on a day and an unchecked item with no class, when counted, then the class adds both and no other class appears', () => {
    const f = dayFigures([
      item({ id: 'C', outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b1', amount: 10000n, atStake: 2000n }),
      item({ id: 'D', outcome: 'break', breakClass: 'amount_mismatch', breakId: 'b2', amount: 500n, atStake: 100n }),
      item({ id: 'E', outcome: 'unchecked', breakClass: null, amount: 700n }),
    ])
    const none = Object.fromEntries(BREAK_CLASSES.map((c) => [c, { count: 0, amount: 0n, atStake: 0n }]))
    expect(f.classes).toEqual({ ...none, amount_mismatch: { count: 2, amount: 10500n, atStake: 2100n } })
    expect(sumFigures([f, f]).classes).toEqual({ ...none, amount_mismatch: { count: 4, amount: 21000n, atStake: 4200n } })
  })

  it('given no day at all, when the period is judged, then it is not reconciled', () => {
    expect(periodVerdict([])).toBe('not_reconciled')
  })

  it('given breaks whose class order is not their age order, when aged, then the class order comes first', () => {
    expect(
      ageingOf([
        { class: 'stale_pending', ageBucket: '0-1', atStake: 5n },
        { class: 'amount_mismatch', ageBucket: '>30', atStake: 1n },
      ]),
    ).toEqual([
      { class: 'amount_mismatch', bucket: '>30', count: 1, atStake: 1n },
      { class: 'stale_pending', bucket: '0-1', count: 1, atStake: 5n },
    ])
  })

  it('given an amount, when shown as money, then satang digits and baht are side by side', () => {
    expect([money(12345n), money(-900n)]).toEqual([
      { satang: '12345', baht: '123.45' },
      { satang: '-900', baht: '-9.00' },
    ])
  })
})
