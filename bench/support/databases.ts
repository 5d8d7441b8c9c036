// Fresh databases for the bench on the given PostgreSQL server: created, migrated as satang migrates
// them (event store schema `eventstore`, read models `satang`), and dropped at the end. The bare
// baselines write into `bare.events`: the same columns, defaults and indexes as the event table, but
// none of its triggers (no hash chain, no append-only guard) and no hash required.
import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import pg from 'pg'
import { migrateEventStore } from '../../src/adapters/postgres/migrations/eventstore.ts'
import type { Logger } from '../../src/logger.ts'
import { makeKnex, makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import { migrateReadModels } from '../../src/projections/migrations.ts'

export const EVENT_SCHEMA = 'eventstore'
export const EVENT_TABLE = `"${EVENT_SCHEMA}".events`
export const BARE_TABLE = 'bare.events'

export type BenchDatabase = {
  readonly name: string
  readonly url: string
  readonly pool: pg.Pool
  readonly drop: () => Promise<void>
}

/** A new database `satang_bench_<label>_<random>`, migrated; `drop()` removes it. */
export const createBenchDatabase = async (serverUrl: string, label: string, log: Logger, opts: { readonly readModels?: boolean; readonly bare?: boolean } = {}): Promise<BenchDatabase> => {
  const name = `satang_bench_${label}_${randomUUID().replaceAll('-', '').slice(0, 8)}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`create database "${name}"`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const pool = makePostgresPool({ url: url.toString(), poolMax: 4, applicationName: 'satang-bench' }, log)
  const knex = makeKnex(pool)
  const migrated = await migrateEventStore({ db: knex, log }, { schema: EVENT_SCHEMA })()
  await knex.destroy()
  if (E.isLeft(migrated)) throw new Error('bench: event store migration failed', { cause: migrated.left.cause })
  if (opts.readModels !== false) await migrateReadModels({ pool, log }, { schema: 'satang', projections: PROJECTIONS })
  if (opts.bare === true) {
    await pool.query(`create schema bare; create table ${BARE_TABLE} (like ${EVENT_TABLE} including all)`)
    // The bare writer stores no chain: the hash columns stay empty.
    const { rows } = await pool.query<{ attname: string }>(`select attname from pg_attribute where attrelid = '${BARE_TABLE}'::regclass and attnum > 0 and not attisdropped and attnotnull and attname in ('hash', 'prev_hash')`)
    for (const r of rows) await pool.query(`alter table ${BARE_TABLE} alter column "${r.attname}" drop not null`)
  }
  const drop = async (): Promise<void> => {
    await pool.end()
    const a = new pg.Client({ connectionString: serverUrl })
    await a.connect()
    await a.query(`drop database if exists "${name}" with (force)`)
    await a.end()
  }
  return { name, url: url.toString(), pool, drop }
}

/**
 * A connection to the server for a group's own CREATE and DROP DATABASE, kept for the whole group. pg
 * emits an idle connection's failure as 'error', which unheard would end the bench: it is logged, and
 * the next query on the connection fails inside the group instead.
 */
export const connectAdmin = async (serverUrl: string, log: Logger, group: string): Promise<pg.Client> => {
  const admin = new pg.Client({ connectionString: serverUrl })
  admin.on('error', (err) => log.warn({ err }, `bench ${group}: the admin connection failed`))
  await admin.connect()
  return admin
}

/**
 * CREATE DATABASE `name` TEMPLATE `template`. A client of the template that has just disconnected (a
 * loader process that exited) can leave its backend alive for a moment, and PostgreSQL then refuses
 * the copy ("being accessed by other users", 55006): tried again for up to `withinMs`.
 */
export const copyDatabase = async (admin: pg.Client, name: string, template: string, withinMs = 15_000): Promise<void> => {
  const deadline = Date.now() + withinMs
  for (;;) {
    try {
      await admin.query(`create database "${name}" template "${template}"`)
      return
    } catch (e) {
      if ((e as { code?: unknown }).code !== '55006' || Date.now() > deadline) throw e
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** Rows of the event table. */
export const countEvents = async (pool: pg.Pool, table = EVENT_TABLE): Promise<number> => {
  const { rows } = await pool.query<{ n: string }>(`select count(*)::text as n from ${table}`)
  return Number(rows[0]?.n ?? '0')
}
