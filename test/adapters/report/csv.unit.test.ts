import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BOM, csvText, neutraliseCell, trialBalanceCsv } from '../../../src/adapters/report/csv.ts'
import { COLUMN_DICTIONARY, csvTables } from '../../../src/domain/reconciliation/report/csv.ts'
import { TRIAL_BALANCE_CSV_COLUMNS } from '../../../src/domain/ledger/report.ts'

/** The one CSV writer of satang (report reconciliation, report ledger, the console's ledger.csv). */

describe('csvText', () => {
  it('prefixes a text cell starting with =, +, -, @, tab or CR with a quote; leaves other text alone', () => {
    for (const cell of ['=1+1', '+66', '-1-1', '@SUM(A1)', '\tx', '\rx']) expect(neutraliseCell(cell)).toBe(`'${cell}`)
    for (const cell of ['', 'PAID-1', "'quoted", ' =spaced', '1-1']) expect(neutraliseCell(cell)).toBe(cell)
  })

  it('a numeric column keeps its plain numbers (negative too) and neutralises anything else in it', () => {
    const text = csvText({ columns: ['id', 'amount'], numeric: ['amount'], rows: [['-1', '-1.00'], ['=2', '=1+1'], ['3', '12']] })
    expect(text).toBe(['id,amount', `"'-1",-1.00`, `"'=2","'=1+1"`, '3,12', ''].join('\n'))
  })

  it('the trial balance (report ledger --csv and the console ledger.csv): text neutralised, amounts plain', () => {
    const text = trialBalanceCsv([{ account: 'gateway_receivable', channel: '@evil', currency: 'THB', debit: 0n, credit: 100n }])
    expect(text).toBe(['account,normal_balance,channel,currency,debit_satang,credit_satang,balance_satang,debit,credit,balance', `gateway_receivable,debit,"'@evil",THB,0,100,-100,0.00,1.00,-1.00`, ''].join('\n'))
  })

  it('OWASP: a formula is prefixed with a quote and enclosed in double quotes, its own quotes doubled; a customer name +1-2 too', () => {
    const text = csvText({ columns: ['merchant_order_id', 'customer', 'amount_satang', 'amount'], numeric: ['amount_satang', 'amount'], rows: [['=HYPERLINK("http://x","y")', '+1-2', '-900', '-9.00']] })
    expect(text.split('\n')[1]).toBe(`"'=HYPERLINK(""http://x"",""y"")","'+1-2",-900,-9.00`)
  })

  it('--excel starts with the UTF-8 byte order mark; the default does not; Thai text is written as UTF-8', () => {
    const sheet = { columns: ['detail'], numeric: [], rows: [['ชำระเงินแล้ว']] }
    const excel = csvText(sheet, { bom: true })
    expect(Buffer.from(excel, 'utf8').subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]))
    expect(excel).toBe(`${BOM}detail\nชำระเงินแล้ว\n`)
    expect(csvText(sheet).startsWith(BOM)).toBe(false)
  })

  it('--header human writes readable headers; every column of every CSV satang writes has one and a meaning', () => {
    expect(csvText({ columns: ['payments_matched', 'reconciled_at_bangkok'], numeric: [], rows: [] }, { header: 'human' })).toBe('Payments matched (THB),Reconciled at (Bangkok)\n')
    const empty = { merchantId: 'm', from: '2026-11-01', to: '2026-11-01', generatedAt: new Date(0), asOf: { instant: new Date(0), position: null, requested: null }, days: [], openBreaks: [], healed: [], ledger: { date: '2026-11-01', receivable: 0n, expected: { paidOrders: 0n, charges: 0n, refunds: 0n, total: 0n } }, sources: { runs: [], checkpoints: {}, logPosition: null } }
    const columns = [...csvTables(empty).flatMap((t) => t.columns), ...TRIAL_BALANCE_CSV_COLUMNS]
    for (const c of columns) {
      expect(COLUMN_DICTIONARY[c]?.human, c).toBeTruthy()
      expect(COLUMN_DICTIONARY[c]?.meaning, c).toBeTruthy()
    }
  })
})

describe('docs/finance.md "CSV columns"', () => {
  it('lists every column with its readable header', () => {
    const docs = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'finance.md'), 'utf8')
    const section = docs.slice(docs.indexOf('### CSV columns'), docs.indexOf('### Read models'))
    for (const [column, doc] of Object.entries(COLUMN_DICTIONARY)) expect(section, column).toContain(`| \`${column}\` | ${doc.human} |`)
  })
})
