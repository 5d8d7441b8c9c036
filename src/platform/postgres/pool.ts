import { availableParallelism } from 'node:os'
import { createRequire } from 'node:module'
import type { Knex, knex as KnexFactory } from 'knex'
import { Pool } from 'pg'
import type { Logger } from '../../logger.ts'

export type PostgresConfig = {
  /** `postgres://user:password@host:port/database`. Never logged. */
  readonly url: string
  /** Default `defaultPoolSize()`. */
  readonly poolMax?: number
  /** Shown in `pg_stat_activity`. Default `satang`. */
  readonly applicationName?: string
  /** Default 10 s. */
  readonly connectionTimeoutMs?: number
}

/**
 * Connections for one process on a machine with `cores` CPUs: the hot path holds a connection only for
 * one statement, and a server runs about two statements per core at once (more only queue inside it),
 * plus ten that are held longer: each projection's batch (six), the relay's and the scheduler's locks,
 * the subscriber's notifications and reads.
 */
export const defaultPoolSize = (cores: number = availableParallelism()): number => 2 * Math.max(1, cores) + 10

/** What a connection error says, without the client pg-pool attaches to it (`err.client`, its whole state). */
const brief = (err: Error): { readonly message: string; readonly code?: unknown } => ('code' in err ? { message: err.message, code: err.code } : { message: err.message })

/**
 * One pg pool per process: the event store uses it directly (prepared statements, array rows on
 * the hot paths), and knex runs on top of the same pool for migrations and read models.
 */
export const makePostgresPool = (config: PostgresConfig, log: Logger): Pool => {
  const pool = new Pool({
    connectionString: config.url,
    max: config.poolMax ?? defaultPoolSize(),
    application_name: config.applicationName ?? 'satang',
    connectionTimeoutMillis: config.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
  })
  // An idle client losing its connection emits here; without a listener the process would crash.
  // The pool drops that client and the next query opens a fresh one.
  const plog = log.child({ component: 'postgres' })
  pool.on('error', (err) => plog.warn({ err: brief(err) }, 'idle PostgreSQL connection failed; the pool replaces it'))
  // A checked-out client whose connection ends (the server stopped or restarted) emits 'error' on
  // itself even while a query of it is failing with that error, and pg-pool listens only while the
  // client is idle: without this listener the process would crash. Its queries fail, and the pool
  // drops it when it is released (it is no longer queryable), so the event itself needs no handling.
  pool.on('connect', (client) => {
    client.on('error', (err) => plog.debug({ err: brief(err) }, 'PostgreSQL connection in use failed; its query fails and the pool drops it'))
  })
  return pool
}

/** A knex instance over an existing pool; it does not own the pool (end the pool yourself after `destroy`). */
// knex (with lodash, some 300 modules) is loaded when first used, not by every command that opens a pool.
const requireHere = createRequire(import.meta.url)
export const makeKnex = (pool: Pool): Knex => (requireHere('knex') as { readonly knex: typeof KnexFactory }).knex({ client: 'pg', connectionPool: pool })
