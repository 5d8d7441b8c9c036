import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import { trialBalanceCsv } from '../adapters/report/csv.ts'
import { currencyTotals, isBalancedTotals, ledgerPeriodsJson, ledgerPeriodsText, TRIAL_BALANCE_CSV_COLUMNS, trialBalanceJson, trialBalanceText } from '../domain/ledger/report.ts'
import { parseAsOf } from '../application/as-of.ts'
import { READ_MODEL_SCHEMA, makeEventStore } from '../composition/database.ts'
import { AsOfRefused, resolveAsOf } from '../projections/as-of.ts'
import { readTrialBalanceAsOf } from '../projections/ledger/as-of.ts'
import { configOrUsage, openToolDatabase, quietLogger } from './tool-config.ts'
import { ledgerExists, readLedgerPeriods, readTrialBalance } from '../projections/ledger/reads.ts'
import { EXIT, UsageError } from './io.ts'
import { addReconciliationReport, addReportVerify } from './report-reconciliation.ts'

type LedgerReportOptions = { date?: string; currency?: string; channel?: string; json?: boolean; csv?: boolean; asOf?: string; excel?: boolean; header?: string }

const HELP_AFTER = `
Prints the trial balance of the double-entry ledger (read model "ledger", view trial_balance): one
row per account, channel and currency with total debits, credits and the balance (debits minus
credits), then a totals line per currency showing debits = credits. Amounts are baht with two
decimals (--json and --csv also give satang).

Then the periods: which Asia/Bangkok business days are closed (satang ledger close), by whom, when and
by which version of the posting rules, where the open period starts and which rule version it is
posted by, and how many adjustment lines book rule changes for facts of closed periods (--json: the
key "periods"; --csv leaves them out). Closed periods are as the ledger holds them now, also with --as-of.

Reads the database configured by SATANG_* (see docs/operations.md "Configuration"): SATANG_DATABASE_URL, or the
embedded PostgreSQL of satang up. Exit codes: 0 printed and balanced; 1 the ledger does not exist yet
(run satang migrate / satang up first) or is not balanced; 2 bad usage; 3 the database failed.`

/** `satang report`, with its subcommand `ledger` (other reports add theirs to the command returned). */
export const registerReportCommand = (program: Command, setExitCode: (code: number) => void): Command => {
  const report = program.command('report').description('finance reports from the read models: report ledger (the trial balance), report reconciliation, report verify')
  addLedgerReport(report, setExitCode)
  addReconciliationReport(report, setExitCode)
  addReportVerify(report, setExitCode)
  return report
}

/** `satang report ledger`: the trial balance, as a table, JSON or CSV. */
export const addLedgerReport = (report: Command, setExitCode: (code: number) => void): void => {
  report
    .command('ledger')
    .description('print the trial balance of the double-entry ledger (accounts per channel and currency; debits = credits)')
    .option('--date <yyyy-MM-dd>', 'balances as of the end of this Asia/Bangkok date (default: every entry)')
    .option('--currency <code>', 'only this currency, e.g. THB')
    .option('--channel <channel>', 'only this channel, e.g. svc.thaiqr.pay, subscription or unknown')
    .option('--json', 'print JSON: the body GET /v1/ledger/balances answers')
    .option('--csv', `print CSV with a header row: ${TRIAL_BALANCE_CSV_COLUMNS.join(',')}`)
    .option('--excel', 'with --csv: start with the UTF-8 byte order mark, for Excel (default: none)')
    .option('--header <machine|human>', 'with --csv: column names (machine, default) or readable headers (human)')
    .option('--as-of <instant|position>', 'the trial balance as the event log stood at an instant (ISO-8601 with its offset) or a global log position')
    .addHelpText('after', HELP_AFTER)
    .action(async (opts: LedgerReportOptions) => {
      if (opts.json === true && opts.csv === true) throw new UsageError('--json and --csv exclude each other: choose one')
      if (opts.header !== undefined && opts.header !== 'machine' && opts.header !== 'human') throw new UsageError(`--header ${JSON.stringify(opts.header)}: must be machine or human`)
      if ((opts.excel === true || opts.header !== undefined) && opts.csv !== true) throw new UsageError('--excel and --header shape the CSV: give --csv')
      // Loaded here: the HTTP adapter (fastify, OpenAPI) is no part of the other reports.
      const { balanceScopeOf } = await import('../adapters/http/ledger-routes.ts')
      const scope = balanceScopeOf({
        ...(opts.date === undefined ? {} : { date: opts.date }),
        ...(opts.currency === undefined ? {} : { currency: opts.currency }),
        ...(opts.channel === undefined ? {} : { channel: opts.channel }),
      })
      if (E.isLeft(scope)) throw new UsageError(scope.left.map((v) => `--${v.path} ${v.rule}`).join('; '))
      const asOfRequest = opts.asOf === undefined ? undefined : parseAsOf(opts.asOf)
      if (asOfRequest !== undefined && E.isLeft(asOfRequest)) throw new UsageError(`--as-of ${JSON.stringify(opts.asOf)}: ${asOfRequest.left}`)

      const config = await configOrUsage()
      const log = quietLogger(config)
      const db = await openToolDatabase(config, log, setExitCode)
      if (db === undefined) return
      try {
        if (!(await ledgerExists(db.pool, READ_MODEL_SCHEMA))) {
          process.stderr.write(`satang: the ledger read model does not exist yet (no table ${READ_MODEL_SCHEMA}.ledger_entries): run satang migrate / satang up first\n`)
          setExitCode(EXIT.negative)
          return
        }
        let rows
        let asOfLog: { readonly requested: string; readonly position: string | null; readonly instant: string } | null = null
        if (asOfRequest === undefined) rows = await readTrialBalance({ pool: db.pool, schema: READ_MODEL_SCHEMA }, scope.right)
        else {
          const store = makeEventStore(config, db, log)
          try {
            const asOf = await resolveAsOf({ store, pool: db.pool }, READ_MODEL_SCHEMA, asOfRequest.right, new Date()).catch((e: unknown) => {
              if (e instanceof AsOfRefused) throw new UsageError(`--as-of: ${e.message}`)
              throw e
            })
            rows = await readTrialBalanceAsOf({ store, pool: db.pool }, READ_MODEL_SCHEMA, scope.right, asOf.position)
            asOfLog = { requested: asOf.requested, position: asOf.position, instant: asOf.instant.toISOString() }
          } finally {
            await store.close()
          }
        }
        const periods = await readLedgerPeriods({ pool: db.pool, schema: READ_MODEL_SCHEMA })
        if (opts.json === true) process.stdout.write(`${JSON.stringify({ ...trialBalanceJson(rows, scope.right), periods: ledgerPeriodsJson(periods), ...(asOfLog === null ? {} : { as_of_log: asOfLog }) }, null, 2)}\n`)
        else if (opts.csv === true) process.stdout.write(trialBalanceCsv(rows, { bom: opts.excel === true, header: opts.header === 'human' ? 'human' : 'machine' }))
        else process.stdout.write(`${asOfLog === null ? '' : `As the event log stood at ${asOfLog.requested} (up to position ${asOfLog.position ?? 'none: the log was empty'})\n`}${trialBalanceText(rows, scope.right)}\n${ledgerPeriodsText(periods)}`)
        const balanced = isBalancedTotals(currencyTotals(rows))
        if (!balanced) process.stderr.write('satang: the trial balance is NOT balanced (debits ≠ credits): report this as a defect\n')
        setExitCode(balanced ? EXIT.ok : EXIT.negative)
      } catch (e) {
        if (e instanceof UsageError) throw e
        process.stderr.write(`satang: the ledger could not be read (${e instanceof Error ? e.message : 'database error'})\n`)
        setExitCode(EXIT.failure)
      } finally {
        await db.close()
      }
    })
}
