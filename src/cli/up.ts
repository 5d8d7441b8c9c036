import type { Command } from 'commander'
import { configWarnings } from '../config.ts'
import { StartupError, StartupFailure, rootLogger } from '../composition/startup.ts'
import { ROLES, isRoleChoice } from '../roles/role.ts'
import { migrate, openDatabaseForTool, waitingNotice } from '../composition/database.ts'
import { EXIT, UsageError } from './io.ts'
import { configOrUsage } from './tool-config.ts'

/**
 * The exit code of a start-up that failed, the same for `satang up` and `satang migrate`: 2 when the
 * configuration is wrong (a setting, a role that cannot run with it), 3 when what it needs failed (the
 * database unreachable, a migration, a port in use, the data directory in use).
 */
const fail = (e: unknown, setExitCode: (code: number) => void): void => {
  if (!(e instanceof StartupError)) throw e
  process.stderr.write(`satang: ${e.message}\n`)
  setExitCode(e instanceof StartupFailure ? EXIT.failure : EXIT.usage)
}

/** Forces the exit once a stop is over, in case something left behind (a socket, a timer) would keep the process alive. */
const exitSoon = (code: number): void => {
  process.exitCode = code
  setTimeout(() => process.exit(code), 2_000).unref()
}

/** `satang up` (everything on the configured or embedded defaults) and `satang migrate`. */
export const registerUpCommands = (program: Command, setExitCode: (code: number) => void): void => {
  program
    .command('up')
    .description('run satang: database (embedded PostgreSQL unless SATANG_DATABASE_URL is set), migrations, event store, projector (read models), the Kafka relay when SATANG_KAFKA_BROKERS is set, merchant API and callbacks, the reconciliation scheduler (daily run and sweeps, SATANG_RECONCILE_*), and the built-in sandbox as the gateway unless SATANG_GATEWAY_BASE_URL is set')
    .option('--role <role>', `run one part of satang in this process: ${ROLES.join(', ')} or all`, 'all')
    .option('--allow-superuser', 'start even when SATANG_DATABASE_URL connects as a PostgreSQL superuser (a loud warning; test databases only: a superuser can rewrite the event log)')
    .addHelpText(
      'after',
      [
        '',
        'Roles (each can run as its own process and scale on its own; all of them share one database):',
        '  api        the merchant API (/v1) and the gateway callbacks (/callbacks); the built-in sandbox unless SATANG_GATEWAY_BASE_URL is set',
        '  projector  keeps the read models current (orders, refunds, subscriptions, ledger, audit log)',
        '  relay      publishes the event log to Kafka',
        '  scheduler  the daily reconciliation and the sweeps of stale items (needs SATANG_GATEWAY_BASE_URL)',
        '  all        every role in this one process (the default; the quick start)',
        'A role other than all needs SATANG_DATABASE_URL (embedded PostgreSQL belongs to --role all). Every role serves /healthz on SATANG_HTTP_PORT, and /metrics there too unless SATANG_METRICS_PORT gives it a port of its own (SATANG_METRICS_TOKEN_FILE puts it behind a bearer token).',
        '',
        'Configuration comes from SATANG_* environment variables and/or the JSON file named by SATANG_CONFIG (see docs/operations.md "Configuration").',
        'Stops on Ctrl-C (SIGINT) or SIGTERM within SATANG_SHUTDOWN_TIMEOUT_MS (default 10 s): /readyz answers 503 at once, requests in flight finish, new ones get 503 retriable, idle keep-alive connections close, then every role stops; a second signal stops at once.',
        'Probes: /livez (the process answers), /readyz (every role can do its work now; 503 names each failing check), /healthz (the database, as before).',
        'One satang per data directory (SATANG_DATA_DIR, locked by satang.lock in it): a second one refuses to start, naming the first.',
        'The service connects as a role that may only read and append the event log; as a superuser it refuses to start unless --allow-superuser (docs/operations.md "Least privilege").',
        'Exit codes (as satang migrate for the same start-up failure): 0 stopped cleanly; 1 the stop failed or passed SATANG_SHUTDOWN_TIMEOUT_MS (stderr names what did not stop); 2 bad usage or configuration; 3 start-up failed (database unreachable, a migration, a port or the data directory in use).',
      ].join('\n'),
    )
    .action(async (opts: { role: string; allowSuperuser?: boolean }) => {
      try {
        if (!isRoleChoice(opts.role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')} or all, got ${JSON.stringify(opts.role)}`)
        const config = await configOrUsage()
        const log = rootLogger(config)
        for (const warning of configWarnings(config)) process.stderr.write(`satang: warning: ${warning}\n`)
        // Listening for the stop signals before anything starts: a SIGTERM that arrives while satang is
        // starting (a supervisor giving up, a quick Ctrl-C) stops it cleanly once it is up, instead of
        // killing it with its embedded PostgreSQL and locks left behind.
        let stopSignal: NodeJS.Signals | undefined
        let onStopSignal: (signal: NodeJS.Signals) => void = (signal) => {
          if (stopSignal !== undefined) {
            // A second signal stops at once, as it does once satang is up.
            process.off('SIGINT', signalled)
            process.off('SIGTERM', signalled)
            process.kill(process.pid, signal)
            return
          }
          stopSignal = signal
          process.stdout.write(`satang: ${signal} while starting: stopping once started…\n`)
        }
        const signalled = (signal: NodeJS.Signals): void => onStopSignal(signal)
        process.on('SIGINT', signalled)
        process.on('SIGTERM', signalled)
        process.stdout.write(`satang: starting${opts.role === 'all' ? '' : ` the ${opts.role} role`}…\n`)
        // The roles (HTTP server, telemetry, jobs) load only here: `satang migrate` and the help of
        // both commands, which share this module, start without them.
        const { startProcess } = await import('../main.ts')
        const running = await startProcess(config, log, opts.role, { allowSuperuser: opts.allowSuperuser === true }).catch((e: unknown) => {
          process.off('SIGINT', signalled)
          process.off('SIGTERM', signalled)
          throw e
        })
        const out = (line: string): void => void process.stdout.write(`satang: ${line}\n`)
        out(`database: ${running.database}`)
        for (const line of running.summary) out(line)
        const metricsAt = `${running.metricsUrl}/metrics${running.metricsUrl === running.httpUrl ? '' : ' only'}`
        out(`HTTP service at ${running.httpUrl} (health: ${running.httpUrl}/healthz, metrics: ${metricsAt}${running.metricsToken === undefined ? ', no token needed' : ''})`)
        if (running.metricsToken !== undefined) out(`metrics bearer token in ${running.metricsToken.path}${running.metricsToken.generated ? ' (generated now)' : ''}`)
        const api = running.api
        if (api !== undefined) {
          out(`merchant API at ${running.httpUrl}/v1 (bearer tokens: ${api.tokens.names.join(', ')})`)
          if (api.tokens.file !== undefined) out(`API token (every scope) in ${api.tokens.file.path}${api.tokens.file.generated ? ' (generated now)' : ''}`)
          if (api.sessionSecretFile !== undefined) out(`console session secret in ${api.sessionSecretFile.path}${api.sessionSecretFile.generated ? ' (generated now)' : ''}`)
          out(`gateway callbacks at ${api.publicUrl()}/callbacks`)
          out(`gateway: ${api.gateway.description}`)
          const sandbox = api.gateway.sandbox
          if (sandbox !== undefined) {
            out(`sandbox at ${sandbox.url} (control API ${sandbox.controlUrl}, gateway public key ${sandbox.publicKeyUrl}, state ${sandbox.stateFile})`)
          }
          const key = api.gateway.merchantKey
          if (key !== undefined) out(`merchant key pair in ${key.privateKeyPath} and ${key.publicKeyPath}${key.generated ? ' (generated now)' : ''}`)
          void api.recovery.then((n) => {
            if (n > 0) out(`resolving ${String(n)} payment(s) whose outcome was unknown at start-up, by query`)
          })
        }
        out(`up${opts.role === 'all' ? '' : ` (role ${opts.role})`}. Ctrl-C stops.`)
        const problems = await new Promise<ReadonlyArray<string>>((done) => {
          const stop = (signal: NodeJS.Signals): void => {
            process.stdout.write(`satang: ${signal}: stopping… (deadline ${String(config.SATANG_SHUTDOWN_TIMEOUT_MS)} ms)\n`)
            // A second signal stops at once.
            onStopSignal = () => {
              process.off('SIGINT', signalled)
              process.off('SIGTERM', signalled)
              process.stderr.write(`satang: ${signal} again: exiting now, without waiting for the stop\n`)
              process.exit(EXIT.negative)
            }
            running.shutdown().then(done, (e: unknown) => done([`the stop failed: ${e instanceof Error ? e.message : String(e)}`]))
          }
          if (stopSignal !== undefined) stop(stopSignal)
          else onStopSignal = stop
        })
        process.off('SIGINT', signalled)
        process.off('SIGTERM', signalled)
        if (problems.length > 0) {
          for (const p of problems) process.stderr.write(`satang: did not stop cleanly: ${p}\n`)
          process.stdout.write('satang: stopped, not cleanly (exit 1).\n')
          exitSoon(EXIT.negative)
          setExitCode(EXIT.negative)
          return
        }
        process.stdout.write('satang: stopped.\n')
        exitSoon(EXIT.ok)
      } catch (e) {
        if (e instanceof UsageError) throw e
        fail(e, setExitCode)
      }
    })

  program
    .command('migrate')
    .description('create or upgrade the database schemas: the event store (eventstore) and the read models (satang, knex migrations); safe to run repeatedly and from several processes at once')
    .option('--every-process-upgraded', 'also apply the event store migrations that wait until every satang process reading the log runs this release (0010: appenders register by their insert\'s own lock instead of an advisory lock, faster appends); say it once no process of an earlier release is left; a new installation gets them at once')
    .addHelpText(
      'after',
      '\nsatang up runs the same migrations at start. An upgraded log keeps its appenders on the advisory lock until --every-process-upgraded: a process of an earlier release knows no other registration and would pass over the events of an appender without it, so give it once no such process is left, and do not start an earlier release on the log after it (docs/operations.md "Event store operations").\nExit codes: 0 ok, 2 bad configuration, 3 the database could not be reached or a migration failed.',
    )
    .action(async (opts: { everyProcessUpgraded?: boolean }) => {
      const config = await configOrUsage()
      try {
        const log = rootLogger(config)
        const db = await openDatabaseForTool(config, log, 'satang migrate')
        try {
          const migrated = await migrate(db, log, config, { everyProcessUpgraded: opts.everyProcessUpgraded === true })
          const readModels = migrated.readModels
          process.stdout.write(`satang: migrations applied (${db.description})${readModels.length > 0 ? `: read models ${readModels.join(', ')}` : '; the read models were up to date'}\n`)
          const eventStore = migrated.eventStore
          if (eventStore === undefined && opts.everyProcessUpgraded === true) process.stdout.write('satang: --every-process-upgraded does nothing here: the event log is EventStoreDB (SATANG_EVENT_STORE), which has no registration of appenders\n')
          if (eventStore !== undefined && eventStore.applied.length > 0) process.stdout.write(`satang: event store: ${eventStore.applied.join(', ')}\n`)
          if (eventStore !== undefined && eventStore.waiting.length > 0) process.stdout.write(`satang: ${waitingNotice(eventStore.waiting)}\n`)
        } finally {
          await db.close()
        }
      } catch (e) {
        fail(e, setExitCode)
      }
    })
}
