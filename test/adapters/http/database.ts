import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import { Client, type Pool } from 'pg'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import { migrateEventStore } from '../../../src/adapters/postgres/migrations/eventstore.ts'
import type { EventStore } from '../../../src/application/ports/event-store.ts'
import { EVENT_STORE_SCHEMA } from '../../../src/composition/database.ts'
import { silentLogger } from '../../../src/logger.ts'
import { makeKnex, makePostgresPool } from '../../../src/platform/postgres/pool.ts'
import { testDatabaseUrl } from '../../support/postgres.ts'

/**
 * A fresh database on the int tests' PostgreSQL server, for a whole satang (whose event store schema
 * name is fixed): its URL, and `drop` to remove it.
 */
export const freshDatabase = async (label: string): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const base = new URL(testDatabaseUrl())
  const name = `satang_${label}_${randomUUID().replaceAll('-', '').slice(0, 10)}`
  const admin = new Client({ connectionString: base.toString() })
  await admin.connect()
  try {
    await admin.query(`create database "${name}"`)
  } finally {
    await admin.end()
  }
  const url = new URL(base.toString())
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: base.toString() })
      await c.connect()
      try {
        // A pool the test has just ended may still be closing its sessions: let them go first, so that
        // `with (force)` ends only sessions left open, never a client halfway through ending (its
        // "terminating connection" error would be unhandled in the test's process).
        const sessions = async (): Promise<number> => Number((await c.query<{ n: string }>('select count(*)::text as n from pg_stat_activity where datname = $1', [name])).rows[0]?.n ?? 0)
        for (let i = 0; i < 20 && (await sessions()) > 0; i++) await sleep(100)
        await c.query(`drop database if exists "${name}" with (force)`)
      } finally {
        await c.end()
      }
    },
  }
}

export type EventStoreDatabase = {
  readonly url: string
  readonly pool: Pool
  readonly store: EventStore
  /** Closes the store and the pool, then drops the database. */
  readonly drop: () => Promise<void>
}

/** A fresh database (`freshDatabase`) with the event store migrated into satang's own schema, a pool on it and a store over it. */
export const freshEventStoreDatabase = async (label: string): Promise<EventStoreDatabase> => {
  const log = silentLogger()
  const database = await freshDatabase(label)
  const pool = makePostgresPool({ url: database.url }, log)
  const db = makeKnex(pool)
  const migrated = await migrateEventStore({ db, log }, { schema: EVENT_STORE_SCHEMA })()
  await db.destroy()
  if (E.isLeft(migrated)) throw new Error(`could not migrate the event store of ${label}`, { cause: migrated.left.cause })
  const store = makePostgresEventStore({ pool, log }, { schema: EVENT_STORE_SCHEMA })
  return {
    url: database.url,
    pool,
    store,
    drop: async () => {
      await store.close()
      await pool.end()
      await database.drop()
    },
  }
}
