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
    .description('run satang: database (embedded PostgreSQL unless SATANG_DATABASE_URL is set), migrations, event store, HTTP service')
    .addHelpText('after', '\nConfiguration comes from SATANG_* environment variables and/or the JSON file named by SATANG_CONFIG (see README "Configuration").\nStops cleanly on Ctrl-C (SIGINT) or SIGTERM.')
    .action(async () => {
      try {
        const config = await loadConfig()
        const log = rootLogger(config)
        process.stdout.write('satang: starting…\n')
        const running = await startSatang(config, log)
        process.stdout.write(`satang: database: ${running.database}\n`)
        process.stdout.write(`satang: HTTP service at ${running.httpUrl} (health: ${running.httpUrl}/healthz, metrics: ${running.httpUrl}/metrics)\n`)
        process.stdout.write('satang: up. Ctrl-C stops.\n')
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
    .description('create or upgrade the database schemas (event store); safe to run repeatedly')
    .action(async () => {
      try {
        const config = await loadConfig()
        const log = rootLogger(config)
        const db = await openDatabase(config, log)
        try {
          await migrate(db, log)
          process.stdout.write(`satang: migrations applied (${db.description})\n`)
        } finally {
          await db.close()
        }
      } catch (e) {
        fail(e, setExitCode)
      }
    })
}
