import { randomUUID } from 'node:crypto'
import { userInfo } from 'node:os'
import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import { parseInstant } from '../application/as-of.ts'
import { acknowledgeBreak, acknowledgementViolations } from '../application/reconciliation-acknowledge.ts'
import { bangkokDateOf, formatCalendarDate, parseCalendarDate } from '../domain/bangkok-time.ts'
import { daysBetween, reconcile, type ReconcileFailure, type ScopeRequest } from '../jobs/reconcile/reconcile.ts'
import type { Verdict } from '../domain/reconciliation/verdict.ts'
import { StartupError } from '../composition/startup.ts'
import { makeEventStore, type Database } from '../composition/database.ts'
import { merchantIdOf, statusTables } from '../composition/gateway.ts'
import type { Config } from '../config.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import type { Logger } from '../logger.ts'
import { makeAnchorWriter } from '../composition/anchors.ts'
import { makeReconcileDeps, reconcilePolicyOf, waitForReadModels } from '../composition/reconciliation.ts'
import { EXIT, UsageError } from './io.ts'
import { connectGatewayForTool } from './reconcile-gateway.ts'
import { progressLine, summaryText } from './reconcile-text.ts'
import { afterWindow, beforeWindow, earliestReconcilableDay, firstEventAt, latestReconcilableDay } from './reconcile-window.ts'
import { configOrUsage, openMigratedDatabase, quietLogger } from './tool-config.ts'
import { makeReconciliationQueries } from '../projections/reconciliation/queries.ts'
import { READ_MODEL_SCHEMA } from '../projections/index.ts'

type ReconcileOptions = { date?: string; from?: string; to?: string; concurrency?: string; dryRun?: boolean; json?: boolean; asOf?: string; progress?: boolean }
type AckOptions = { reason?: string; actor?: string; json?: boolean }

const HELP_AFTER = `
Compares what satang recorded with what the gateway answers to payment and refund queries, for the
orders and refunds created on the Bangkok business day(s) in scope plus every order or refund still
not final and every break still open; subscriptions are checked against what their plan made due.
What the gateway's answer proves and satang missed (a notification that never arrived) is healed
through the normal rules; what cannot be healed is a break, tracked until resolved or acknowledged.
Every gateway answer a verdict rests on is recorded on the item's stream (source reconciliation); the
run itself is the stream reconciliation-<merchant_id>-<run_id>. A run killed half-way is resumed by the
next run of the same scope (or superseded by one of another scope): no item is counted twice.

Reads the configuration of satang up (SATANG_*; see docs/operations.md "Configuration"), keeps the read models
current while it runs, and queries the configured gateway (with the built-in sandbox: the one satang
up runs). One run at a time per merchant: a second one exits 3. A day after tomorrow (Asia/Bangkok),
or before the day of the first event in the event log (yesterday when that is earlier), is refused
(exit 2): nothing can be known about it.

Exit codes:
  0  reconciled, or reconciled with items still legitimately pending
  1  breaks are open
  2  bad usage or configuration
  3  incomplete (an item could not be checked), interrupted, or a runtime failure

Examples:
  satang reconcile                          # yesterday (Asia/Bangkok)
  satang reconcile --date 2026-01-31 --json
  satang reconcile --from 2026-01-01 --to 2026-01-31 --concurrency 32
  satang reconcile ack 6f1c…-… --reason "bank fee agreed with the gateway"`

const ACK_HELP = `
Closes an open break (status new or persisting) with a reason: the actor and the reason become a
ReconciliationBreakAcknowledged event; the break's status becomes acknowledged and later runs that
still see the same inconsistency leave it closed. Acknowledging again changes nothing.

Exit codes: 0 acknowledged (or already was); 1 no such break, or it is resolved; 2 bad usage; 3 the
database or event log failed.`

/** The option or argument of `satang reconcile ack` that each field of an acknowledgement comes from. */
const ACK_OPTIONS: Readonly<Record<string, string>> = { break_id: '<break_id>', actor: '--actor', reason: '--reason' }

/** Yesterday in Asia/Bangkok, as yyyy-MM-dd. */
export const bangkokYesterday = (now: Date): string => formatCalendarDate(bangkokDateOf(new Date(now.getTime() - 86_400_000)))

const dateOption = (name: string, value: string): string => {
  const d = parseCalendarDate(value)
  if (E.isLeft(d)) throw new UsageError(`${name} ${JSON.stringify(value)}: ${d.left.join('; ')} (an Asia/Bangkok date such as 2026-01-31)`)
  return value
}

/** The run's scope from the options: --date, or --from and --to, or yesterday in Bangkok. */
export const scopeOf = (opts: ReconcileOptions, now: Date): ScopeRequest & { readonly kind: 'days' } => {
  if (opts.date !== undefined && (opts.from !== undefined || opts.to !== undefined)) throw new UsageError('--date excludes --from and --to: give one day, or a range')
  if ((opts.from === undefined) !== (opts.to === undefined)) throw new UsageError('--from and --to go together (a range of Bangkok days, both inclusive)')
  const from = opts.from === undefined ? undefined : dateOption('--from', opts.from)
  const to = opts.to === undefined ? undefined : dateOption('--to', opts.to)
  if (from !== undefined && to !== undefined) {
    const days = daysBetween(from, to)
    if (E.isLeft(days)) throw new UsageError(`--from ${from} --to ${to}: ${days.left}`)
    return { kind: 'days', from, to }
  }
  const day = opts.date === undefined ? bangkokYesterday(now) : dateOption('--date', opts.date)
  return { kind: 'days', from: day, to: day }
}

const concurrencyOf = (text: string | undefined, fallback: number): number => {
  if (text === undefined) return fallback
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 256) throw new UsageError(`--concurrency ${JSON.stringify(text)}: must be a whole number from 1 to 256`)
  return Number(text)
}

const asOfOf = (text: string | undefined): Date | undefined => {
  if (text === undefined) return undefined
  const d = parseInstant(text)
  if (E.isLeft(d)) throw new UsageError(`--as-of ${JSON.stringify(text)}: ${d.left}`)
  return d.right
}

/** Exit code of a verdict: 0 reconciled (with pending), 1 breaks, 3 incomplete. */
export const exitCodeOf = (v: Verdict): number => (v === 'reconciled' || v === 'reconciled_with_pending' ? EXIT.ok : v === 'breaks' ? EXIT.negative : EXIT.failure)

const failureText = (f: ReconcileFailure): string =>
  f._tag === 'Interrupted' ? `interrupted after ${f.checked.toLocaleString('en-US')} items; run ${f.runId} stays open and the next run of the same scope resumes it` : f.message

/**
 * Opens what a tool run needs: the database (migrated), the event log, and a projector keeping the read
 * models current (unless SATANG_PROJECTOR=off: then another process runs it, and the run waits for it).
 */
const openTool = async (config: Config, log: Logger, setExitCode: (code: number) => void): Promise<{ readonly db: Database; readonly store: EventStore; readonly stop: () => Promise<void> } | undefined> => {
  const db = await openMigratedDatabase(config, log, setExitCode)
  if (db === undefined) return undefined
  const store = makeEventStore(config, db, log)
  // Loaded here, not with the module: `satang report reconciliation` shares this module's option parsing.
  const projector = config.SATANG_PROJECTOR === 'on' ? (await import('../roles/projector.ts')).runProjector(config, store, db, log) : undefined
  const opened = db
  return {
    db: opened,
    store,
    stop: async () => {
      await projector?.stop()
      await store.close()
      await opened.close()
    },
  }
}

/** `satang reconcile` and `satang reconcile ack`. */
export const registerReconcileCommand = (program: Command, setExitCode: (code: number) => void): void => {
  const cmd = program
    .command('reconcile')
    .description('reconcile a Bangkok business day (default yesterday) or a range with the gateway: heal what can be healed, report every break by class, track breaks until resolved or acknowledged')
    .option('--date <yyyy-MM-dd>', 'the Asia/Bangkok business day to reconcile (default: yesterday)')
    .option('--from <yyyy-MM-dd>', 'first day of a range (with --to)')
    .option('--to <yyyy-MM-dd>', 'last day of a range, inclusive (with --from)')
    .option('--concurrency <n>', 'gateway queries in flight at once (default SATANG_RECONCILE_CONCURRENCY, 16)')
    .option('--dry-run', 'query and classify, print the result, record nothing (no evidence, no heal, no run)')
    .option('--json', "print the run's result as one JSON document on stdout")
    .option('--as-of <instant>', 'measure grace periods (not found, stale pending, missing charges) as of this ISO-8601 instant instead of now; recorded with the run')
    .option('--no-progress', 'no progress lines on stderr')
    // `satang reconcile ack … --json`: options after `ack` are the subcommand's.
    .enablePositionalOptions()
    .addHelpText('after', HELP_AFTER)
    .action(async (opts: ReconcileOptions) => {
      const now = new Date()
      const scope = scopeOf(opts, now)
      const asOf = asOfOf(opts.asOf)
      const late = afterWindow(opts, scope, latestReconcilableDay(now, asOf))
      if (late !== undefined) throw new UsageError(late)
      const config = await configOrUsage()
      const concurrency = concurrencyOf(opts.concurrency, config.SATANG_RECONCILE_CONCURRENCY)
      const log = quietLogger(config)
      const tool = await openTool(config, log, setExitCode)
      if (tool === undefined) return
      const first = await firstEventAt(tool.store)
      if (E.isLeft(first)) {
        await tool.stop()
        process.stderr.write(`satang: ${first.left}\n`)
        setExitCode(EXIT.failure)
        return
      }
      const early = beforeWindow(opts, scope, earliestReconcilableDay(now, first.right))
      if (early !== undefined) {
        await tool.stop()
        throw new UsageError(early)
      }
      let gateway
      try {
        gateway = await connectGatewayForTool(config, log)
      } catch (e) {
        await tool.stop()
        if (!(e instanceof StartupError)) throw e
        process.stderr.write(`satang: ${e.message}\n`)
        setExitCode(EXIT.usage)
        return
      }
      const abort = new AbortController()
      const onSignal = (signal: NodeJS.Signals): void => {
        process.stderr.write(`\nsatang: ${signal}: stopping after the items in flight (the run can be resumed)…\n`)
        abort.abort()
      }
      process.on('SIGINT', onSignal)
      process.on('SIGTERM', onSignal)
      const tty = process.stderr.isTTY
      let lastProgress = 0
      const showProgress = opts.progress !== false
      try {
        const anchors = config.SATANG_EVENT_STORE === 'postgres' && opts.dryRun !== true ? await makeAnchorWriter(config, tool.db, log) : undefined
        const deps = makeReconcileDeps({ config, store: tool.store, db: tool.db, gateway: gateway.client, merchantId: gateway.merchantId, statusTables: statusTables(config), log, newId: randomUUID, ...(anchors === undefined ? {} : { anchors }) })
        const crash = config.SATANG_FAULT_CRASH_AFTER === 'ReconcileBatch'
        const result = await reconcile(deps, {
          scope,
          concurrency,
          dryRun: opts.dryRun === true,
          trigger: 'cli',
          actor: `cli:${userInfo().username}`,
          ...(asOf === undefined ? {} : { asOf }),
          policy: reconcilePolicyOf(config),
          signal: abort.signal,
          // Test-only fault injection: the process dies once two batches are on the run stream.
          ...(crash ? { batch: { maxItems: 5, maxMs: 60_000 }, onBatchRecorded: (batches: number) => void (batches >= 2 && process.kill(process.pid, 'SIGKILL')) } : {}),
          onProgress: (p) => {
            if (!showProgress) return
            const t = Date.now()
            if (t - lastProgress < (tty ? 250 : 10_000) && p.checked < p.total) return
            lastProgress = t
            process.stderr.write(tty ? `\r\x1b[2K${progressLine(p, new Date())}` : `satang: ${progressLine(p, new Date())}\n`)
          },
        })
        if (showProgress && tty && lastProgress > 0) process.stderr.write('\n')
        if (E.isLeft(result)) {
          process.stderr.write(`satang: reconciliation ${result.left._tag === 'Interrupted' ? 'interrupted' : 'failed'}: ${failureText(result.left)}\n`)
          setExitCode(EXIT.failure)
          return
        }
        // The read models show the run (and what it healed) when the command returns (its own projector is stopped after).
        if (config.SATANG_PROJECTOR === 'on') await waitForReadModels(tool.store, tool.db, 60_000)().catch((e: unknown) => log.warn({ err: e }, 'the read models did not catch up with the run before exit'))
        process.stdout.write(opts.json === true ? `${JSON.stringify(result.right.report, null, 2)}\n` : summaryText(result.right.report))
        setExitCode(exitCodeOf(result.right.verdict))
      } catch (e) {
        process.stderr.write(`satang: reconciliation failed: ${e instanceof Error ? e.message : String(e)}\n`)
        setExitCode(EXIT.failure)
      } finally {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
        await gateway.close()
        await tool.stop()
      }
    })

  cmd
    .command('ack <break_id>')
    .description('acknowledge (close) an open break with a reason; the actor and the reason are recorded')
    .option('--reason <text>', 'why the break is closed (required)')
    .option('--actor <name>', 'who closes it (default: cli:<your user name>)')
    .option('--json', 'print the acknowledged break as JSON')
    .addHelpText('after', ACK_HELP)
    .action(async (breakId: string, opts: AckOptions) => {
      if (opts.reason === undefined || opts.reason.trim() === '') throw new UsageError('--reason is required: say why the break is closed')
      const actor = opts.actor ?? `cli:${userInfo().username}`
      // The use case's own rules, checked before anything is opened, naming the option that broke one.
      const violations = acknowledgementViolations(breakId, actor, opts.reason)
      if (violations.length > 0) throw new UsageError(violations.map((v) => `${ACK_OPTIONS[v.path] ?? v.path} ${v.rule}`).join('; '))
      const config = await configOrUsage()
      const log = quietLogger(config)
      const tool = await openTool(config, log, setExitCode)
      if (tool === undefined) return
      try {
        await waitForReadModels(tool.store, tool.db, 120_000)()
        const merchantId = merchantIdOf(config)
        if (merchantId === undefined) throw new UsageError('SATANG_MERCHANT_ID is required when SATANG_GATEWAY_BASE_URL is set')
        const queries = makeReconciliationQueries({ pool: tool.db.pool, schema: READ_MODEL_SCHEMA })
        const id = randomUUID()
        const r = await acknowledgeBreak({ store: tool.store, queries, merchantId, now: () => new Date() }, breakId, actor, opts.reason, { correlationId: id, causationId: id, actor })
        switch (r._tag) {
          case 'Ok':
            process.stdout.write(opts.json === true ? `${JSON.stringify(r.body, null, 2)}\n` : `satang: break ${breakId} ${r.body['already_acknowledged'] === true ? 'was already acknowledged' : 'acknowledged'} by ${String(r.body['acknowledged_by'])}: ${String(r.body['reason'])}\n`)
            setExitCode(EXIT.ok)
            return
          case 'InvalidRequest':
            throw new UsageError(r.violations.map((v) => `${ACK_OPTIONS[v.path] ?? v.path} ${v.rule}`).join('; '))
          case 'NotFound':
          case 'Conflict':
            process.stderr.write(`satang: ${r.message}\n`)
            setExitCode(EXIT.negative)
            return
          case 'Unavailable':
          case 'GatewayRejected':
          case 'GatewayUnavailable':
            process.stderr.write(`satang: the acknowledgement could not be recorded (${r.message})\n`)
            setExitCode(EXIT.failure)
        }
      } finally {
        await tool.stop()
      }
    })
}
