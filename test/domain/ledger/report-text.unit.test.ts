import { describe, expect, it } from 'vitest'
import { currencyTotals, isBalancedTotals, ledgerPeriodsJson, ledgerPeriodsText, satangNumber, trialBalanceCsvRecords, trialBalanceJson, trialBalanceText, type BalanceRow, type LedgerPeriods } from '../../../src/domain/ledger/report.ts'

/** The trial balance and the periods as reports show them, compared whole. */

const rows: ReadonlyArray<BalanceRow> = [
  { account: 'gateway_receivable', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 35000n, credit: 4000n },
  { account: 'refunds', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 4000n, credit: 0n },
  { account: 'sales', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 0n, credit: 35000n },
]

describe('the trial balance, whole', () => {
  it('the human table: title with every filter, aligned columns, a rule, totals and the balance line', () => {
    expect(trialBalanceText(rows, { date: '2026-01-05', currency: 'THB', channel: 'svc.thaiqr.pay' })).toBe(
      [
        'Trial balance, as of the end of 2026-01-05 (Asia/Bangkok; entries posted before 2026-01-05T17:00:00.000Z), currency THB, channel svc.thaiqr.pay',
        '',
        'ACCOUNT             CHANNEL         CURRENCY   DEBIT  CREDIT  BALANCE',
        '------------------  --------------  --------  ------  ------  -------',
        'gateway_receivable  svc.thaiqr.pay  THB       350.00   40.00   310.00',
        'refunds             svc.thaiqr.pay  THB        40.00    0.00    40.00',
        'sales               svc.thaiqr.pay  THB         0.00  350.00  -350.00',
        '------------------  --------------  --------  ------  ------  -------',
        'TOTAL                               THB       390.00  390.00     0.00',
        'THB: debits = credits (390.00)',
        '',
      ].join('\n'),
    )
  })

  it('an empty ledger: the header, no entries, nothing posted', () => {
    expect(trialBalanceText([], { date: null, currency: null, channel: null })).toBe(
      ['Trial balance, all entries', '', 'ACCOUNT  CHANNEL  CURRENCY  DEBIT  CREDIT  BALANCE', '-------  -------  --------  -----  ------  -------', '(no ledger entries)', '-------  -------  --------  -----  ------  -------', 'debits = credits (nothing posted)', ''].join('\n'),
    )
  })

  it('totals per currency in alphabetical order, each balanced or not', () => {
    const mixed: ReadonlyArray<BalanceRow> = [
      { account: 'sales', channel: 'c', currency: 'USD', debit: 0n, credit: 5n },
      { account: 'gateway_receivable', channel: 'c', currency: 'THB', debit: 7n, credit: 0n },
      { account: 'gateway_receivable', channel: 'c', currency: 'USD', debit: 5n, credit: 0n },
      { account: 'sales', channel: 'c', currency: 'EUR', debit: 0n, credit: 1n },
    ]
    expect(currencyTotals(mixed)).toEqual([
      { currency: 'EUR', debit: 0n, credit: 1n },
      { currency: 'THB', debit: 7n, credit: 0n },
      { currency: 'USD', debit: 5n, credit: 5n },
    ])
    expect(isBalancedTotals(currencyTotals(mixed))).toBe(false)
    expect(isBalancedTotals([{ currency: 'USD', debit: 5n, credit: 5n }, { currency: 'THB', debit: 1n, credit: 0n }])).toBe(false)
    expect(isBalancedTotals([{ currency: 'USD', debit: 5n, credit: 5n }])).toBe(true)
    expect(isBalancedTotals([])).toBe(true)
    const text = trialBalanceText(mixed, { date: null, currency: null, channel: null })
    expect(text.split('\n').slice(-4)).toEqual(['EUR: NOT BALANCED: debits 0.00 ≠ credits 0.01', 'THB: NOT BALANCED: debits 0.07 ≠ credits 0.00', 'USD: debits = credits (0.05)', ''])
    const json = trialBalanceJson(mixed, { date: null, currency: 'USD', channel: null })
    expect(json['as_of']).toEqual({ date_bangkok: null, until_utc: null })
    expect(json['balanced']).toBe(false)
    expect(json['totals']).toEqual([
      { currency: 'EUR', debit_satang: 0, credit_satang: 1, balance_satang: -1, debit: '0.00', credit: '0.01', balance: '-0.01', balanced: false },
      { currency: 'THB', debit_satang: 7, credit_satang: 0, balance_satang: 7, debit: '0.07', credit: '0.00', balance: '0.07', balanced: false },
      { currency: 'USD', debit_satang: 5, credit_satang: 5, balance_satang: 0, debit: '0.05', credit: '0.05', balance: '0.00', balanced: true },
    ])
  })

  it('an account the chart does not know has no normal side', () => {
    expect(trialBalanceCsvRecords([{ account: 'suspense', channel: 'c', currency: 'THB', debit: 1n, credit: 0n }])).toEqual([['suspense', '', 'c', 'THB', '1', '0', '1', '0.01', '0.00', '0.01']])
  })

  it('the refusal of satang beyond JSON numbers names the amount', () => {
    expect(() => satangNumber(-9_007_199_254_740_992n)).toThrow(new RangeError('-9007199254740992 satang is beyond what JSON numbers hold exactly'))
  })
})

describe('the periods, whole', () => {
  const periods: LedgerPeriods = {
    closed: [
      { eventId: 'ev-1', fromDate: null, throughDate: '2026-01-31', ruleVersion: 1, closedBy: 'ops', reason: null, closedAt: new Date('2026-02-01T03:00:00.000Z') },
      { eventId: 'ev-2', fromDate: '2026-02-01', throughDate: '2026-02-28', ruleVersion: 2, closedBy: 'finance-lead', reason: 'month end', closedAt: new Date('2026-03-01T03:00:00.000Z') },
    ],
    openRulesVersion: 2,
    adjustmentLines: 3,
  }

  it('JSON: every closed period, what is closed and what is open', () => {
    expect(ledgerPeriodsJson(periods)).toEqual({
      closed: [
        { from_date_bangkok: null, through_date_bangkok: '2026-01-31', rule_version: 1, closed_by: 'ops', reason: null, closed_at: '2026-02-01T03:00:00.000Z', event_id: 'ev-1' },
        { from_date_bangkok: '2026-02-01', through_date_bangkok: '2026-02-28', rule_version: 2, closed_by: 'finance-lead', reason: 'month end', closed_at: '2026-03-01T03:00:00.000Z', event_id: 'ev-2' },
      ],
      closed_through_bangkok: '2026-02-28',
      open_from_bangkok: '2026-03-01',
      open_rule_version: 2,
      adjustment_lines: 3,
    })
    expect(ledgerPeriodsJson({ closed: [], openRulesVersion: null, adjustmentLines: 0 })).toEqual({ closed: [], closed_through_bangkok: null, open_from_bangkok: null, open_rule_version: null, adjustment_lines: 0 })
  })

  it('text: the table of closed periods and the open one', () => {
    expect(ledgerPeriodsText(periods)).toBe(
      [
        'Periods (Asia/Bangkok business days): closed through 2026-02-28',
        'FROM        THROUGH     RULES  CLOSED BY     CLOSED AT (UTC)           REASON',
        '(first)     2026-01-31  v1     ops           2026-02-01T03:00:00.000Z',
        '2026-02-01  2026-02-28  v2     finance-lead  2026-03-01T03:00:00.000Z  month end',
        'open from 2026-03-01, posted by posting rules v2; 3 adjustment lines book rule changes for facts of closed periods',
        '',
      ].join('\n'),
    )
  })

  it('text: nothing closed; no rule version known; no adjustments', () => {
    expect(ledgerPeriodsText({ closed: [], openRulesVersion: 1, adjustmentLines: 0 })).toBe('Periods (Asia/Bangkok business days): none closed; every day is open, posted by posting rules v1\n')
    expect(ledgerPeriodsText({ closed: [], openRulesVersion: null, adjustmentLines: 0 })).toBe('Periods (Asia/Bangkok business days): none closed; every day is open\n')
    const first = periods.closed[0]
    if (first === undefined) throw new Error('no period')
    expect(ledgerPeriodsText({ closed: [first], openRulesVersion: null, adjustmentLines: 0 }).split('\n').slice(-2)).toEqual(['open from 2026-02-01', ''])
  })
})
