import { describe, expect, it } from 'vitest'
import { currencyTotals, endOfBangkokDay, satangNumber, trialBalanceCsvRecords, trialBalanceJson, trialBalanceText, type BalanceRow } from '../../../src/domain/ledger/report.ts'

const rows: ReadonlyArray<BalanceRow> = [
  { account: 'gateway_receivable', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 35000n, credit: 4000n },
  { account: 'refunds', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 4000n, credit: 0n },
  { account: 'sales', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 0n, credit: 35000n },
]
const all = { date: null, currency: null, channel: null }

describe('the trial balance as reports show it', () => {
  it('a Bangkok date ends at 17:00 UTC', () => {
    expect(endOfBangkokDay('2026-01-05').toISOString()).toBe('2026-01-05T17:00:00.000Z')
    expect(endOfBangkokDay('2024-02-29').toISOString()).toBe('2024-02-29T17:00:00.000Z')
  })

  it('totals per currency say whether debits = credits', () => {
    expect(currencyTotals(rows)).toEqual([{ currency: 'THB', debit: 39000n, credit: 39000n }])
  })

  it('JSON: satang as numbers and baht as text, balance = debit - credit, the normal side of each account', () => {
    const json = trialBalanceJson(rows, { date: '2026-01-05', currency: null, channel: 'svc.thaiqr.pay' })
    expect(json['as_of']).toEqual({ date_bangkok: '2026-01-05', until_utc: '2026-01-05T17:00:00.000Z' })
    expect(json['filters']).toEqual({ currency: null, channel: 'svc.thaiqr.pay' })
    expect(json['balanced']).toBe(true)
    expect((json['balances'] as ReadonlyArray<unknown>)[0]).toEqual({
      account: 'gateway_receivable',
      normal_balance: 'debit',
      channel: 'svc.thaiqr.pay',
      currency: 'THB',
      debit_satang: 35000,
      credit_satang: 4000,
      balance_satang: 31000,
      debit: '350.00',
      credit: '40.00',
      balance: '310.00',
    })
    expect((json['balances'] as ReadonlyArray<Record<string, unknown>>)[2]?.['balance']).toBe('-350.00')
    expect(json['totals']).toEqual([{ currency: 'THB', debit_satang: 39000, credit_satang: 39000, balance_satang: 0, debit: '390.00', credit: '390.00', balance: '0.00', balanced: true }])
  })

  it('the human table aligns amounts and ends with the totals and debits = credits', () => {
    const text = trialBalanceText(rows, all)
    expect(text).toMatch(/^Trial balance, all entries\n/)
    expect(text).toMatch(/^gateway_receivable\s+svc\.thaiqr\.pay\s+THB\s+350\.00\s+40\.00\s+310\.00$/m)
    expect(text).toMatch(/^TOTAL\s+THB\s+390\.00\s+390\.00\s+0\.00$/m)
    expect(text).toMatch(/^THB: debits = credits \(390\.00\)$/m)
    const lines = text.split('\n').filter((l) => /\d\.\d\d$/.test(l))
    expect(new Set(lines.map((l) => l.length)).size).toBe(1)
  })

  it('an unbalanced total is called out, an empty ledger says so', () => {
    expect(trialBalanceText([{ account: 'sales', channel: 'x', currency: 'THB', debit: 0n, credit: 1n }], all)).toMatch(/THB: NOT BALANCED: debits 0\.00 ≠ credits 0\.01/)
    expect(trialBalanceText([], all)).toMatch(/\(no ledger entries\)[\s\S]*debits = credits \(nothing posted\)/)
  })

  it('CSV records carry satang and baht columns', () => {
    expect(trialBalanceCsvRecords(rows)[2]).toEqual(['sales', 'credit', 'svc.thaiqr.pay', 'THB', '0', '35000', '-35000', '0.00', '350.00', '-350.00'])
  })

  it('satang beyond what JSON numbers hold exactly are refused rather than rounded', () => {
    expect(satangNumber(9_007_199_254_740_991n)).toBe(9_007_199_254_740_991)
    expect(() => satangNumber(9_007_199_254_740_992n)).toThrow(RangeError)
  })
})
