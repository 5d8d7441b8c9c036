import { stringify } from 'csv-stringify/sync'
import { humanHeader } from '../../domain/reconciliation/report/csv.ts'
import { TRIAL_BALANCE_CSV_COLUMNS, TRIAL_BALANCE_CSV_NUMERIC, trialBalanceCsvRecords, type BalanceRow } from '../../domain/ledger/report.ts'

/*
 * Every CSV satang writes (report reconciliation --csv/--out, report ledger --csv, the console's
 * ledger.csv) goes through `csvText`, so that no cell opens as a formula in a spreadsheet: a merchant
 * order id such as `-1-1` would show as -2, `=HYPERLINK(…)` as a link. A text cell that starts with
 * `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (the spreadsheet convention for
 * "this is text"); a cell of a numeric column that is a plain decimal number (`-100`, `-1.00`) is left
 * alone, so amounts and counts stay numbers. As OWASP's CSV injection advice has it, a neutralised cell is
 * also enclosed in double quotes (its own quotes doubled), so no reader splits it or drops the `'`.
 *
 * Options: `bom` (`--excel`) starts the text with the UTF-8 byte order mark, so Excel reads Thai text as
 * UTF-8 (without it, Excel assumes the machine's code page); `header: 'human'` writes readable headers
 * (`Payments matched (THB)`) instead of the column names (`payments_matched`).
 */

const FORMULA_START = /^[=+\-@\t\r]/
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/

/** `cell` as a spreadsheet reads it as text: prefixed with `'` when it would start a formula. */
export const neutraliseCell = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell)

export type CsvSheet = {
  readonly columns: ReadonlyArray<string>
  /** Columns of numbers (amounts, counts): their plain decimal numbers are written as they are. */
  readonly numeric: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

export type CsvOptions = {
  /** Start with the UTF-8 byte order mark (for Excel). Default: no mark. */
  readonly bom?: boolean
  /** `machine` (default): the column names; `human`: readable headers. */
  readonly header?: 'machine' | 'human'
}

export const BOM = '\uFEFF'

/** The sheet as CSV with a header row, every text cell neutralised. */
export const csvText = (sheet: CsvSheet, options: CsvOptions = {}): string => {
  const numeric = sheet.columns.map((c) => sheet.numeric.includes(c))
  const rows = sheet.rows.map((row) => row.map((cell, i) => (numeric[i] === true && PLAIN_NUMBER.test(cell) ? cell : neutraliseCell(cell))))
  const header = options.header === 'human' ? sheet.columns.map(humanHeader) : sheet.columns
  const text = stringify(rows, { header: true, columns: header.map(neutraliseCell), quoted_match: NEUTRALISED })
  return options.bom === true ? `${BOM}${text}` : text
}

/** A cell `neutraliseCell` prefixed: always written in double quotes. */
const NEUTRALISED = /^'[=+\-@\t\r]/

/** The trial balance as CSV (`satang report ledger --csv` and the console's ledger.csv). */
export const trialBalanceCsv = (rows: ReadonlyArray<BalanceRow>, options: CsvOptions = {}): string =>
  csvText({ columns: TRIAL_BALANCE_CSV_COLUMNS, numeric: TRIAL_BALANCE_CSV_NUMERIC, rows: trialBalanceCsvRecords(rows) }, options)
