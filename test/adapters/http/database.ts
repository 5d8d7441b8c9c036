import { randomUUID } from 'node:crypto'
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
        await c.query(`drop database if exists "${name}" with (force)`)
      } finally {
        await c.end()
      }
    },
  }
}
