import { randomUUID } from 'node:crypto'
import { userInfo } from 'node:os'
import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import { closeLedgerPeriod, describeCloseFailure } from '../application/ledger-periods.ts'
import { closeViolations } from '../domain/ledger/period.ts'
import { POSTING_RULE_BOOK } from '../domain/ledger/rules.ts'
import { makeEventStore } from '../composition/database.ts'
import { merchantIdOf } from '../composition/gateway.ts'
import { EXIT, UsageError } from './io.ts'
import { configOrUsage, openMigratedDatabase, quietLogger } from './tool-config.ts'

type CloseOptions = { date?: string; by?: string; reason?: string; json?: boolean }

const CLOSE_HELP = `
Closes the double-entry ledger through an Asia/Bangkok business day: that day, and every open day
before it, are closed. A LedgerPeriodClosed event records who closed it, when, why, and the version of
the posting rules the closed days are booked by (the version this satang posts by: v${String(POSTING_RULE_BOOK.current.version)}).

From then on nothing dated in a closed day changes, also after a rebuild of the ledger and after the
posting rules change: a fact that arrives later for a closed day posts on the first open day, and a rule
change books its difference for facts of closed periods as adjustment lines on the first open day.
Closed periods never reopen. satang report ledger states which periods are closed and by which rules.

A day can be closed once it is over in Asia/Bangkok (after 24:00 +07:00), and only after the last
closed day. The projector (satang up, or satang project) applies the close to the ledger read model.

Example:
  satang ledger close --date 2026-01-31 --by "finance@shop.example" --reason "January books signed off"

Exit codes: 0 closed; 1 refused (the day is not over, or is closed already); 2 bad usage; 3 the
database failed.`

/** `satang ledger close`: closes periods of the double-entry ledger. */
export const registerLedgerCommand = (program: Command, setExitCode: (code: number) => void): void => {
  const ledger = program.command('ledger').description('the double-entry ledger: ledger close (close periods; the trial balance is satang report ledger)')
  ledger
    .command('close')
    .description('close the ledger through an Asia/Bangkok business day (its entries never change again)')
    .option('--date <yyyy-MM-dd>', 'the last Asia/Bangkok day to close (required)')
    .option('--by <name>', 'who closes it (default: cli:<your user name>)')
    .option('--reason <text>', 'why, for the record')
    .option('--json', 'print the recorded close as JSON')
    .addHelpText('after', CLOSE_HELP)
    .action(async (opts: CloseOptions) => {
      if (opts.date === undefined) throw new UsageError('--date is required: the last Asia/Bangkok day to close, yyyy-MM-dd')
      const input = { date: opts.date, closedBy: opts.by ?? `cli:${userInfo().username}`, reason: opts.reason ?? null }
      const violations = closeViolations(input)
      if (violations.length > 0) throw new UsageError(violations.map((v) => `--${v.path === 'closed_by' ? 'by' : v.path} ${v.rule}`).join('; '))
      const config = await configOrUsage()
      const merchantId = merchantIdOf(config)
      if (merchantId === undefined) throw new UsageError('SATANG_MERCHANT_ID is required when SATANG_GATEWAY_BASE_URL is set')
      const log = quietLogger(config)
      const db = await openMigratedDatabase(config, log, setExitCode)
      if (db === undefined) return
      const store = makeEventStore(config, db, log)
      try {
        const id = randomUUID()
        const closed = await closeLedgerPeriod({ store, merchantId, now: () => new Date() }, input, { correlationId: id, causationId: id, actor: input.closedBy })()
        if (E.isLeft(closed)) {
          const f = closed.left
          process.stderr.write(`satang: ${describeCloseFailure(f)}\n`)
          if (f._tag === 'InvalidClose') throw new UsageError(describeCloseFailure(f))
          setExitCode(f._tag === 'NotRecorded' ? EXIT.failure : EXIT.negative)
          return
        }
        const c = closed.right
        if (opts.json === true) {
          process.stdout.write(
            `${JSON.stringify({ from_date_bangkok: c.fromDate, through_date_bangkok: c.throughDate, rule_version: c.ruleVersion, closed_by: c.closedBy, reason: c.reason, closed_at: c.closedAt.toISOString() }, null, 2)}\n`,
          )
        } else {
          process.stdout.write(`satang: the ledger is closed through ${c.throughDate} (${c.fromDate === null ? 'every day up to it' : `${c.fromDate} to ${c.throughDate}`}), booked by posting rules v${String(c.ruleVersion)}, by ${c.closedBy}\n`)
        }
        setExitCode(EXIT.ok)
      } finally {
        await store.close()
        await db.close()
      }
    })
}
