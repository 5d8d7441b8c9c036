import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore, type PostgresEventStoreConfig } from '../../../src/adapters/eventstore/postgres.ts'
import { migrateEventStore } from '../../../src/adapters/postgres/migrations/eventstore.ts'
import type { EventStore, EventToAppend, Position, ReadItem } from '../../../src/application/ports/event-store.ts'
import { silentLogger } from '../../../src/logger.ts'
import { capturingLogger } from '../../support/log-lines.ts'
import { observedPool } from '../../support/observed-pool.ts'
import { freshEventStoreSchema, type TestSchema } from '../../support/postgres.ts'

/**
 * Issue 24, live delivery near a bare NOTIFY: an append announces its events in its notification
 * (migration 0006), and a subscriber in another process (here: a store on pools of its own, which
 * hears only what PostgreSQL delivers on the channel) delivers them without reading, only when
 * nothing older can still come, and only from payloads signed with the installation's key.
 */

const log = silentLogger()
let schema: TestSchema
let writer: EventStore

beforeAll(async () => {
  schema = await freshEventStoreSchema('announce')
  // Looks for subscribers elsewhere at every append (a follower started by a test is seen at once).
  writer = makePostgresEventStore({ pool: schema.pool(8), log }, { schema: schema.schema, listenerLookupMs: 0 })
})
afterAll(async () => {
  await writer.close()
  await schema.drop()
})

const anEvent = (n = 1, data: EventToAppend['data'] = { n }): EventToAppend => ({
  eventId: randomUUID(),
  type: 'ThingHappened',
  schemaVersion: 1,
  data,
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'test' },
})

const idOf = (i: ReadItem): string => (E.isRight(i) ? i.right.eventId : 'undecodable')

const waitFor = async (what: string, ok: () => boolean, ms = 5_000): Promise<void> => {
  const start = performance.now()
  while (!ok()) {
    if (performance.now() - start > ms) throw new Error(`${what}: not within ${String(ms)} ms`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

const append = async (s: EventStore, events: ReadonlyArray<EventToAppend>, stream = `s-${randomUUID()}`): Promise<Position> => {
  const r = await s.append(stream, events, 'no_stream')()
  if (E.isLeft(r)) throw new Error(`append: ${r.left._tag}`)
  return r.right.position
}

/** A subscriber on a store of its own, counting the events each path delivered. */
const follower = async (
  s: TestSchema,
  from: Position,
  config: PostgresEventStoreConfig = {},
): Promise<{ seen: string[]; items: ReadItem[]; positions: Position[]; counts: { announcement: number; read: number }; caughtUp: () => Promise<void>; stop: () => Promise<void> }> => {
  const counts = { announcement: 0, read: 0 }
  const store = makePostgresEventStore({ pool: s.pool(2), log }, { schema: s.schema, ...config, observeDelivery: (how, n) => void (counts[how] += n) })
  const seen: string[] = []
  const items: ReadItem[] = []
  const positions: Position[] = []
  const sub = store.subscribeToAll({ from }, (item) => {
    seen.push(idOf(item))
    items.push(item)
    if (E.isRight(item)) positions.push(item.right.position)
    return Promise.resolve()
  })
  // Caught up and listened to: its LISTEN connection is open, and two markers appended since have
  // arrived (the writer looks for listeners at each append, in the background: the first marker's
  // lookup has answered by the second).
  const caughtUp = async (): Promise<void> => {
    const start = performance.now()
    const listening = async (): Promise<boolean> =>
      (await s.db.raw<{ rows: Array<{ n: number }> }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'satang-listen-%'`)).rows[0]?.n !== 0
    while (!(await listening())) {
      if (performance.now() - start > 5_000) throw new Error('the follower never listened')
      await new Promise((r) => setTimeout(r, 10))
    }
    for (let i = 0; i < 2; i++) {
      const e = anEvent()
      await append(writer, [e])
      await waitFor('the marker at the subscriber', () => seen.includes(e.eventId))
    }
  }
  return {
    seen,
    items,
    positions,
    counts,
    caughtUp,
    stop: async () => {
      await sub.stop()
      await store.close()
    },
  }
}

const head = async (): Promise<Position> => append(writer, [anEvent()])
/** A plain LISTEN connection on the schema's channel, keeping every payload it hears (announcements and bare wake-ups alike). */
const channelListener = async (): Promise<{ client: Client; payloads: string[] }> => {
  const client = new Client({ connectionString: schema.url })
  await client.connect()
  const payloads: string[] = []
  client.on('notification', (n) => {
    if (n.channel === `${schema.schema}_events`) payloads.push(n.payload ?? '')
  })
  await client.query(`listen "${schema.schema}_events"`)
  return { client, payloads }
}

type Follower = Awaited<ReturnType<typeof follower>>

/**
 * A follower caught up and then left alone: polls after activity come at 2, 4, 8 … ms, so wait until
 * the next one is far off, and every event after this can only arrive by its announcement or by a read
 * a notification called for (a poll could find one first). Its counts at that moment come with it.
 */
const quietFollower = async (): Promise<{ f: Follower; before: { announcement: number; read: number } }> => {
  // Its start-up polling (twice listenerLookupMs after its LISTEN opens, postgres-wakeups.ts) is over
  // before the wait below ends.
  const f = await follower(schema, await head(), { pollIntervalMs: 60_000, listenerLookupMs: 100 })
  await f.caughtUp()
  await new Promise((r) => setTimeout(r, 600))
  return { f, before: { ...f.counts } }
}

/**
 * Every written event arrived, in order, each once by one path, and at most `reads` of them by a read
 * (one that finds a transaction of the cluster running below it, an autovacuum's or another test's,
 * is read instead, as after a bare wake-up).
 */
const expectAnnounced = async (f: Follower, before: { announcement: number; read: number }, written: ReadonlyArray<string>, reads: number): Promise<void> => {
  await waitFor('the written events', () => written.every((id) => f.seen.includes(id)))
  expect(f.seen.slice(-written.length)).toEqual(written)
  const announced = f.counts.announcement - before.announcement
  expect(announced + f.counts.read - before.read).toBe(written.length)
  expect(announced).toBeGreaterThanOrEqual(written.length - reads)
}

describe('announcements', () => {
  it('appends one after another reach a subscriber elsewhere from their announcements (nearly all with no read), in order, each as a read returns it', async () => {
    const { f, before } = await quietFollower()
    try {
      const written: string[] = []
      for (let i = 0; i < 20; i++) {
        const rich = { zeta: 'บาท 1,234.50', a: [1, 2.5, { y: null, b: true }], amountSatang: 123_450 + i, '': 'empty key' }
        const batch = i % 4 === 0 ? [anEvent(i, rich), anEvent(i), anEvent(i, rich)] : [anEvent(i)]
        await append(writer, batch)
        written.push(...batch.map((e) => e.eventId))
      }
      await waitFor('the 20 appends', () => written.every((id) => f.seen.includes(id)))
      await new Promise((r) => setTimeout(r, 50))
      await expectAnnounced(f, before, written, 6)
      expect(f.counts.read - before.read).toBe(0)
      expect([...f.positions].sort()).toEqual(f.positions)
      // What an announcement delivers is what a read returns, field for field.
      const read = await writer.readAll({ from: f.positions.at(-written.length - 1), maxCount: 1_000 })()
      if (E.isLeft(read)) throw new Error('readAll')
      expect(read.right.map(idOf)).toEqual(written)
      expect(f.items.slice(-written.length)).toEqual(read.right)
    } finally {
      await f.stop()
    }
  })

  it('while announcements keep a subscriber up to date it does not poll: appends 2 ms apart for 1.5 s, a poll interval of 20 ms, and the follower looks at the log a few times only', async () => {
    // The follower's pool counts its statements: a look at the log is one or two of them.
    let statements = 0
    const counted = observedPool(schema.pool(2), () => {
      statements += 1
    })
    const counts = { announcement: 0, read: 0 }
    const store = makePostgresEventStore({ pool: counted, log }, { schema: schema.schema, pollIntervalMs: 20, observeDelivery: (how, n) => void (counts[how] += n) })
    const seen: string[] = []
    const sub = store.subscribeToAll({ from: await head() }, (item) => {
      seen.push(idOf(item))
      return Promise.resolve()
    })
    try {
      const marker = anEvent()
      await append(writer, [marker])
      await waitFor('the marker', () => seen.includes(marker.eventId))
      // Idle long enough for its polls to be 20 ms apart.
      await new Promise((r) => setTimeout(r, 300))
      const before = { statements, ...counts }
      const written: string[] = []
      // The writer's pauses longer than the poll interval, which a loaded machine makes (a 2 ms timer
      // firing 30 ms late): after each the follower may rightly read once (one or two statements).
      let pauses = 0
      let last = performance.now()
      const until = last + 1_500
      while (performance.now() < until) {
        const e = anEvent()
        await append(writer, [e])
        written.push(e.eventId)
        await new Promise((r) => setTimeout(r, 2))
        const now = performance.now()
        if (now - last > 20) pauses += 1
        last = now
      }
      await waitFor('the written events', () => written.every((id) => seen.includes(id)))
      const looks = statements - before.statements
      expect(seen.slice(-written.length)).toEqual(written)
      expect(counts.announcement - before.announcement + counts.read - before.read).toBe(written.length)
      // Polling every 20 ms regardless made 90-92 statements here (before this was mended); now 6-8,
      // with 360-410 events written and no pause. Reads remain possible: after a pause of the writer
      // longer than 20 ms (counted above), or when a transaction of the cluster running below an
      // announcement (another test's, an autovacuum's) calls for one. A loaded CI machine once made 48
      // looks against the fixed bound of 40 this had: the bound now grows with the pauses it saw.
      expect(looks, `${String(looks)} looks with ${String(pauses)} pauses of the writer over 20 ms`).toBeLessThanOrEqual(30 + 2 * pauses)
    } finally {
      await sub.stop()
      await store.close()
    }
  })

  it('appends under `any` and `stream_exists` (append_queued) announce too', async () => {
    const { f, before } = await quietFollower()
    try {
      const stream = `queued-${randomUUID()}`
      const written: string[] = []
      for (let i = 0; i < 10; i++) {
        const batch = i % 3 === 0 ? [anEvent(i), anEvent(i)] : [anEvent(i)]
        const r = await writer.append(stream, batch, i === 0 ? 'any' : i % 2 === 0 ? 'stream_exists' : 'any')()
        if (E.isLeft(r)) throw new Error(`append: ${r.left._tag}`)
        written.push(...batch.map((e) => e.eventId))
      }
      await expectAnnounced(f, before, written, 6)
    } finally {
      await f.stop()
    }
  })

  it('appends to several streams in one statement (appendToStreams) announce them', async () => {
    const { f, before } = await quietFollower()
    try {
      const written: string[] = []
      const appendToStreams = writer.appendToStreams
      if (appendToStreams === undefined) throw new Error('the PostgreSQL store appends to several streams')
      for (let i = 0; i < 5; i++) {
        const appends = Array.from({ length: 3 }, (_, k) => ({ stream: `many-${randomUUID()}`, events: k === 0 ? [anEvent(i), anEvent(i)] : [anEvent(i)], expected: 'no_stream' as const }))
        const r = await appendToStreams(appends)()
        if (E.isLeft(r) || r.right.some(E.isLeft)) throw new Error('appendToStreams')
        written.push(...appends.flatMap((a) => a.events.map((e) => e.eventId)))
      }
      await expectAnnounced(f, before, written, 8)
    } finally {
      await f.stop()
    }
  })

  it('appendToStreams calls waiting for a connection do not count as running: on a pool of one connection with a limit of one running, four at once each announce', async () => {
    // Only the number running decides here (no rate under which many still announce). Before, each call
    // counted itself as running before it had a connection, so the first of four to get the one
    // connection saw four running and sent a bare wake-up instead of announcing.
    const narrow = makePostgresEventStore({ pool: schema.pool(1), log }, { schema: schema.schema, listenerLookupMs: 0, announceLimits: { running: 1, perSecond: 0 } })
    const appendToStreams = narrow.appendToStreams
    if (appendToStreams === undefined) throw new Error('the PostgreSQL store appends to several streams')
    const { f, before } = await quietFollower()
    const { client: listener, payloads } = await channelListener()
    try {
      const marker = anEvent()
      await append(narrow, [marker]) // its first lookup for listeners elsewhere answers
      const calls = Array.from({ length: 4 }, (_, i) => Array.from({ length: 2 }, () => ({ stream: `narrow-${randomUUID()}`, events: [anEvent(i)], expected: 'no_stream' as const })))
      const results = await Promise.all(calls.map((appends) => appendToStreams(appends)()))
      for (const r of results) if (E.isLeft(r) || r.right.some(E.isLeft)) throw new Error('appendToStreams')
      const ids = calls.map((appends) => appends.flatMap((a) => a.events.map((e) => e.eventId)))
      await waitFor('the four announcements', () => ids.every((call) => payloads.some((p) => call.every((id) => p.includes(id)))), 3_000)
      // Every event once, in the order of the calls' positions (each call's events in request order).
      const firstPosition = (r: (typeof results)[number]): string => {
        const first = E.isRight(r) ? r.right[0] : undefined
        return first !== undefined && E.isRight(first) ? first.right.position : ''
      }
      const inOrder = results
        .map((r, i) => ({ ids: ids[i] ?? [], at: firstPosition(r) }))
        .sort((x, y) => (x.at < y.at ? -1 : 1))
        .flatMap((w) => w.ids)
      await expectAnnounced(f, before, [marker.eventId, ...inOrder], 9)
    } finally {
      await listener.end()
      await f.stop()
      await narrow.close()
    }
  })

  it('transactions of the cluster that never append here (in another database; in this one, having written elsewhere) do not send announcements to a read, each new one as it comes', async () => {
    const { f, before } = await quietFollower()
    const elsewhere = new URL(schema.url)
    elsewhere.pathname = '/postgres'
    const clients = [new Client({ connectionString: elsewhere.toString() }), new Client({ connectionString: schema.url })]
    try {
      for (const c of clients) await c.connect()
      const written: string[] = []
      for (let i = 0; i < 20; i++) {
        // A new transaction with an id, older than the append's and running at its snapshot, that ends
        // just after it with nothing in the log: named in the announcement, it is never announced.
        const other = clients[i % 2]
        if (other === undefined) throw new Error('no client')
        await other.query('begin')
        await other.query('select pg_current_xact_id()')
        const e = anEvent(i)
        await append(writer, [e])
        await other.query('commit')
        written.push(e.eventId)
        await waitFor('the append at the subscriber', () => f.seen.includes(e.eventId))
      }
      // Each of them sent the subscriber to read (20 of 20) before it asked which ids had ended with no event.
      await expectAnnounced(f, before, written, 2)
    } finally {
      for (const c of clients) await c.end().catch(() => undefined)
      await f.stop()
    }
  })

  it('a transaction that never appends, still running, is read past as before: the events come all the same, in order', async () => {
    const { f, before } = await quietFollower()
    const other = new Client({ connectionString: schema.url })
    try {
      await other.connect()
      await other.query('begin')
      await other.query('select pg_current_xact_id()')
      const written: string[] = []
      for (let i = 0; i < 5; i++) {
        const e = anEvent(i)
        await append(writer, [e])
        written.push(e.eventId)
      }
      // The first announcement waits for it and is read; the read passes it (the horizon is satang's own).
      await expectAnnounced(f, before, written, 5)
      expect(f.counts.read - before.read).toBeGreaterThanOrEqual(1)
    } finally {
      await other.query('rollback').catch(() => undefined)
      await other.end().catch(() => undefined)
      await f.stop()
    }
  })

  it('an announcement waits for an older append still in flight, then comes after it; a rolled back one holds nothing', async () => {
    const f = await follower(schema, await head())
    const older = new Client({ connectionString: schema.url })
    await older.connect()
    try {
      await f.caughtUp()
      // Begins a transaction on `older` and inserts one event in it, by hand (no announcement).
      const insertInOpenTransaction = async (eventId: string): Promise<void> => {
        await older.query('begin')
        await older.query(
          `insert into "${schema.schema}".events (stream_name, stream_revision, event_id, type, schema_version, data, metadata) values ($1, 0, $2, 'ThingHappened', 1, '{"n":1}', $3)`,
          [`older-${randomUUID()}`, eventId, JSON.stringify(anEvent().metadata)],
        )
      }
      // An appender with the older transaction id: it inserts first, commits last.
      const first = anEvent(1)
      await insertInOpenTransaction(first.eventId)
      const second = anEvent(2)
      await append(writer, [second])
      await new Promise((r) => setTimeout(r, 300))
      expect(f.seen).not.toContain(second.eventId)
      await older.query('commit')
      await waitFor('both events', () => f.seen.includes(second.eventId))
      expect(f.seen.slice(-2)).toEqual([first.eventId, second.eventId])

      // Rolled back: the later append is delivered all the same, and the lost one never.
      const lost = randomUUID()
      await insertInOpenTransaction(lost)
      const third = anEvent(3)
      await append(writer, [third])
      await older.query('rollback')
      await waitFor('the append after the rolled back one', () => f.seen.includes(third.eventId))
      expect(f.seen).not.toContain(lost)
    } finally {
      await older.end()
      await f.stop()
    }
  })

  it('observeDelivery says how each announcement went out: when its notification was heard, and whether it waited for an older transaction first', async () => {
    const details: Array<{ ids: string[]; how: string; heardAt: number | undefined; waited: boolean | undefined; at: number }> = []
    const seen: string[] = []
    const epochNow = (): number => performance.timeOrigin + performance.now()
    const store = makePostgresEventStore(
      { pool: schema.pool(2), log },
      {
        schema: schema.schema,
        // No poll races an announcement for its events (as quietFollower).
        pollIntervalMs: 60_000,
        observeDelivery: (how, n, a) => details.push({ ids: seen.slice(-n), how, heardAt: a?.heardAt, waited: a?.waited, at: epochNow() }),
      },
    )
    const sub = store.subscribeToAll({ from: await head() }, (item) => {
      seen.push(idOf(item))
      return Promise.resolve()
    })
    const older = new Client({ connectionString: schema.url })
    await older.connect()
    const detailOf = (id: string): (typeof details)[number] | undefined => details.find((d) => d.ids.includes(id))
    try {
      // Listening (the writer announces only to a listener it has seen), then an append with nothing older running.
      let served = false
      for (let i = 0; i < 100 && !served; i++) {
        const e = anEvent()
        await append(writer, [e])
        await new Promise((r) => setTimeout(r, 50))
        served = detailOf(e.eventId)?.how === 'announcement'
      }
      expect(served).toBe(true)
      // Appends one at a time. Each announced one says when it was heard: after its append began, no
      // later than its delivery. With nothing older running it did not wait; but another test's
      // transaction on the cluster can be running at its snapshot, and then it waits or is read
      // (expectAnnounced allows for that too), so the lone appends go on until one went out at once.
      let atOnce = 0
      for (let i = 0; i < 20 && atOnce === 0; i++) {
        const alone = anEvent()
        const before = epochNow()
        await append(writer, [alone])
        await waitFor('the lone append', () => detailOf(alone.eventId) !== undefined)
        const a = detailOf(alone.eventId)
        if (a?.how !== 'announcement') continue
        expect(a.heardAt).toBeGreaterThanOrEqual(before)
        expect(a.heardAt).toBeLessThanOrEqual(a.at)
        if (a.waited === false) atOnce += 1
      }
      expect(atOnce).toBe(1)

      // An older transaction that inserts first and announces at its commit, after a younger append:
      // the younger one's announcement is heard at once and waits for it. (A read can deliver both: a
      // poll in the moment between the older commit and its notification, or another test's transaction
      // running at the younger one's snapshot; then the round is tried again.)
      let waited: (typeof details)[number] | undefined
      let committedAt = 0
      for (let round = 0; round < 5 && waited?.how !== 'announcement'; round++) {
        const first = anEvent(1)
        await older.query('begin')
        await older.query(
          `insert into "${schema.schema}".events (stream_name, stream_revision, event_id, type, schema_version, data, metadata) values ($1, 0, $2, 'ThingHappened', 1, '{"n":1}', $3)`,
          [`older-${randomUUID()}`, first.eventId, JSON.stringify(first.metadata)],
        )
        const second = anEvent(2)
        await append(writer, [second])
        await new Promise((r) => setTimeout(r, 200))
        expect(seen).not.toContain(second.eventId)
        await older.query(`select "${schema.schema}".announce($1)`, [`${schema.schema}_events`])
        committedAt = epochNow()
        await older.query('commit')
        await waitFor('both events', () => detailOf(second.eventId) !== undefined && detailOf(first.eventId) !== undefined)
        expect(seen.slice(-2)).toEqual([first.eventId, second.eventId])
        waited = detailOf(second.eventId)
      }
      expect(waited?.how).toBe('announcement')
      expect(waited?.waited).toBe(true)
      // Heard when its notification came, before the older transaction committed; delivered after.
      expect(waited?.heardAt).toBeLessThan(committedAt)
      expect(waited?.at).toBeGreaterThanOrEqual(committedAt)
      // Reads report no announcement.
      expect(details.filter((d) => d.how === 'read').every((d) => d.heardAt === undefined && d.waited === undefined)).toBe(true)
    } finally {
      await older.end()
      await sub.stop()
      await store.close()
    }
  })

  it('a payload not signed with the installation key is not believed: forged events never reach the subscriber, real ones still do', async () => {
    const f = await follower(schema, await head())
    const forger = new Client({ connectionString: schema.url })
    await forger.connect()
    try {
      await f.caughtUp()
      const forged = randomUUID()
      const tx = (await forger.query<{ tx: string }>('select (pg_current_xact_id()::text::bigint + 1000)::text as tx')).rows[0]?.tx ?? '0'
      const body = JSON.stringify({
        t: tx,
        x: tx,
        r: [],
        m: null,
        e: [['999999', `forged-${randomUUID()}`, '0', forged, 'ThingHappened', 1, { n: 1 }, anEvent().metadata, '1767225600000']],
      })
      await forger.query('select pg_notify($1, $2)', [`${schema.schema}_events`, 'ab'.repeat(32) + body])
      const real = anEvent(4)
      await append(writer, [real])
      await waitFor('the real append', () => f.seen.includes(real.eventId))
      await new Promise((r) => setTimeout(r, 100))
      expect(f.seen).not.toContain(forged)
      const key = await forger.query<{ n: number }>(`select count(*)::int as n from "${schema.schema}".announce_key`)
      expect(key.rows[0]?.n).toBe(1)
    } finally {
      await forger.end()
      await f.stop()
    }
  })

  it('the key is made per installation: two schemas migrated alike get different keys, PUBLIC may neither read it nor call announce(), and deleting it then migrating rotates it', async () => {
    const other = await freshEventStoreSchema('announce_other')
    try {
      const keys = await other.db.raw<{ rows: Array<{ k: string }> }>(
        `select encode(key, 'hex') as k from "${schema.schema}".announce_key union all select encode(key, 'hex') from "${other.schema}".announce_key`,
      )
      expect(keys.rows).toHaveLength(2)
      expect(keys.rows[0]?.k).not.toBe(keys.rows[1]?.k)
      const grants = await other.db.raw<{ rows: Array<{ t: boolean; f: boolean }> }>(
        `select has_table_privilege('public', ?, 'select') as t, has_function_privilege('public', ?, 'execute') as f`,
        [`"${other.schema}".announce_key`, `"${other.schema}".announce(text)`],
      )
      expect(grants.rows[0]).toEqual({ t: false, f: false })
      // Rotation: delete it, migrate again; a migration with a key in place keeps it.
      const keyOf = async (): Promise<string | undefined> => (await other.db.raw<{ rows: Array<{ k: string }> }>(`select encode(key, 'hex') as k from "${other.schema}".announce_key`)).rows[0]?.k
      const first = await keyOf()
      expect(E.isRight(await migrateEventStore({ db: other.db, log }, { schema: other.schema })())).toBe(true)
      expect(await keyOf()).toBe(first)
      await other.db.raw(`delete from "${other.schema}".announce_key`)
      expect(E.isRight(await migrateEventStore({ db: other.db, log }, { schema: other.schema })())).toBe(true)
      const second = await keyOf()
      expect(second).toMatch(/^[0-9a-f]{64}$/)
      expect(second).not.toBe(first)
    } finally {
      await other.drop()
    }
  })

  it('events too large for a notification go out as a bare wake-up and are read', async () => {
    const f = await follower(schema, await head())
    try {
      await f.caughtUp()
      const before = { ...f.counts }
      const big = anEvent(5, { blob: 'x'.repeat(9_000) })
      await append(writer, [big])
      await waitFor('the large event', () => f.seen.includes(big.eventId))
      expect(f.counts.read - before.read).toBe(1)
      expect(f.counts.announcement - before.announcement).toBe(0)
    } finally {
      await f.stop()
    }
  })

  it('announces only while a subscriber of this schema listens elsewhere: with none, appends notify nobody; once one listens, announcements again', async () => {
    const lone = makePostgresEventStore({ pool: schema.pool(2), log }, { schema: schema.schema })
    const { client: raw, payloads } = await channelListener()
    const satangListeners = async (): Promise<number> =>
      (await raw.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'satang-listen-%'`)).rows[0]?.n ?? -1
    let f: Awaited<ReturnType<typeof follower>> | undefined
    try {
      // The followers of earlier tests have closed; wait until their backends are gone.
      const start = performance.now()
      while ((await satangListeners()) > 0 && performance.now() - start < 5_000) await new Promise((r) => setTimeout(r, 20))
      expect(await satangListeners()).toBe(0)
      await append(lone, [anEvent()]) // assumed listened to; starts the lookup
      // The lookup runs beside the appends and may take more than a moment on a busy machine: append
      // until one goes unheard (the store has learnt that nobody listens), then a little longer for any
      // notification still on its way.
      const settling = performance.now()
      for (;;) {
        payloads.length = 0
        await append(lone, [anEvent()])
        await new Promise((r) => setTimeout(r, 50))
        if (payloads.length === 0 || performance.now() - settling > 5_000) break
      }
      await new Promise((r) => setTimeout(r, 50))
      payloads.length = 0
      for (let i = 0; i < 3; i++) await append(lone, [anEvent(i)])
      // Neither announcements nor bare wake-ups: a listener that is not a subscriber's connection hears nothing.
      await new Promise((r) => setTimeout(r, 150))
      expect(payloads).toEqual([])

      f = await follower(schema, await head())
      const since = performance.now()
      while ((await satangListeners()) === 0 && performance.now() - since < 5_000) await new Promise((r) => setTimeout(r, 10))
      expect(await satangListeners()).toBe(1)
      await new Promise((r) => setTimeout(r, 1_050))
      await append(lone, [anEvent()]) // a second has passed: looks again
      // Until that lookup has answered, appends may still notify nobody: append until one is announced.
      const looking = performance.now()
      let e = anEvent(7)
      for (;;) {
        await append(lone, [e])
        await new Promise((r) => setTimeout(r, 50))
        if (payloads.some((p) => p.length > 64 && p.includes(e.eventId)) || performance.now() - looking > 5_000) break
        e = anEvent(7)
      }
      await waitFor('an announcement', () => payloads.some((p) => p.length > 64 && p.includes(e.eventId)))
      await waitFor('the event at the follower', () => f?.seen.includes(e.eventId) === true)
    } finally {
      await f?.stop()
      await raw.end()
      await lone.close()
    }
  })

  it('with more than four appends of one store running at more than the rate limit, the others send coalesced bare wake-ups (at a low rate all announce); the subscriber gets every event once, in order', async () => {
    // Sixteen connections open and idle: sixteen appends all have one before the first commits.
    const busyPool = schema.pool(16)
    await Promise.all(Array.from({ length: 16 }, () => busyPool.query('select pg_sleep(0.05)')))
    // The rate limit set low, so that the warm-up below exceeds it on a loaded machine too. At 200 a
    // second it did not always: while all sixteen announce, their commits take the notify lock one at
    // a time, each with its own disk flush, and on a busy CI machine that came under 200 a second, so
    // the rule rightly kept announcing (docs/architecture.md "Live following").
    const busy = makePostgresEventStore({ pool: busyPool, log }, { schema: schema.schema, listenerLookupMs: 0, announceLimits: { perSecond: 20 } })
    const f = await follower(schema, await head())
    const { client: listener, payloads } = await channelListener()
    try {
      await f.caughtUp()
      await append(busy, [anEvent()]) // its lookup finds the follower
      await new Promise((r) => setTimeout(r, 50))
      // 16 at a time for 350 ms (the rate is taken over windows of 100 ms): well above 20 appends a second.
      const until = performance.now() + 350
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (performance.now() < until) await append(busy, [anEvent()])
      }))
      const events = Array.from({ length: 16 }, (_, i) => anEvent(i))
      const positions = await Promise.all(events.map((e) => append(busy, [e])))
      await waitFor('the 16 events', () => events.every((e) => f.seen.includes(e.eventId)))
      await new Promise((r) => setTimeout(r, 100))
      const announced = payloads.filter((p) => events.some((e) => p.includes(e.eventId)))
      expect(announced).toHaveLength(4)
      const order = [...positions].sort()
      const mine = new Set(events.map((e) => e.eventId))
      const delivered = f.seen.filter((id) => mine.has(id))
      expect(delivered).toHaveLength(16)
      expect(new Set(delivered).size).toBe(16)
      const byPosition = new Map(events.map((e, i) => [positions[i], e.eventId]))
      expect(delivered).toEqual(order.map((p) => byPosition.get(p)))

      // After a quiet spell the rate is low: eight running at once all announce. (The window the rate
      // is taken over may have started among the appends above and still count dozens of them, so one
      // append alone after the spell starts a window of its own; 300 ms later that is one append in
      // 300 ms, under 20 a second.)
      await new Promise((r) => setTimeout(r, 1_000))
      await append(busy, [anEvent()])
      await new Promise((r) => setTimeout(r, 300))
      const later = Array.from({ length: 8 }, (_, i) => anEvent(i))
      await Promise.all(later.map((e) => append(busy, [e])))
      await waitFor('the eight events', () => later.every((e) => f.seen.includes(e.eventId)))
      await waitFor('their announcements', () => payloads.filter((p) => later.some((e) => p.includes(e.eventId))).length === 8)
    } finally {
      await listener.end()
      await f.stop()
      await busy.close()
    }
  })
})

describe('a schema made before announcements (migration 0006)', () => {
  it('appends send bare wake-ups and subscribers read, every event in order; the migration adds the key and the function, and a subscriber running across it then delivers announcements', async () => {
    const old = await freshEventStoreSchema('announce_pre')
    const { log: warnings, lines } = capturingLogger()
    try {
      await old.db.raw(`drop function "${old.schema}".announce(text); drop table "${old.schema}".announce_key`)
      await old.db.raw(`delete from "${old.schema}".eventstore_migrations where name = '0006_announce'`)
      const oldWriter = makePostgresEventStore({ pool: old.pool(2), log: warnings }, { schema: old.schema })
      const start = await append(oldWriter, [anEvent()])
      const counts = { announcement: 0, read: 0 }
      const reader = makePostgresEventStore({ pool: old.pool(2), log: warnings }, { schema: old.schema, observeDelivery: (how, n) => void (counts[how] += n) })
      const seen: string[] = []
      const sub = reader.subscribeToAll({ from: start }, (item) => {
        seen.push(idOf(item))
        return Promise.resolve()
      })
      const written: string[] = []
      try {
        for (let i = 0; i < 3; i++) {
          const e = anEvent(i)
          await append(oldWriter, [e])
          written.push(e.eventId)
        }
        await waitFor('three events at the subscriber', () => seen.length === 3)
        expect(seen).toEqual(written)
        expect(counts).toEqual({ announcement: 0, read: 3 })
        expect(lines.some((l) => l.includes('predates announcements'))).toBe(true)
        expect(lines.some((l) => l.includes('cannot read the announcement key'))).toBe(true)
      } finally {
        await sub.stop()
        await reader.close()
      }
      const g = await follower(old, await append(oldWriter, [anEvent()]))
      await oldWriter.close()
      expect(E.isRight(await migrateEventStore({ db: old.db, log }, { schema: old.schema })())).toBe(true)
      const made = await old.db.raw<{ rows: Array<{ keys: number; fns: number }> }>(
        `select (select count(*)::int from "${old.schema}".announce_key) as keys,
                (select count(*)::int from pg_proc p join pg_namespace s on s.oid = p.pronamespace where s.nspname = ? and p.proname = 'announce') as fns`,
        [old.schema],
      )
      expect(made.rows[0]).toEqual({ keys: 1, fns: 1 })
      // A subscriber that started before the migration (no key then) reads the key once announcements
      // arrive, and from then on delivers them with no read.
      const w = makePostgresEventStore({ pool: old.pool(2), log }, { schema: old.schema, listenerLookupMs: 0 })
      try {
        const after: string[] = []
        // Until one arrives by announcement (the first only makes it read the key), at most 20.
        for (let i = 0; i < 20 && (i < 3 || g.counts.announcement === 0); i++) {
          const e = anEvent(9)
          await append(w, [e])
          after.push(e.eventId)
          await waitFor('an event after the migration', () => g.seen.includes(e.eventId))
        }
        expect(g.seen.slice(-after.length)).toEqual(after)
        expect(g.counts.announcement).toBeGreaterThanOrEqual(1)
      } finally {
        await w.close()
        await g.stop()
      }
    } finally {
      await old.drop()
    }
  })
})
