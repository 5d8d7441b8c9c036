// Event store benchmark (PostgreSQL adapter). `run` creates its own schema in the given database,
// measures, and drops the schema. Figures and targets: issue 4.
import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { makePostgresEventStore } from '../src/adapters/eventstore/postgres.ts'
import { makeKnex, makePostgresPool } from '../src/platform/postgres/pool.ts'
import { migrateEventStore } from '../src/adapters/postgres/migrations/eventstore.ts'
import type { EventStore, EventToAppend, ExpectedRevision, Position, ReadItem } from '../src/application/ports/event-store.ts'
import type { BenchContext, BenchResult } from './types.ts'


const APPEND_SECONDS = 3
const READ_MIN_EVENTS = 100_000

const anEvent = (i: number): EventToAppend => ({
  eventId: randomUUID(),
  type: 'PaymentStatusObserved',
  schemaVersion: 1,
  data: { orderId: `ord-${String(i)}`, status: 'PS', amount: '1250.00', observedAt: '2025-01-01T00:00:00.000Z' },
  metadata: { correlationId: randomUUID(), causationId: randomUUID(), recordedAt: '2025-01-01T00:00:00.000Z', source: 'bench' },
})

const positionOf = (item: ReadItem): Position => (E.isRight(item) ? item.right.position : item.left.position)

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN

const round = (n: number, digits = 0): number => Number(n.toFixed(digits))

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const log = ctx.log.child({ bench: 'eventstore' })
  const schema = `bench_es_${randomUUID().replaceAll('-', '').slice(0, 10)}`
  const pools: Pool[] = []
  const stores: EventStore[] = []
  const newStore = (poolMax = 2): EventStore => {
    const pool = makePostgresPool({ url: ctx.databaseUrl, poolMax, applicationName: 'satang-bench' }, log)
    pools.push(pool)
    const store = makePostgresEventStore({ pool, log }, { schema })
    stores.push(store)
    return store
  }
  const admin = makePostgresPool({ url: ctx.databaseUrl, poolMax: 2, applicationName: 'satang-bench' }, log)
  const db = makeKnex(admin)
  const migrated = await migrateEventStore({ db, log }, { schema })()
  if (E.isLeft(migrated)) throw new Error('bench: could not create the event store schema', { cause: migrated.left.cause })

  const mustAppend = async (store: EventStore, stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision): Promise<bigint> => {
    const r = await store.append(stream, events, expected)()
    if (E.isLeft(r)) throw new Error(`bench: append failed: ${r.left._tag}`)
    return r.right.nextExpectedRevision
  }

  /**
   * `writers` concurrent writers, each with its own streams, appending batches of `size` for `seconds`.
   * They share one store with a pool of `writers` connections, as concurrent requests of one satang
   * process do (one store per process: one wake-up notifier, one statement cache per connection).
   */
  const appendRun = async (label: string, writers: number, size: number, seconds: number): Promise<number> => {
    const shared = newStore(Math.max(2, writers))
    const ws = Array.from({ length: writers }, () => shared)
    const deadline = performance.now() + seconds * 1000
    const started = performance.now()
    const counts = await Promise.all(
      ws.map(async (store, w) => {
        // Each writer cycles over 50 streams of its own, with exact expected revisions (aggregate style).
        const streams = Array.from({ length: 50 }, (_, i) => ({ name: `${label}-w${String(w)}-s${String(i)}`, revision: 'no_stream' as ExpectedRevision }))
        let n = 0
        let i = 0
        while (performance.now() < deadline) {
          const s = streams[i++ % streams.length]
          if (s === undefined) break
          s.revision = await mustAppend(store, s.name, Array.from({ length: size }, () => anEvent(n)), s.revision)
          n += size
        }
        return n
      }),
    )
    const total = counts.reduce((a, b) => a + b, 0)
    return total / ((performance.now() - started) / 1000)
  }

  try {
    const results: BenchResult[] = []
    const single1 = await appendRun('a1', 1, 1, APPEND_SECONDS)
    results.push({ name: 'append, 1 writer, 1 event per append', value: round(single1), unit: 'events/s', target: { op: '>=', value: 2_000 } })
    const single8 = await appendRun('a8', 8, 1, APPEND_SECONDS)
    results.push({ name: 'append, 8 writers, 1 event per append', value: round(single8), unit: 'events/s', target: { op: '>=', value: 5_000 } })
    const batch8 = await appendRun('b8', 8, 100, APPEND_SECONDS)
    results.push({ name: 'append, 8 writers, 100 events per append', value: round(batch8), unit: 'events/s', target: { op: '>=', value: 18_000 } })

    // Global read: the whole log, page by page, decoded.
    const reader = newStore(2)
    const seeded = async (): Promise<number> => {
      const rows = await admin.query<{ n: string }>(`select count(*)::text as n from "${schema}".events`)
      return Number(rows.rows[0]?.n ?? '0')
    }
    for (let i = 0, have = await seeded(); have < READ_MIN_EVENTS; i++, have += 500) {
      await mustAppend(reader, `seed-${String(i)}`, Array.from({ length: 500 }, (_, k) => anEvent(k)), 'no_stream')
    }
    const readLog = async (): Promise<{ read: number; seconds: number; last: Position | undefined }> => {
      let read = 0
      let from: Position | undefined
      const started = performance.now()
      for (;;) {
        const page = await reader.readAll({ ...(from === undefined ? {} : { from }), maxCount: 5_000 })()
        if (E.isLeft(page)) throw new Error(`bench: readAll failed: ${page.left._tag}`)
        const last = page.right.at(-1)
        if (last === undefined) break
        read += page.right.length
        from = positionOf(last)
      }
      return { read, seconds: (performance.now() - started) / 1000, last: from }
    }
    await readLog() // warm-up: JIT and the server's buffer cache
    const { read, seconds, last: from } = await readLog()
    results.push({ name: `global-log read (${String(read)} events)`, value: round(read / seconds), unit: 'events/s', target: { op: '>=', value: 100_000 } })

    // Live delivery: a subscriber in another pool (woken by NOTIFY, as another process would be),
    // time from the start of the append to the handler.
    const latencies: number[] = []
    const sentAt = new Map<string, number>()
    const subscriber = newStore(2)
    const tail = from
    const live = subscriber.subscribeToAll(tail === undefined ? {} : { from: tail }, (item) => {
      if (E.isRight(item)) {
        const t0 = sentAt.get(item.right.eventId)
        if (t0 !== undefined) latencies.push(performance.now() - t0)
      }
      return Promise.resolve()
    })
    const writer = newStore(2)
    await new Promise((r) => setTimeout(r, 200))
    let revision: ExpectedRevision = 'no_stream'
    for (let i = 0; i < 300; i++) {
      const e = anEvent(i)
      sentAt.set(e.eventId, performance.now())
      revision = await mustAppend(writer, 'latency', [e], revision)
      await new Promise((r) => setTimeout(r, 4))
    }
    const waitUntil = async (done: () => boolean, ms: number): Promise<void> => {
      const deadline = Date.now() + ms
      while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    }
    await waitUntil(() => latencies.length >= 300, 5_000)
    await live.stop()
    latencies.sort((a, b) => a - b)
    results.push({ name: 'live delivery latency p50', value: round(percentile(latencies, 50), 2), unit: 'ms', target: { op: '<=', value: 10 } })
    results.push({ name: 'live delivery latency p99', value: round(percentile(latencies, 99), 2), unit: 'ms' })

    // Missed events: 8 writers on distinct and shared streams while a subscriber follows live.
    const marker = await writer.append(`marker-${randomUUID()}`, [anEvent(0)], 'no_stream')()
    if (E.isLeft(marker)) throw new Error('bench: marker append failed')
    const delivered = new Map<string, number>()
    const follower = newStore(2).subscribeToAll({ from: marker.right.position }, (item) => {
      if (E.isRight(item)) delivered.set(item.right.eventId, (delivered.get(item.right.eventId) ?? 0) + 1)
      return Promise.resolve()
    })
    const appended = new Set<string>()
    const concurrent = Array.from({ length: 8 }, () => newStore())
    await Promise.all(
      concurrent.map(async (store, w) => {
        for (let i = 0; i < 1_250; i++) {
          const batch = [anEvent(i), anEvent(i)]
          const shared = i % 4 === 0
          await mustAppend(store, shared ? `shared-${String(i % 3)}` : `c-w${String(w)}-${String(i % 20)}`, batch, 'any')
          for (const e of batch) appended.add(e.eventId)
        }
      }),
    )
    await waitUntil(() => [...appended].every((id) => delivered.has(id)), 30_000)
    await follower.stop()
    const missed = [...appended].filter((id) => !delivered.has(id)).length
    const duplicated = [...delivered.values()].filter((n) => n > 1).length
    results.push({ name: `events missed by a live subscriber (8 writers, ${String(appended.size)} events)`, value: missed, unit: 'events', target: { op: '<=', value: 0 } })
    results.push({ name: 'events delivered twice to a live subscriber', value: duplicated, unit: 'events', target: { op: '<=', value: 0 } })
    return results
  } finally {
    await Promise.all(stores.map((s) => s.close()))
    await Promise.all(pools.map((p) => p.end()))
    await db.raw(`drop schema if exists "${schema}" cascade`)
    await db.destroy()
    await admin.end()
  }
}
