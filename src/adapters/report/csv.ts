import { stringify } from 'csv-stringify/sync'
import { TRIAL_BALANCE_CSV_COLUMNS, TRIAL_BALANCE_CSV_NUMERIC, trialBalanceCsvRecords, type BalanceRow } from '../../domain/ledger/report.ts'

/*
 * Every CSV satang writes (report reconciliation --csv/--out, report ledger --csv, the console's
 * ledger.csv) goes through `csvText`, so that no cell opens as a formula in a spreadsheet: a merchant
 * order id such as `-1-1` would show as -2, `=HYPERLINK(…)` as a link. A text cell that starts with
 * `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (the spreadsheet convention for
 * "this is text"); a cell of a numeric column that is a plain decimal number (`-100`, `-1.00`) is left
 * alone, so amounts and counts stay numbers.
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

/** The sheet as CSV with a header row, every text cell neutralised. */
export const csvText = (sheet: CsvSheet): string => {
  const numeric = sheet.columns.map((c) => sheet.numeric.includes(c))
  const rows = sheet.rows.map((row) => row.map((cell, i) => (numeric[i] === true && PLAIN_NUMBER.test(cell) ? cell : neutraliseCell(cell))))
  return stringify(rows, { header: true, columns: sheet.columns.map(neutraliseCell) })
}

/** The trial balance as CSV (`satang report ledger --csv` and the console's ledger.csv). */
export const trialBalanceCsv = (rows: ReadonlyArray<BalanceRow>): string => csvText({ columns: TRIAL_BALANCE_CSV_COLUMNS, numeric: TRIAL_BALANCE_CSV_NUMERIC, rows: trialBalanceCsvRecords(rows) })
