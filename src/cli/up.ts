import type { Command } from 'commander'
import { StartupError, loadConfig, migrate, openDatabase, rootLogger, startSatang } from '../main.ts'
import { EXIT } from './io.ts'

const fail = (e: unknown, setExitCode: (code: number) => void): void => {
  if (!(e instanceof StartupError)) throw e
  process.stderr.write(`satang: ${e.message}\n`)
  setExitCode(EXIT.usage)
}

/** `satang up` (everything on the configured or embedded defaults) and `satang migrate`. */
export const registerUpCommands = (program: Command, setExitCode: (code: number) => void): void => {
  program
    .command('up')
    .description('run satang: database (embedded PostgreSQL unless SATANG_DATABASE_URL is set), migrations, event store, projector (read models), merchant API and callbacks, the reconciliation scheduler (daily run and sweeps, SATANG_RECONCILE_*), and the built-in sandbox as the gateway unless SATANG_GATEWAY_BASE_URL is set')
    .addHelpText('after', '\nConfiguration comes from SATANG_* environment variables and/or the JSON file named by SATANG_CONFIG (see README "Configuration").\nStops cleanly on Ctrl-C (SIGINT) or SIGTERM.')
    .action(async () => {
      try {
        const config = await loadConfig()
        const log = rootLogger(config)
        process.stdout.write('satang: starting…\n')
        const running = await startSatang(config, log)
        const out = (line: string): void => void process.stdout.write(`satang: ${line}\n`)
        out(`database: ${running.database}`)
        out(
          running.projections.length > 0
            ? `read models in schema satang, kept current by the projector: ${running.projections.join(', ')} (lag: satang project --status)`
            : 'projector off (SATANG_PROJECTOR=off): run satang project to keep the read models current',
        )
        out(`HTTP service at ${running.httpUrl} (health: ${running.httpUrl}/healthz, metrics: ${running.httpUrl}/metrics)`)
        out(`merchant API at ${running.httpUrl}/v1 (bearer tokens: ${running.tokens.names.join(', ')})`)
        if (running.tokens.file !== undefined) out(`API token (every scope) in ${running.tokens.file.path}${running.tokens.file.generated ? ' (generated now)' : ''}`)
        out(`gateway callbacks at ${running.publicUrl}/callbacks`)
        out(`gateway: ${running.gateway.description}`)
        const sandbox = running.gateway.sandbox
        if (sandbox !== undefined) {
          out(`sandbox at ${sandbox.url} (control API ${sandbox.controlUrl}, gateway public key ${sandbox.publicKeyUrl}, state ${sandbox.stateFile})`)
        }
        const key = running.gateway.merchantKey
        if (key !== undefined) out(`merchant key pair in ${key.privateKeyPath} and ${key.publicKeyPath}${key.generated ? ' (generated now)' : ''}`)
        out('up. Ctrl-C stops.')
        void running.recovery.then((n) => {
          if (n > 0) out(`resolving ${String(n)} payment(s) whose outcome was unknown at start-up, by query`)
        })
        await new Promise<void>((done) => {
          const onSignal = (signal: NodeJS.Signals): void => {
            process.stdout.write(`satang: ${signal}: stopping…\n`)
            process.off('SIGINT', onSignal)
            process.off('SIGTERM', onSignal)
            running.stop().then(done, (e: unknown) => {
              log.error({ err: e }, 'stop failed')
              done()
            })
          }
          process.on('SIGINT', onSignal)
          process.on('SIGTERM', onSignal)
        })
        process.stdout.write('satang: stopped.\n')
      } catch (e) {
        fail(e, setExitCode)
      }
    })

  program
    .command('migrate')
    .description('create or upgrade the database schemas: the event store (eventstore) and the read models (satang, knex migrations); safe to run repeatedly and from several processes at once')
    .addHelpText('after', '\nsatang up runs the same migrations at start. Exit codes: 0 ok, 2 bad configuration or the migration failed.')
    .action(async () => {
      try {
        const config = await loadConfig()
        const log = rootLogger(config)
        const db = await openDatabase(config, log)
        try {
          const applied = await migrate(db, log, config)
          process.stdout.write(`satang: migrations applied (${db.description})${applied.length > 0 ? `: read models ${applied.join(', ')}` : '; the read models were up to date'}\n`)
        } finally {
          await db.close()
        }
      } catch (e) {
        fail(e, setExitCode)
      }
    })
}
