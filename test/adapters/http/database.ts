import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client } from 'pg'
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
