import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { makeEsdbEventStore } from '../adapters/eventstore/esdb.ts'
import { makePostgresEventStore } from '../adapters/eventstore/postgres.ts'
import { describeHolder, lockDataDir, type InstanceLock } from '../adapters/os/instance-lock.ts'
import { startEmbeddedPostgres } from '../adapters/postgres/embedded.ts'
import { migrateEventStore } from '../adapters/postgres/migrations/eventstore.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { makeKnex, makePostgresPool } from '../platform/postgres/pool.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA, migrateReadModels, type ReadModels } from '../projections/index.ts'
import { DataDirInUse, StartupError, dataPath } from './startup.ts'

export const EVENT_STORE_SCHEMA = 'eventstore'
export { READ_MODEL_SCHEMA }

/** Takes the data directory's lock for `command`, or fails naming the satang that holds it. */
export const lockDataDirOf = async (config: Config, log: Logger, command: string, whenHeld = ''): Promise<InstanceLock> => {
  const locked = await lockDataDir({ log }, dataPath(config), command)
  if (E.isRight(locked)) return locked.right
  const f = locked.left
  if (f._tag === 'LockFailed') throw new StartupError(`SATANG_DATA_DIR: ${f.message}`)
  throw new DataDirInUse(
    `the data directory ${dataPath(config)} is in use by ${describeHolder(f.holder)}${whenHeld}; stop that satang first, or give this one its own SATANG_DATA_DIR (lock file ${f.path})`,
  )
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
    const pool = makePostgresPool({ url: config.SATANG_DATABASE_URL, ...(config.SATANG_DATABASE_POOL_SIZE === undefined ? {} : { poolMax: config.SATANG_DATABASE_POOL_SIZE }) }, log)
    const u = new URL(config.SATANG_DATABASE_URL)
    return { pool, description: `PostgreSQL at ${u.hostname}:${u.port || '5432'}${u.pathname}`, close: () => pool.end() }
  }
  const dataDir = dataPath(config, 'postgres')
  const started = await startEmbeddedPostgres({ log }, { dataDir, port: config.SATANG_EMBEDDED_PG_PORT })()
  if (E.isLeft(started)) throw new StartupError(`embedded PostgreSQL: ${started.left.message}`)
  const embedded = started.right
  const pool = makePostgresPool({ url: embedded.url, ...(config.SATANG_DATABASE_POOL_SIZE === undefined ? {} : { poolMax: config.SATANG_DATABASE_POOL_SIZE }) }, log)
  return {
    pool,
    description: `embedded PostgreSQL on 127.0.0.1:${String(embedded.port)}, data in ${embedded.dataDir} (${embedded.initialised ? 'new cluster initialised' : embedded.adopted ? 'existing data reused; server left running by a previous satang taken over' : 'existing data reused'})`,
    close: async () => {
      await pool.end()
      await embedded.stop()
    },
  }
}

/**
 * The database of a running (or stopped) satang, for tools such as `satang audit`: the configured URL;
 * else the embedded cluster — the one `satang up` is running on its port (as a client, never its
 * owner), or started here, holding the data directory's lock, and stopped again by `close`.
 */
export const openDatabaseForTool = async (config: Config, log: Logger, command = 'a satang command'): Promise<Database> => {
  if (config.SATANG_DATABASE_URL !== undefined) return openDatabase(config, log)
  const port = config.SATANG_EMBEDDED_PG_PORT
  const running = makePostgresPool({ url: `postgres://postgres:satang@127.0.0.1:${String(port)}/satang`, connectionTimeoutMs: 2_000 }, log)
  const reachable = await running.query('select 1').then(
    () => true,
    () => false,
  )
  if (reachable) return { pool: running, description: `embedded PostgreSQL on 127.0.0.1:${String(port)} (running)`, close: () => running.end() }
  await running.end()
  // Starting the embedded server makes this command its owner for a while: only with the data directory's lock.
  const lock = await lockDataDirOf(config, log, command, `, whose database does not answer on port ${String(port)}`)
  const db = await openDatabase(config, log).catch(async (e: unknown) => {
    await lock.release()
    throw e
  })
  return {
    ...db,
    close: async () => {
      await db.close()
      await lock.release()
    },
  }
}

/**
 * Applies every pending migration: the event store's (when it lives in PostgreSQL) and the read
 * models' (knex migrations in `satang`). Safe to run repeatedly and from several processes at once.
 * Returns the names of the read-model migrations applied.
 */
export const migrate = async (db: Database, log: Logger, config?: Pick<Config, 'SATANG_EVENT_STORE'>): Promise<ReadonlyArray<string>> => {
  if (config?.SATANG_EVENT_STORE !== 'eventstoredb') {
    const knex = makeKnex(db.pool)
    try {
      const done = await migrateEventStore({ db: knex, log }, { schema: EVENT_STORE_SCHEMA })()
      if (E.isLeft(done)) throw new StartupError(`migration of the event store failed: ${done.left.cause instanceof Error ? done.left.cause.message : done.left.operation}`)
    } finally {
      // the pool belongs to the caller; knex only borrowed it
      await knex.destroy().catch((e: unknown) => log.debug({ err: e }, 'knex destroy'))
    }
  }
  try {
    return await migrateReadModels({ pool: db.pool, log }, { schema: READ_MODEL_SCHEMA, projections: PROJECTIONS })
  } catch (e) {
    throw new StartupError(`migration of the read models failed: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** The read models of this database, for code that reads them. */
export const readModelsOf = (db: Database): ReadModels => ({ pool: db.pool, schema: READ_MODEL_SCHEMA })

/**
 * `{ eventTable }` for the projector and rebuilds (`ProjectionTarget.eventTable`): the event table the
 * projections may copy payloads from, only when the log is PostgreSQL in the same database; else nothing.
 */
export const withEventTable = (config: Pick<Config, 'SATANG_EVENT_STORE'>): { readonly eventTable?: string } =>
  config.SATANG_EVENT_STORE === 'eventstoredb' ? {} : { eventTable: `"${EVENT_STORE_SCHEMA}".events` }

export const makeEventStore = (config: Config, db: Database, log: Logger): EventStore =>
  config.SATANG_EVENT_STORE === 'eventstoredb' && config.SATANG_EVENTSTOREDB_URL !== undefined
    ? makeEsdbEventStore({ log }, { connectionString: config.SATANG_EVENTSTOREDB_URL })
    : makePostgresEventStore({ pool: db.pool, log }, { schema: EVENT_STORE_SCHEMA })
