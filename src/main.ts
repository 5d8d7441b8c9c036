import { readFile } from 'node:fs/promises'
import { isAbsolute, join, resolve } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import pkg from '../package.json' with { type: 'json' }
import { decodeConfig, formatConfigErrors, type Config } from './config.ts'
import type { EventStore } from './domain/event-store.ts'
import { makeLogger, type Logger } from './logger.ts'
import { makeEsdbEventStore } from './adapters/eventstore/esdb.ts'
import { makePostgresEventStore } from './adapters/eventstore/postgres.ts'
import { makeHttpServer, makeMetricsRegistry } from './adapters/http/server.ts'
import { startEmbeddedPostgres } from './adapters/postgres/embedded.ts'
import { makeKnex, makePostgresPool } from './adapters/postgres/knex.ts'
import { migrateEventStore } from './adapters/postgres/migrations/eventstore.ts'

/**
 * The composition root: the only module that reads the environment and wires adapters from config.
 * Commands of the CLI call these functions; nothing else builds adapters.
 */

export const EVENT_STORE_SCHEMA = 'eventstore'

/** Start-up could not proceed; the message is for the operator and never carries a secret. */
export class StartupError extends Error {
  override readonly name = 'StartupError'
}

/** Reads `SATANG_CONFIG` (if set) and the environment, and decodes them; stops with every problem named. */
export const loadConfig = async (env: NodeJS.ProcessEnv = process.env): Promise<Config> => {
  const path = env['SATANG_CONFIG']
  let file: Record<string, unknown> = {}
  if (path !== undefined && path !== '') {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (e) {
      throw new StartupError(`SATANG_CONFIG: cannot read ${JSON.stringify(path)} (${e instanceof Error && 'code' in e ? String(e.code) : 'unreadable'})`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new StartupError(`SATANG_CONFIG: ${JSON.stringify(path)} is not valid JSON`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new StartupError(`SATANG_CONFIG: ${JSON.stringify(path)} must hold a JSON object of settings`)
    file = { ...parsed }
  }
  const decoded = decodeConfig(env, file)
  if (E.isLeft(decoded)) throw new StartupError(formatConfigErrors(decoded.left))
  return decoded.right
}

export const rootLogger = (config: Config): Logger => makeLogger({ level: config.SATANG_LOG_LEVEL })

const dataPath = (config: Config, ...parts: string[]): string => {
  const base = isAbsolute(config.SATANG_DATA_DIR) ? config.SATANG_DATA_DIR : resolve(process.cwd(), config.SATANG_DATA_DIR)
  return join(base, ...parts)
}

/** Where the read models and (by default) the event log live, and how it was reached. */
export type Database = {
  readonly pool: Pool
  /** Human description for start-up output, without credentials. */
  readonly description: string
  readonly close: () => Promise<void>
}

/** Connects to `SATANG_DATABASE_URL`, or starts embedded PostgreSQL in the data folder when it is unset. */
export const openDatabase = async (config: Config, log: Logger): Promise<Database> => {
  if (config.SATANG_DATABASE_URL !== undefined) {
    const pool = makePostgresPool({ url: config.SATANG_DATABASE_URL }, log)
    const u = new URL(config.SATANG_DATABASE_URL)
    return { pool, description: `PostgreSQL at ${u.hostname}:${u.port || '5432'}${u.pathname}`, close: () => pool.end() }
  }
  const dataDir = dataPath(config, 'postgres')
  const started = await startEmbeddedPostgres({ log }, { dataDir, port: config.SATANG_EMBEDDED_PG_PORT })()
  if (E.isLeft(started)) throw new StartupError(`embedded PostgreSQL: ${started.left.message}`)
  const embedded = started.right
  const pool = makePostgresPool({ url: embedded.url }, log)
  return {
    pool,
    description: `embedded PostgreSQL on 127.0.0.1:${String(embedded.port)}, data in ${embedded.dataDir} (${embedded.initialised ? 'new cluster initialised' : 'existing data reused'})`,
    close: async () => {
      await pool.end()
      await embedded.stop()
    },
  }
}

/** Applies every pending migration. Safe to run repeatedly and from several processes at once. */
export const migrate = async (db: Database, log: Logger): Promise<void> => {
  const knex = makeKnex(db.pool)
  try {
    const done = await migrateEventStore({ db: knex, log }, { schema: EVENT_STORE_SCHEMA })()
    if (E.isLeft(done)) throw new StartupError(`migration of the event store failed: ${done.left.cause instanceof Error ? done.left.cause.message : done.left.operation}`)
  } finally {
    // the pool belongs to the caller; knex only borrowed it
    await knex.destroy().catch((e: unknown) => log.debug({ err: e }, 'knex destroy'))
  }
}

export const makeEventStore = (config: Config, db: Database, log: Logger): EventStore =>
  config.SATANG_EVENT_STORE === 'eventstoredb' && config.SATANG_EVENTSTOREDB_URL !== undefined
    ? makeEsdbEventStore({ log }, { connectionString: config.SATANG_EVENTSTOREDB_URL })
    : makePostgresEventStore({ pool: db.pool, log }, { schema: EVENT_STORE_SCHEMA })

/** A running satang: its HTTP address and how to stop it. */
export type Running = { readonly httpUrl: string; readonly database: string; readonly stop: () => Promise<void> }

/** `satang up`: database (embedded by default), migrations, event store, HTTP service. */
export const startSatang = async (config: Config, log: Logger): Promise<Running> => {
  const db = await openDatabase(config, log)
  const closers: Array<() => Promise<void>> = [db.close]
  const stop = async (): Promise<void> => {
    for (const close of closers.reverse()) await close()
  }
  try {
    await migrate(db, log)
    const store = makeEventStore(config, db, log)
    closers.push(store.close)
    const app = makeHttpServer({
      log,
      version: pkg.version,
      metrics: makeMetricsRegistry(),
      checks: [
        {
          name: 'database',
          check: async () => {
            await db.pool.query('select 1')
            return null
          },
        },
      ],
    })
    const httpUrl = await app.listen({ host: config.SATANG_HTTP_HOST, port: config.SATANG_HTTP_PORT })
    closers.push(() => app.close())
    return { httpUrl, database: db.description, stop }
  } catch (e) {
    await stop()
    throw e
  }
}
