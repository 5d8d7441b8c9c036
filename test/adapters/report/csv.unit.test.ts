import { describe, expect, it } from 'vitest'
import { csvText, neutraliseCell, trialBalanceCsv } from '../../../src/adapters/report/csv.ts'

/** The one CSV writer of satang (report reconciliation, report ledger, the console's ledger.csv). */

describe('csvText', () => {
  it('prefixes a text cell starting with =, +, -, @, tab or CR with a quote; leaves other text alone', () => {
    for (const cell of ['=1+1', '+66', '-1-1', '@SUM(A1)', '\tx', '\rx']) expect(neutraliseCell(cell)).toBe(`'${cell}`)
    for (const cell of ['', 'PAID-1', "'quoted", ' =spaced', '1-1']) expect(neutraliseCell(cell)).toBe(cell)
  })

  it('a numeric column keeps its plain numbers (negative too) and neutralises anything else in it', () => {
    const text = csvText({ columns: ['id', 'amount'], numeric: ['amount'], rows: [['-1', '-1.00'], ['=2', '=1+1'], ['3', '12']] })
    expect(text).toBe(["id,amount", "'-1,-1.00", "'=2,'=1+1", '3,12', ''].join('\n'))
  })

  it('the trial balance (report ledger --csv and the console ledger.csv): text neutralised, amounts plain', () => {
    const text = trialBalanceCsv([{ account: 'gateway_receivable', channel: '@evil', currency: 'THB', debit: 0n, credit: 100n }])
    expect(text).toBe(['account,normal_balance,channel,currency,debit_satang,credit_satang,balance_satang,debit,credit,balance', "gateway_receivable,debit,'@evil,THB,0,100,-100,0.00,1.00,-1.00", ''].join('\n'))
  })
})
