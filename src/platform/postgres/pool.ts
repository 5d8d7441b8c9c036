import knex from 'knex'
import type { Knex } from 'knex'
import { Pool } from 'pg'
import type { Logger } from '../../logger.ts'

export type PostgresConfig = {
  /** `postgres://user:password@host:port/database`. Never logged. */
  readonly url: string
  /** Default 20 (each projection's batch takes a connection while the API serves). */
  readonly poolMax?: number
  /** Shown in `pg_stat_activity`. Default `satang`. */
  readonly applicationName?: string
  /** Default 10 s. */
  readonly connectionTimeoutMs?: number
}

/**
 * One pg pool per process: the event store uses it directly (prepared statements, array rows on
 * the hot paths), and knex runs on top of the same pool for migrations and read models.
 */
export const makePostgresPool = (config: PostgresConfig, log: Logger): Pool => {
  const pool = new Pool({
    connectionString: config.url,
    max: config.poolMax ?? 20,
    application_name: config.applicationName ?? 'satang',
    connectionTimeoutMillis: config.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
  })
  // An idle client losing its connection emits here; without a listener the process would crash.
  // The pool drops that client and the next query opens a fresh one.
  pool.on('error', (err) => log.child({ component: 'postgres' }).warn({ err }, 'idle PostgreSQL connection failed; the pool replaces it'))
  return pool
}

/** A knex instance over an existing pool; it does not own the pool (end the pool yourself after `destroy`). */
export const makeKnex = (pool: Pool): Knex => knex({ client: 'pg', connectionPool: pool })
