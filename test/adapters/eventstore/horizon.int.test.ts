import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Client, type Pool } from 'pg'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registerHorizonMetrics } from '../../../src/adapters/http/horizon-metrics.ts'
import { listenerNameOf, makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import { horizonHolders, readHorizon } from '../../../src/adapters/eventstore/postgres-horizon.ts'
import { eventStoreMigrations, migrateEventStore } from '../../../src/adapters/postgres/migrations/eventstore.ts'
import type { EventStore, EventToAppend, Position, ReadItem } from '../../../src/application/ports/event-store.ts'
import { silentLogger } from '../../../src/logger.ts'
import { EVENT_STORE_SCHEMA } from '../../../src/main.ts'
import { makeKnex, makePostgresPool } from '../../../src/platform/postgres/pool.ts'
import { runCli } from '../../support/cli.ts'
import { envWithoutSatangSettings } from '../../support/process.ts'
import { freshDatabase } from '../http/database.ts'
import { capturingLogger } from '../../support/log-lines.ts'
import { freshEventStoreSchema, type TestSchema } from '../../support/postgres.ts'

/**
 * Issue 24: readers of the global order wait only for satang's appends in flight (registered by
 * their insert's lock on the events table, or the advisory lock of earlier releases), never for other transactions; a dead appender never holds them; a log written
 * before the registration existed is upgraded and read completely.
 */

const log = silentLogger()
let schema: TestSchema
let store: EventStore

beforeAll(async () => {
  schema = await freshEventStoreSchema('horizon')
  store = makePostgresEventStore({ pool: schema.pool(4), log }, { schema: schema.schema })
})
afterAll(async () => {
  await store.close()
  await schema.drop()
})

const anEvent = (n = 1): EventToAppend => ({
  eventId: randomUUID(),
  type: 'ThingHappened',
  schemaVersion: 1,
  data: { n },
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'test' },
})

/** The insert today's append path ran (no registration of its own): only the trigger registers it. */
const rawInsert = (s: string): string =>
  `insert into "${s}".events (stream_name, stream_revision, event_id, type, schema_version, data, metadata) values ($1, 0, $2, 'ThingHappened', 1, '{"n":1}', '{"correlationId":"c","causationId":"c","recordedAt":"2026-01-01T00:00:00.000Z","source":"test"}')`

const ids = (items: ReadonlyArray<ReadItem>): string[] => items.map((i) => (E.isRight(i) ? i.right.eventId : 'undecodable'))

const readFrom = async (s: EventStore, from: Position | undefined): Promise<string[]> => {
  const r = await s.readAll({ ...(from === undefined ? {} : { from }), maxCount: 100_000 })()
  if (E.isLeft(r)) throw new Error(`readAll: ${r.left._tag}`)
  return ids(r.right)
}

const marker = async (): Promise<Position> => {
  const m = await store.append(`m-${randomUUID()}`, [anEvent()], 'any')()
  if (E.isLeft(m)) throw new Error('marker')
  return m.right.position
}

const waitFor = async (what: string, ok: () => Promise<boolean>, ms = 2_000): Promise<void> => {
  const start = performance.now()
  while (!(await ok())) {
    if (performance.now() - start > ms) throw new Error(`${what}: not within ${String(ms)} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** The pool, and the text of every statement run through its own `query` (the store's separate `pg_notify`; statements on a connection taken from it are not seen). */
const recordingPool = (base: Pool): { pool: Pool; texts: string[]; onConnections: string[] } => {
  const texts: string[] = []
  // Statements sent on connections taken with connect() (appends run there).
  const onConnections: string[] = []
  const textOf = (config: unknown): string => (typeof config === 'string' ? config : String((config as { text?: unknown }).text))
  const pool = new Proxy(base, {
    get(target, key) {
      if (key === 'query') {
        return (config: unknown, ...rest: unknown[]) => {
          texts.push(textOf(config))
          return (target.query as (...a: unknown[]) => unknown).call(target, config, ...rest)
        }
      }
      if (key === 'connect') {
        return async () => {
          const client = await target.connect()
          const query = client.query.bind(client) as (...a: unknown[]) => unknown
          return new Proxy(client, {
            get(c, k) {
              if (k === 'query') {
                return (config: unknown, ...rest: unknown[]) => {
                  onConnections.push(textOf(config))
                  return query(config, ...rest)
                }
              }
              const v: unknown = Reflect.get(c, k)
              return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(c) : v
            },
          })
        }
      }
      const v: unknown = Reflect.get(target, key)
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
  return { pool, texts, onConnections }
}

/** An appender that inserted one event and stays open: its pid and event id. */
const openAppender = async (): Promise<{ client: Client; pid: number; eventId: string }> => {
  const c = new Client({ connectionString: schema.url })
  await c.connect()
  c.on('error', () => undefined) // terminated on purpose
  const eventId = randomUUID()
  await c.query('begin')
  await c.query(rawInsert(schema.schema), [`held-${randomUUID()}`, eventId])
  const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid ?? 0
  return { client: c, pid, eventId }
}

/** The keys of the advisory registration (class 1515847686, migrations 0004 and 0007) that backend `pid` holds shared in this database. */
const registrationKeys = async (c: Pick<Client, 'query'>, pid: number): Promise<number[]> =>
  (
    await c.query<{ k: number }>(
      `select objid::int as k from pg_locks where pid = $1 and locktype = 'advisory' and classid = 1515847686 and objsubid = 2 and mode = 'ShareLock' and granted
          and database = (select oid from pg_database where datname = current_database()) order by 1`,
      [pid],
    )
  ).rows.map((r) => r.k)

/** The modes in which backend `pid` holds the events table of schema `s` (0010's registration is its RowExclusiveLock). */
const eventsLockModes = async (c: Pick<Client, 'query'>, pid: number, s: string): Promise<string[]> =>
  (
    await c.query<{ mode: string }>(`select mode from pg_locks where pid = $1 and locktype = 'relation' and relation = $2::regclass and granted order by 1`, [
      pid,
      `"${s}".events`,
    ])
  ).rows.map((r) => r.mode)

describe('registration', () => {
  it('every insert is registered by its own lock on the events table, taken before it has a transaction id, and takes no advisory lock (a new installation, 0010)', async () => {
    const { client, pid } = await openAppender()
    try {
      expect(await eventsLockModes(client, pid, schema.schema)).toEqual(['RowExclusiveLock'])
      expect(await registrationKeys(client, pid)).toEqual([])
      // A second insert of the same transaction, after its id: registered by the first (its event is there).
      await client.query(rawInsert(schema.schema), [`held-again-${randomUUID()}`, randomUUID()])
    } finally {
      await client.query('rollback')
      await client.end()
    }
  })

  it('refuses an insert by a transaction that wrote before registering, and accepts it after register_append() as the first statement', async () => {
    const c = new Client({ connectionString: schema.url })
    await c.connect()
    try {
      await c.query('begin')
      await c.query('select pg_current_xact_id()')
      await expect(c.query(rawInsert(schema.schema), [`late-${randomUUID()}`, randomUUID()])).rejects.toThrow(/wrote before it registered as an appender/)
      await c.query('rollback')
      // A savepoint rolled back takes its insert's lock with it: the transaction's id stays, unregistered.
      await c.query('begin')
      await c.query('savepoint s')
      await c.query(rawInsert(schema.schema), [`undone-${randomUUID()}`, randomUUID()])
      await c.query('rollback to savepoint s')
      await expect(c.query(rawInsert(schema.schema), [`late-${randomUUID()}`, randomUUID()])).rejects.toThrow(/wrote before it registered as an appender/)
      await c.query('rollback')
      await c.query('begin')
      await c.query(`select "${schema.schema}".register_append()`)
      expect(await eventsLockModes(c, (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid ?? 0, schema.schema)).toContain('RowExclusiveLock')
      await c.query(`create temporary table scratch (n int) on commit drop`)
      await c.query('insert into scratch values (1)')
      await c.query(rawInsert(schema.schema), [`early-${randomUUID()}`, randomUUID()])
      await c.query('commit')
    } finally {
      await c.end()
    }
  })
  it('while the events table is locked in SHARE mode (an operator pausing appends), an append and a register_append() wait for it, and both go on once it is released', async () => {
    const operator = new Client({ connectionString: schema.url })
    await operator.connect()
    const c = new Client({ connectionString: schema.url })
    await c.connect()
    const store = makePostgresEventStore({ pool: schema.pool(2), log }, { schema: schema.schema })
    try {
      // As docs/operations.md says: the events table in SHARE mode, in a transaction held open.
      await operator.query('begin')
      await operator.query(`lock table "${schema.schema}".events in share mode`)
      let appended = false
      const stream = `paused-${randomUUID()}`
      const appending = store.append(stream, [anEvent()], 'no_stream')().then((r) => {
        appended = E.isRight(r)
        return r
      })
      await c.query('begin')
      let registered = false
      const registering = c.query(`select "${schema.schema}".register_append()`).then(() => (registered = true))
      await new Promise((r) => setTimeout(r, 300))
      expect({ appended, registered }).toEqual({ appended: false, registered: false })
      await operator.query('commit')
      expect(E.isRight(await appending)).toBe(true)
      await registering
      expect({ appended, registered }).toEqual({ appended: true, registered: true })
      await c.query(rawInsert(schema.schema), [`after-pause-${randomUUID()}`, randomUUID()])
      await c.query('commit')
      const stored = await store.readStream(stream)()
      expect(E.isRight(stored) && stored.right.length).toBe(1)
    } finally {
      await operator.end()
      await c.end()
      await store.close()
    }
  })
})

describe('what readers wait for', () => {
  it('an older append in flight holds readers back; a transaction that is not an append does not', async () => {
    const from = await marker()
    const other = new Client({ connectionString: schema.url })
    await other.connect()
    try {
      await other.query('begin')
      await other.query('select pg_current_xact_id()') // a transaction id, open, but not an appender
      const a = anEvent()
      expect(E.isRight(await store.append(`free-${randomUUID()}`, [a], 'no_stream')())).toBe(true)
      expect(await readFrom(store, from)).toEqual([a.eventId])
    } finally {
      await other.query('rollback')
      await other.end()
    }
  })

  it('an appender terminated mid-transaction (pg_terminate_backend) releases the horizon at once; nothing is skipped', async () => {
    const from = await marker()
    const held = await openAppender()
    const later = anEvent()
    expect(E.isRight(await store.append(`after-${randomUUID()}`, [later], 'no_stream')())).toBe(true)
    expect(await readFrom(store, from)).toEqual([])
    const killer = new Client({ connectionString: schema.url })
    await killer.connect()
    await killer.query('select pg_terminate_backend($1, 5000)', [held.pid])
    await killer.end()
    await held.client.end().catch(() => undefined)
    expect(await readFrom(store, from)).toEqual([later.eventId])
  })

  it('an appender whose process is SIGKILLed mid-transaction releases the horizon as its backend ends; nothing is skipped', async () => {
    const from = await marker()
    const script = `
      import pg from 'pg'
      const c = new pg.Client({ connectionString: process.env.HZ_URL })
      await c.connect()
      await c.query('begin')
      await c.query(process.env.HZ_SQL, ['killed-' + crypto.randomUUID(), crypto.randomUUID()])
      const r = await c.query('select pg_backend_pid() as pid')
      process.stdout.write('held ' + r.rows[0].pid + '\\n')
      setInterval(() => undefined, 60000)`
    const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), env: { ...process.env, HZ_URL: schema.url, HZ_SQL: rawInsert(schema.schema) }, stdio: ['ignore', 'pipe', 'inherit'] })
    const pid = await new Promise<number>((resolve, reject) => {
      let out = ''
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString()
        const m = /held (\d+)/.exec(out)
        if (m !== null) resolve(Number(m[1]))
      })
      child.on('exit', (code) => reject(new Error(`child exited ${String(code)}`)))
    })
    const later = anEvent()
    expect(E.isRight(await store.append(`after-kill-${randomUUID()}`, [later], 'no_stream')())).toBe(true)
    expect(await readFrom(store, from)).toEqual([])
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await exited
    await waitFor('the killed appender’s backend to end and the later event to be readable', async () => (await readFrom(store, from)).length > 0)
    expect(await readFrom(store, from)).toEqual([later.eventId])
    expect((await schema.db.raw('select count(*)::int as n from pg_stat_activity where pid = ?', [pid])).rows[0].n).toBe(0)
  })

  it('a live subscriber held back by a stuck appender logs it with its pid and transaction id, the horizon age is a metric, and the events arrive once it ends', async () => {
    const from = await marker()
    const { log: warnings, lines } = capturingLogger()
    const pool = schema.pool(4)
    const watched = makePostgresEventStore({ pool, log: warnings }, { schema: schema.schema, horizonWarnSeconds: 1 })
    const seen: string[] = []
    const sub = watched.subscribeToAll({ from }, (item) => {
      seen.push(...ids([item]))
      return Promise.resolve()
    })
    const held = await openAppender()
    const txId = (await held.client.query<{ x: string }>('select pg_current_xact_id()::text as x')).rows[0]?.x ?? ''
    try {
      const later = anEvent()
      expect(E.isRight(await store.append(`after-stuck-${randomUUID()}`, [later], 'no_stream')())).toBe(true)
      await waitFor('the warning', () => Promise.resolve(lines.some((l) => l.includes('held back by an append transaction'))), 5_000)
      const warning = JSON.parse(lines.find((l) => l.includes('held back by an append transaction')) ?? '{}') as { pid?: number; horizon?: string; msg?: string }
      expect(warning.pid).toBe(held.pid)
      expect(warning.horizon).toBe(txId)
      expect(warning.msg).toContain(`pid ${String(held.pid)}, transaction ${txId}`)
      expect(seen).toEqual([])
      const registry = new Registry()
      registerHorizonMetrics(registry, pool, schema.schema, log)
      const age = /^satang_eventstore_horizon_age_seconds (\S+)$/m.exec(await registry.metrics())
      expect(Number(age?.[1])).toBeGreaterThanOrEqual(1)
      await held.client.query('commit')
      await waitFor('both events at the subscriber', () => Promise.resolve(seen.length === 2))
      expect(seen).toEqual([held.eventId, later.eventId])
    } finally {
      await held.client.end()
      await sub.stop()
      await watched.close()
    }
  })
})

describe('upgrade of a log written before the registration existed', () => {
  it('a log made by the previous migrations and appends that never registered, one still open during the upgrade, is read completely and in order', async () => {
    const old = await freshEventStoreSchema('horizon_old')
    try {
      // The schema as the previous release left it: migrations 0001–0003, no registration.
      await old.db.raw(`drop trigger events_register on "${old.schema}".events; drop function "${old.schema}".events_register(); drop function "${old.schema}".register_append()`)
      await old.db.raw(`delete from "${old.schema}".eventstore_migrations where name = '0004_horizon'`)
      const c = new Client({ connectionString: old.url })
      await c.connect()
      const written: string[] = []
      for (let i = 0; i < 5; i++) {
        const id = randomUUID()
        await c.query(rawInsert(old.schema), [`old-${String(i)}-${randomUUID()}`, id])
        written.push(id)
      }
      // An old appender still in flight when the upgrade starts: the migration waits for it.
      const inFlight = randomUUID()
      await c.query('begin')
      await c.query(rawInsert(old.schema), [`old-open-${randomUUID()}`, inFlight])
      const migrating = migrateEventStore({ db: old.db, log }, { schema: old.schema })()
      let migrated = false
      void migrating.then(() => (migrated = true))
      await new Promise((r) => setTimeout(r, 300))
      expect(migrated).toBe(false)
      await c.query('commit')
      expect(E.isRight(await migrating)).toBe(true)
      written.push(inFlight)
      // The old append path again, after the upgrade: registered by the trigger.
      const after = randomUUID()
      await c.query(rawInsert(old.schema), [`old-after-${randomUUID()}`, after])
      written.push(after)
      await c.end()
      const upgraded = makePostgresEventStore({ pool: old.pool(2), log }, { schema: old.schema })
      try {
        expect(await readFrom(upgraded, undefined)).toEqual(written)
      } finally {
        await upgraded.close()
      }
    } finally {
      await old.drop()
    }
  })
})

/** read_live's header: the horizon it read below. */
const liveBelow = async (c: Pick<Client, 'query'>, s: string): Promise<bigint> =>
  BigInt((await c.query<{ below: string }>(`select o_tx_id as below from "${s}".read_live('0'::xid8, 0, 0, null) limit 1`)).rows[0]?.below ?? '0')

describe('the registration by the insert\'s own lock (migrations 0009 and 0010)', () => {
  it('readers wait for a transaction with an id that holds the events table\'s RowExclusiveLock (taken by LOCK TABLE, or by an UPDATE or DELETE that matched no row) or the advisory registration (readHorizon, horizonHolders, read_live), and not for one holding another table\'s, another schema\'s events or another advisory key', async () => {
    const other = await freshEventStoreSchema('horizon_other')
    const c = new Client({ connectionString: schema.url })
    const r = new Client({ connectionString: schema.url })
    await c.connect()
    await r.connect()
    const holds: ReadonlyArray<readonly [string, string, boolean]> = [
      ['this log\'s events, row exclusive', `lock table "${schema.schema}".events in row exclusive mode`, true],
      // No row matched, so no trigger refused them: each holds the table's RowExclusiveLock to its end.
      ['an update of this log\'s events that matched no row', `update "${schema.schema}".events set type = type where false`, true],
      ['a delete from this log\'s events that matched no row', `delete from "${schema.schema}".events where false`, true],
      ['the advisory registration (0004, 0007)', 'select pg_advisory_xact_lock_shared(1515847686, 1)', true],
      ['another advisory key of the class', 'select pg_advisory_xact_lock_shared(1515847686, 2)', false],
      ['this log\'s events, access share', `lock table "${schema.schema}".events in access share mode`, false],
      ['another schema\'s events, row exclusive', `lock table "${other.schema}".events in row exclusive mode`, false],
      ['another table, row exclusive', `lock table "${schema.schema}".eventstore_migrations in row exclusive mode`, false],
    ]
    try {
      for (const [what, sql, appender] of holds) {
        await c.query('begin')
        await c.query(sql)
        const x = (await c.query<{ x: string }>('select pg_current_xact_id()::text as x')).rows[0]?.x ?? ''
        // A later transaction ends, so that x is below the snapshots' xmax, among their running ids
        // (the newest running id is at or past xmax, where every reader waits for it anyway).
        await r.query('select pg_current_xact_id()')
        const waited = (await horizonHolders(r, schema.schema)).some((h) => h.txId === x)
        expect({ what, waited }).toEqual({ what, waited: appender })
        if (appender) {
          // Other files' appenders in this database may hold the horizon lower still; never higher.
          expect({ what, below: BigInt((await readHorizon(r, schema.schema)).below) <= BigInt(x) }).toEqual({ what, below: true })
          expect({ what, live: (await liveBelow(r, schema.schema)) <= BigInt(x) }).toEqual({ what, live: true })
        }
        await c.query('rollback')
      }
    } finally {
      await c.end()
      await r.end()
      await other.drop()
    }
  })

  it('an upgraded log keeps its appenders on the advisory lock until `satang migrate --every-process-upgraded`, then on their insert\'s lock alone; readers pass over none of them before or after', async () => {
    const database = await freshDatabase('hzlock')
    const s = EVENT_STORE_SCHEMA
    const pool = makePostgresPool({ url: database.url }, log)
    const db = makeKnex(pool)
    const upgraded = makePostgresEventStore({ pool, log }, { schema: s })
    const cwd = process.cwd()
    const env = envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url, SATANG_LOG_LEVEL: 'warn' })
    try {
      // The log as the previous release left it: migrations 0001–0008.
      await db.transaction(async (trx) => {
        await trx.raw(`create schema "${s}"`)
        await trx.raw(`create table "${s}".eventstore_migrations (name text primary key, applied_at timestamptz not null default now())`)
        for (const m of eventStoreMigrations(s).filter((m) => m.name < '0009')) {
          await m.up(trx)
          await trx.withSchema(s).into('eventstore_migrations').insert({ name: m.name })
        }
      })
      const first = await runCli(['migrate'], { env, cwd })
      expect(first.code, first.stderr).toBe(0)
      expect(first.stdout).toContain('satang: event store: 0009_read_live_insert_lock\n')
      expect(first.stdout).toContain('satang: event store: 0010_register_by_insert_lock waits until every satang process reading this log runs this release; then run satang migrate --every-process-upgraded\n')

      /** An appender in this database (the only one: its readers wait for nobody else), open until the readers have been looked at. */
      const heldBack = async (advisoryKeys: number[]): Promise<void> => {
        const m = await upgraded.append(`m-${randomUUID()}`, [anEvent()], 'any')()
        if (E.isLeft(m)) throw new Error('marker')
        const from = m.right.position
        const reader = new Client({ connectionString: database.url })
        await reader.connect()
        const c = new Client({ connectionString: database.url })
        await c.connect()
        const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid ?? 0
        try {
          const heldId = randomUUID()
          await c.query('begin')
          await c.query(rawInsert(s), [`held-${randomUUID()}`, heldId])
          expect(await registrationKeys(c, pid)).toEqual(advisoryKeys)
          expect(await eventsLockModes(c, pid, s)).toEqual(['RowExclusiveLock'])
          const x = BigInt((await c.query<{ x: string }>('select pg_current_xact_id()::text as x')).rows[0]?.x ?? '0')
          const later = anEvent()
          expect(E.isRight(await upgraded.append(`after-${randomUUID()}`, [later], 'no_stream')())).toBe(true)
          expect(await readFrom(upgraded, from)).toEqual([])
          // At most x: a transaction of another database caught between taking its id and showing
          // its lock counts as an appender for that moment (the horizon only waits longer).
          expect(await liveBelow(reader, s)).toBeLessThanOrEqual(x)
          await c.query('commit')
          expect(await readFrom(upgraded, from)).toEqual([heldId, later.eventId])
        } finally {
          await c.end()
          await reader.end()
        }
      }
      await heldBack([1])

      const second = await runCli(['migrate', '--every-process-upgraded'], { env, cwd })
      expect(second.code, second.stderr).toBe(0)
      expect(second.stdout).toContain('satang: event store: 0010_register_by_insert_lock\n')
      expect(second.stdout).not.toContain('waits until')
      await heldBack([])

      const again = await runCli(['migrate', '--every-process-upgraded'], { env, cwd })
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout).not.toContain('satang: event store:')
    } finally {
      await upgraded.close()
      await db.destroy()
      await pool.end()
      await database.drop()
    }
  }, 60_000)
})

describe('live reads in one round trip (read_live, migration 0005)', () => {
  const follow = (s: EventStore, from: Position): { seen: string[]; stop: () => Promise<void> } => {
    const seen: string[] = []
    const sub = s.subscribeToAll({ from }, (item) => {
      seen.push(...ids([item]))
      return Promise.resolve()
    })
    return { seen, stop: () => sub.stop() }
  }

  it('a subscriber on a schema made before read_live still gets every event in order (two round trips), and the migration adds it', async () => {
    const old = await freshEventStoreSchema('horizon_pre_live')
    const { log: warnings, lines } = capturingLogger()
    try {
      await old.db.raw(`drop function "${old.schema}".read_live(xid8, bigint, integer, text)`)
      await old.db.raw(`delete from "${old.schema}".eventstore_migrations where name in ('0005_read_live', '0009_read_live_insert_lock')`)
      const before = makePostgresEventStore({ pool: old.pool(2), log: warnings }, { schema: old.schema })
      const first = await before.append(`pre-${randomUUID()}`, [anEvent(1)], 'no_stream')()
      if (E.isLeft(first)) throw new Error('append')
      const sub = follow(before, first.right.position)
      const written: string[] = []
      try {
        for (let i = 0; i < 3; i++) {
          const e = anEvent(i)
          expect(E.isRight(await before.append(`pre-${randomUUID()}`, [e], 'no_stream')())).toBe(true)
          written.push(e.eventId)
        }
        await waitFor('three events at the subscriber', () => Promise.resolve(sub.seen.length === 3))
        expect(sub.seen).toEqual(written)
        expect(lines.some((l) => l.includes('predates read_live'))).toBe(true)
      } finally {
        await sub.stop()
        await before.close()
      }
      expect(E.isRight(await migrateEventStore({ db: old.db, log }, { schema: old.schema })())).toBe(true)
      const fn = await old.db.raw<{ rows: Array<{ src: string }> }>(`select p.prosrc as src from pg_proc p join pg_namespace s on s.oid = p.pronamespace where s.nspname = ? and p.proname = 'read_live'`, [old.schema])
      expect(fn.rows).toHaveLength(1)
      // 0005 and then 0009: the insert's own lock accepted as a registration.
      expect(fn.rows[0]?.src).toContain("a.mode = 'RowExclusiveLock'")
    } finally {
      await old.drop()
    }
  })

  it('the first append after a quiet spell sends the wake-up from its own statement (no pg_notify after it); an append under `any` sends one after its commit; a listener elsewhere hears each', async () => {
    const base = schema.pool(2)
    const { pool, texts } = recordingPool(base)
    // Bare wake-ups only (announcements.int.test.ts tests those): never announce.
    const writer = makePostgresEventStore({ pool, log }, { schema: schema.schema, announceLimits: { running: 0, perSecond: 0 } })
    // Named as a subscriber's LISTEN connection: appenders notify only while one listens elsewhere.
    const listener = new Client({ connectionString: schema.url, application_name: listenerNameOf(schema.schema) })
    await listener.connect()
    let heard = 0
    listener.on('notification', (n) => {
      if (n.channel === `${schema.schema}_events`) heard++
    })
    await listener.query(`listen "${schema.schema}_events"`)
    const separateNotifies = (): number => texts.filter((t) => t.startsWith('select pg_notify')).length
    try {
      await new Promise((r) => setTimeout(r, 20))
      expect(E.isRight(await writer.append(`quiet-${randomUUID()}`, [anEvent()], 'no_stream')())).toBe(true)
      await waitFor('the notification of the append', () => Promise.resolve(heard === 1))
      expect(separateNotifies()).toBe(0)
      await new Promise((r) => setTimeout(r, 20))
      expect(E.isRight(await writer.append(`queued-${randomUUID()}`, [anEvent()], 'any')())).toBe(true)
      await waitFor('the notification sent after the queued append', () => Promise.resolve(heard === 2))
      expect(separateNotifies()).toBe(1)
    } finally {
      await listener.end()
      await writer.close()
    }
  })

  it('while no subscriber listens in another session, appends notify nobody: no pg_notify in their statement nor after it', async () => {
    const base = schema.pool(2)
    const { pool, texts, onConnections } = recordingPool(base)
    // Looks once, at its first append, and trusts the answer for a minute.
    const writer = makePostgresEventStore({ pool, log }, { schema: schema.schema, listenerLookupMs: 60_000 })
    // Listens on the channel, but is not a subscriber's connection (another application_name).
    const eavesdropper = new Client({ connectionString: schema.url, application_name: 'not-a-satang-subscriber' })
    await eavesdropper.connect()
    let heard = 0
    eavesdropper.on('notification', (n) => {
      if (n.channel === `${schema.schema}_events`) heard++
    })
    await eavesdropper.query(`listen "${schema.schema}_events"`)
    try {
      // The first append looks for subscribers elsewhere (and notifies, not knowing yet); wait for the answer.
      expect(E.isRight(await writer.append(`first-${randomUUID()}`, [anEvent()], 'no_stream')())).toBe(true)
      await new Promise((r) => setTimeout(r, 200))
      heard = 0
      const separateNotifies = (): number => texts.filter((t) => t.startsWith('select pg_notify')).length
      const sentBefore = separateNotifies()
      const statementsBefore = onConnections.length
      for (let i = 0; i < 5; i++) {
        expect(E.isRight(await writer.append(`exact-${randomUUID()}`, [anEvent(i)], 'no_stream')())).toBe(true)
        expect(E.isRight(await writer.append(`queued-${randomUUID()}`, [anEvent(i)], 'any')())).toBe(true)
        expect(E.isRight(await writer.append(`batch-${randomUUID()}`, [anEvent(i), anEvent(i + 10)], 'no_stream')())).toBe(true)
      }
      await new Promise((r) => setTimeout(r, 100))
      expect(heard).toBe(0)
      // The appends in their own statement ran its quiet form: neither a notification nor an
      // announcement in it, not even one its parameters would switch off.
      const own = onConnections.slice(statementsBefore).filter((t) => t.includes('insert into'))
      expect(own).toHaveLength(10)
      expect(own.filter((t) => t.includes('pg_notify') || t.includes('announce'))).toEqual([])
      // No separate pg_notify statement either (the 'any' appends sent one after their commit before).
      expect(separateNotifies()).toBe(sentBefore)
    } finally {
      await eavesdropper.end()
      await writer.close()
    }
  })

  /**
   * A writer whose lookup for subscribers elsewhere (every `writerLookupMs`) has found nobody, then a
   * follower (another store, another pool) subscribed from a marker after it; `body` runs with both,
   * and with `lagOf`: appends one event and returns how long after its acknowledgement the follower had it.
   */
  const afterLookupFoundNobody = async (
    writerLookupMs: number,
    followerConfig: { readonly pollIntervalMs: number; readonly listenerLookupMs: number },
    body: (lagOf: (what: string, timeoutMs: number) => Promise<number>) => Promise<void>,
  ): Promise<void> => {
    const writer = makePostgresEventStore({ pool: schema.pool(2), log }, { schema: schema.schema, listenerLookupMs: writerLookupMs })
    const follower = makePostgresEventStore({ pool: schema.pool(2), log }, { schema: schema.schema, ...followerConfig })
    try {
      expect(E.isRight(await writer.append(`before-${randomUUID()}`, [anEvent()], 'no_stream')())).toBe(true)
      await new Promise((r) => setTimeout(r, 100)) // the writer's lookup has answered: nobody else listens
      const from = await marker()
      const seen = new Map<string, number>()
      const sub = follower.subscribeToAll({ from }, (item) => {
        if (E.isRight(item)) seen.set(item.right.eventId, performance.now())
        return Promise.resolve()
      })
      const lagOf = async (what: string, timeoutMs: number): Promise<number> => {
        const e = anEvent()
        expect(E.isRight(await writer.append(`late-${randomUUID()}`, [e], 'no_stream')())).toBe(true)
        const at = performance.now()
        await waitFor(what, () => Promise.resolve(seen.has(e.eventId)), timeoutMs)
        return (seen.get(e.eventId) ?? Number.NaN) - at
      }
      try {
        await body(lagOf)
      } finally {
        await sub.stop()
      }
    } finally {
      await follower.close()
      await writer.close()
    }
  }

  it('a subscriber that starts after an appender elsewhere last looked (and found nobody) still gets new events within a few ms, not at its backed-off poll', async () => {
    // The appender looks for subscribers only once a minute: it goes on believing nobody listens. The
    // follower's start-up polling lasts twice its own lookup interval: 6 s here.
    await afterLookupFoundNobody(60_000, { pollIntervalMs: 10_000, listenerLookupMs: 3_000 }, async (lagOf) => {
      await new Promise((r) => setTimeout(r, 2_000)) // caught up and idle: its polling has backed off to seconds
      const lags: number[] = []
      for (let i = 0; i < 4; i++) {
        lags.push(await lagOf('the event, delivered by the new subscriber', 3_000))
        await new Promise((r) => setTimeout(r, 300))
      }
      // Within a few of STARTUP_POLL_MS (20 ms). Without the start-up polling, at the subscriber's next
      // look: after a delivery it looks again 2, 6, 14 … 254, 510 ms later, so 300 ms after one, about 200 ms late.
      lags.sort((a, b) => a - b)
      expect(lags[1], `lags ${lags.map((l) => l.toFixed(1)).join(', ')} ms`).toBeLessThan(80)
    })
  })

  it('the first append after a quiet spell longer than the lookup interval notifies, though nobody listened when the appender last looked', async () => {
    // The follower's start-up polling ends after 200 ms: after that only a notification (or its 10 s poll) brings events.
    await afterLookupFoundNobody(300, { pollIntervalMs: 10_000, listenerLookupMs: 100 }, async (lagOf) => {
      // Quiet for 1.5 s: the writer's answer is stale, the follower's start-up polling long over and
      // its own polling backed off to about a second.
      await new Promise((r) => setTimeout(r, 1_500))
      // Woken by the append's own notification; trusting the stale answer, it waited for the follower's next look.
      expect(await lagOf('the event after the quiet spell', 12_000)).toBeLessThan(150)
    })
  })

  it('with a stream prefix, the header row and the other streams never reach the handler, and the cursor moves past them', async () => {
    const from = await marker()
    const mine = `live-${randomUUID().slice(0, 8)}`
    const seen: string[] = []
    const sub = store.subscribeToAll({ from, streamNamePrefix: `${mine}-` }, (item) => {
      seen.push(...ids([item]))
      return Promise.resolve()
    })
    try {
      const wanted: string[] = []
      for (let i = 0; i < 4; i++) {
        const other = anEvent(i)
        expect(E.isRight(await store.append(`elsewhere-${randomUUID()}`, [other], 'no_stream')())).toBe(true)
        const e = anEvent(i)
        expect(E.isRight(await store.append(`${mine}-${String(i)}`, [e], 'no_stream')())).toBe(true)
        wanted.push(e.eventId)
      }
      await waitFor('the four events of the prefix', () => Promise.resolve(seen.length === 4))
      await new Promise((r) => setTimeout(r, 100))
      expect(seen).toEqual(wanted)
    } finally {
      await sub.stop()
    }
  })
})
