import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Knex } from 'knex'
import type { Pool } from 'pg'
import { inject } from 'vitest'
import { makeKnex, makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { migrateEventStore } from '../../src/adapters/postgres/migrations/eventstore.ts'
import { silentLogger, type Logger } from '../../src/logger.ts'

/**
 * The database the int project's global setup found or started for this worker slot: files that run
 * at the same time use different PostgreSQL servers (see postgres-global-setup.ts).
 */
export const testDatabaseUrl = (): string => {
  const urls = inject('databaseUrls')
  const slot = Number(process.env['VITEST_POOL_ID'] ?? '1')
  return urls[(Number.isInteger(slot) && slot > 0 ? slot - 1 : 0) % urls.length] ?? inject('databaseUrl')
}

/** A schema name no other run uses: `t_<label>_<random>`. */
export const uniqueSchemaName = (label: string): string => `t_${label}_${randomUUID().replaceAll('-', '').slice(0, 12)}`

export type TestSchema = {
  readonly schema: string
  readonly url: string
  /** A new pool on the test database (closed by `drop`). */
  readonly pool: (max?: number) => Pool
  readonly db: Knex
  /** Ends every pool opened here and drops the schema. */
  readonly drop: () => Promise<void>
}

/** A fresh schema with the event store migrated into it. */
export const freshEventStoreSchema = async (label: string, log: Logger = silentLogger()): Promise<TestSchema> => {
  const url = testDatabaseUrl()
  const schema = uniqueSchemaName(label)
  const pools: Pool[] = []
  const pool = (max = 4): Pool => {
    const p = makePostgresPool({ url, poolMax: max, applicationName: `satang-test-${label}` }, log)
    pools.push(p)
    return p
  }
  const admin = pool(2)
  const db = makeKnex(admin)
  const migrated = await migrateEventStore({ db, log }, { schema })()
  if (E.isLeft(migrated)) throw new Error(`could not migrate ${schema}`, { cause: migrated.left.cause })
  const drop = async (): Promise<void> => {
    await db.raw(`drop schema if exists "${schema}" cascade`)
    await db.destroy()
    await Promise.all(pools.filter((p) => !p.ended && !p.ending).map((p) => p.end()))
  }
  return { schema, url, pool, db, drop }
}
