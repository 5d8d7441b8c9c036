// The load generator of the store figures, as a process of its own. `satang` drives the PostgreSQL
// event store adapter (src/adapters/eventstore/postgres.ts) as satang's processes use it; `bare` does
// the least PostgreSQL work for the same result: a minimal writer that INSERTs the same rows into
// `bare.events` (same columns and indexes, no triggers: no checks, no chain), one multi-row INSERT per
// batch in one transaction; a bare SELECT scan of the same events in pages of the same size; bare
// LISTEN/NOTIFY for live delivery. Prints one JSON line at the end. Times are epoch milliseconds
// (performance.timeOrigin + performance.now()), comparable between processes of this machine.
//   append   <url> <satang|bare> <writers>x<eventsPerAppend>[,…] <seconds> <label>   (one figure after another)
//   read     <url> <satang|bare> [passes]        (the whole log from the start, `passes` times; default 1)
//   live-sub <url> <satang|bare>                 (prints "ready", follows until a line "stop" on stdin)
//   live-write <url> <satang|bare> <writers> <eventsPerSecond> <seconds> <label>
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import * as E from 'fp-ts/lib/Either.js'
import pg from 'pg'
import { makePostgresEventStore, type PostgresEventStoreConfig } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore, EventToAppend, ExpectedRevision, Position } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { BARE_TABLE, EVENT_SCHEMA, EVENT_TABLE } from './databases.ts'
import { noiseEvent } from './seeded.ts'

const [mode, url, impl, ...rest] = process.argv.slice(2)
if (mode === undefined || url === undefined || (impl !== 'satang' && impl !== 'bare')) {
  process.stderr.write('usage: store-load.ts append|read|live-sub|live-write <databaseUrl> satang|bare …\n')
  process.exit(2)
}
const log = silentLogger()
const now = (): number => performance.timeOrigin + performance.now()
const PAGE = 1_000
const COLUMNS = 'stream_name, stream_revision, event_id, type, schema_version, data, metadata'

const satangStore = (connections: number, observeDelivery?: PostgresEventStoreConfig['observeDelivery']): { store: EventStore; pool: pg.Pool } => {
  const pool = makePostgresPool({ url, poolMax: Math.max(2, connections), applicationName: 'satang-bench-store' }, log)
  return { pool, store: makePostgresEventStore({ pool, log }, { schema: EVENT_SCHEMA, ...(observeDelivery === undefined ? {} : { observeDelivery }) }) }
}

/** Prototypes of the appended events; each append gives them fresh ids (ids are what makes appends idempotent). */
const protos = Array.from({ length: 100 }, (_, i) => noiseEvent(i, 0))
const batchOf = (size: number, sentAt?: number): EventToAppend[] =>
  Array.from({ length: size }, (_, i) => {
    const p = protos[i % protos.length] ?? protos[0]
    if (p === undefined) throw new Error('no prototype')
    return sentAt === undefined ? { ...p, eventId: randomUUID() } : noiseEvent(i, sentAt)
  })

/** The bare writer's statement for `size` rows: one multi-row INSERT. */
const bareInsert = (size: number): string =>
  `insert into ${BARE_TABLE} (${COLUMNS}) values ${Array.from({ length: size }, (_, k) => `($${String(k * 7 + 1)}, $${String(k * 7 + 2)}, $${String(k * 7 + 3)}, $${String(k * 7 + 4)}, $${String(k * 7 + 5)}, $${String(k * 7 + 6)}, $${String(k * 7 + 7)})`).join(', ')}`
const bareValues = (stream: string, first: number, events: ReadonlyArray<EventToAppend>): unknown[] =>
  events.flatMap((e, k) => [stream, first + k, e.eventId, e.type, e.schemaVersion, JSON.stringify(e.data), JSON.stringify(e.metadata)])

type Writer = (stream: string, events: ReadonlyArray<EventToAppend>) => Promise<void>

/** One writer per call: its own revision counters per stream, as an aggregate writer has. */
const makeWriters = (connections: number): { writer: () => Writer; close: () => Promise<void> } => {
  if (impl === 'satang') {
    const { store, pool } = satangStore(connections)
    return {
      writer: () => {
        const revisions = new Map<string, ExpectedRevision>()
        return async (stream, events) => {
          const r = await store.append(stream, events, revisions.get(stream) ?? 'no_stream')()
          if (E.isLeft(r)) throw new Error(`append to ${stream} failed: ${r.left._tag}`)
          revisions.set(stream, r.right.nextExpectedRevision)
        }
      },
      close: async () => {
        await store.close()
        await pool.end()
      },
    }
  }
  const pool = new pg.Pool({ connectionString: url, max: connections, application_name: 'satang-bench-bare' })
  return {
    writer: () => {
      const next = new Map<string, number>()
      return async (stream, events) => {
        const first = next.get(stream) ?? 0
        next.set(stream, first + events.length)
        const text = bareInsert(events.length)
        if (events.length === 1) {
          await pool.query({ name: 'bare1', text, values: bareValues(stream, first, events) })
          return
        }
        const client = await pool.connect()
        try {
          await client.query('begin')
          await client.query({ name: `bare${String(events.length)}`, text, values: bareValues(stream, first, events) })
          await client.query('commit')
        } finally {
          client.release()
        }
      }
    },
    close: () => pool.end(),
  }
}

const appendMode = async (): Promise<void> => {
  const [specsText, secondsText, label] = rest
  const specs = (specsText ?? '').split(',').map((x) => x.split('x').map(Number) as [number, number])
  const seconds = Number(secondsText)
  const w = makeWriters(Math.max(...specs.map(([writers]) => writers)))
  // Each writer cycles over 50 streams of its own (aggregate style: exact expected revisions).
  const runFor = async (writers: number, size: number, ms: number, tag: string): Promise<{ events: number; seconds: number }> => {
    const deadline = performance.now() + ms
    const started = performance.now()
    const counts = await Promise.all(
      Array.from({ length: writers }, async (_, k) => {
        const write = w.writer()
        const streams = Array.from({ length: 50 }, (_, i) => `bench-${label ?? 'a'}-${tag}-${impl}-w${String(k)}-s${String(i)}`)
        let n = 0
        for (let i = 0; performance.now() < deadline; i++) {
          await write(streams[i % streams.length] ?? 'bench', batchOf(size))
          n += size
        }
        return n
      }),
    )
    return { events: counts.reduce((a, b) => a + b, 0), seconds: (performance.now() - started) / 1000 }
  }
  const results = []
  for (const [writers, size] of specs) {
    const tag = `${String(writers)}x${String(size)}`
    await runFor(writers, size, Math.min(1_000, seconds * 250), `${tag}warm`)
    results.push(await runFor(writers, size, seconds * 1000, tag))
  }
  await w.close()
  process.stdout.write(`${JSON.stringify({ results })}\n`)
}

const readMode = async (): Promise<void> => {
  const passes = Number(rest[0] ?? '1')
  const results: Array<{ events: number; seconds: number }> = []
  for (let p = 0; p < passes; p++) results.push(await readPass())
  process.stdout.write(`${JSON.stringify({ results })}\n`)
}

const readPass = async (): Promise<{ events: number; seconds: number }> => {
  const probe = new pg.Pool({ connectionString: url, max: 1 })
  const { rows } = await probe.query<{ n: string }>(`select count(*)::text as n from ${EVENT_TABLE}`)
  await probe.end()
  const total = Number(rows[0]?.n ?? '0')
  const started = performance.now()
  let read = 0
  if (impl === 'satang') {
    // A subscriber's catch-up from the start of the log: pages read, decoded and delivered one by one.
    const { store, pool } = satangStore(2)
    await new Promise<void>((done, fail) => {
      const sub = store.subscribeToAll({}, () => {
        read += 1
        if (read === total) void sub.stop().then(done)
        return Promise.resolve()
      })
      void sub.closed.then((r) => (E.isLeft(r) ? fail(new Error(`subscription failed: ${r.left._tag}`)) : done()))
    })
    await store.close()
    await pool.end()
  } else {
    // The same events by the same index in pages of the same size, no decoding, no visibility horizon.
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    let tx = '0'
    let pos = '0'
    for (;;) {
      const page = await client.query<unknown[]>({
        name: 'bare-scan',
        text: `select e.tx_id::text, e.position, ${COLUMNS.split(', ').map((c) => `e.${c}`).join(', ')}, e.recorded_at from ${EVENT_TABLE} e where (e.tx_id, e.position) > ($1::xid8, $2::bigint) order by e.tx_id, e.position limit ${String(PAGE)}`,
        values: [tx, pos],
        rowMode: 'array',
      })
      const last = page.rows.at(-1)
      if (last === undefined) break
      read += page.rows.length
      tx = String(last[0])
      pos = String(last[1])
    }
    await client.end()
  }
  return { events: read, seconds: (performance.now() - started) / 1000 }
}

const liveSubMode = async (): Promise<void> => {
  // [event id, when, how, heard]: how is 'a' from an announcement at once, 'w' from an announcement that
  // waited for an older transaction, 'r' from a read, 'n' a bare notification; heard is when the
  // announcement's notification reached the store (epoch ms), -1 for the others.
  const delivered: Array<[string, number, string, number]> = []
  let stop: () => Promise<void>
  if (impl === 'satang') {
    // Which path delivered the batch being handed over (the store says so after its last event).
    let batchStart = 0
    const observeDelivery: PostgresEventStoreConfig['observeDelivery'] = (how, _events, announcement) => {
      for (let i = batchStart; i < delivered.length; i++) {
        const d = delivered[i]
        if (d === undefined) continue
        d[2] = how === 'read' ? 'r' : announcement?.waited === true ? 'w' : 'a'
        d[3] = announcement?.heardAt ?? -1
      }
      batchStart = delivered.length
    }
    const { store, pool } = satangStore(2, observeDelivery)
    const head = await store.headPosition()()
    if (E.isLeft(head)) throw new Error('head position failed')
    const sub = store.subscribeToAll(head.right === undefined ? {} : { from: head.right satisfies Position }, (item) => {
      if (E.isRight(item)) delivered.push([item.right.eventId, now(), '?', -1])
      return Promise.resolve()
    })
    stop = async () => {
      await sub.stop()
      await store.close()
      await pool.end()
    }
  } else {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    client.on('notification', (n) => delivered.push([n.payload ?? '', now(), 'n', -1]))
    await client.query('listen bench_live')
    stop = () => client.end()
  }
  process.stdout.write('ready\n')
  // CPU from here to the stop: the subscriber's side of live delivery (bench/support/store-figures.ts).
  const cpuFrom = process.cpuUsage()
  // How many have arrived, so the bench knows when to stop waiting.
  const counter = setInterval(() => process.stdout.write(`delivered ${String(delivered.length)}\n`), 200)
  for await (const line of createInterface({ input: process.stdin })) if (line.trim() === 'stop') break
  clearInterval(counter)
  const cpu = process.cpuUsage(cpuFrom)
  process.stdin.destroy()
  await stop()
  process.stdout.write(`${JSON.stringify({ delivered, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`)
}

const liveWriteMode = async (): Promise<void> => {
  const [writersText, rateText, secondsText, label] = rest
  const writers = Number(writersText)
  const interval = (1000 * writers) / Number(rateText)
  const acked: Array<[string, number, number]> = []
  let write: (stream: string, e: EventToAppend) => Promise<void>
  let close: () => Promise<void>
  if (impl === 'satang') {
    const w = makeWriters(writers)
    const perStream = new Map<string, Writer>()
    write = (stream, e) => {
      const x = perStream.get(stream) ?? w.writer()
      perStream.set(stream, x)
      return x(stream, [e])
    }
    close = w.close
  } else {
    // The row and its notification in one statement (one transaction): delivered at commit.
    const pool = new pg.Pool({ connectionString: url, max: writers })
    const next = new Map<string, number>()
    write = async (stream, e) => {
      const rev = next.get(stream) ?? 0
      next.set(stream, rev + 1)
      await pool.query({
        name: 'bare-live',
        text: `with i as (insert into ${BARE_TABLE} (${COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7) returning event_id) select pg_notify('bench_live', i.event_id::text) from i`,
        values: bareValues(stream, rev, [e]),
      })
    }
    close = () => pool.end()
  }
  // Warm-up, not timed: every writer appends one event at once, so that each has an open connection
  // and prepared statements before the timed writes (satang and bare alike; the subscriber ignores
  // events not acknowledged below). Without it the first writes of 8 writers overlap while their
  // connections open, and what is measured is the pool's start.
  await Promise.all(
    Array.from({ length: writers }, async (_, k) => {
      const e = batchOf(1)[0]
      if (e !== undefined) await write(`bench-live-${label ?? 'a'}-${impl}-warm${String(k)}`, e)
    }),
  )
  await new Promise((r) => setTimeout(r, 200))
  const cpuFrom = process.cpuUsage()
  const deadline = performance.now() + Number(secondsText) * 1000
  await Promise.all(
    Array.from({ length: writers }, async (_, k) => {
      const stream = `bench-live-${label ?? 'a'}-${impl}-w${String(k)}`
      // Writers start spread over one interval, then each keeps its own pace.
      let due = performance.now() + (interval * k) / writers
      while (due < deadline) {
        const wait = due - performance.now()
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
        const e = batchOf(1)[0]
        if (e === undefined) break
        const sent = now()
        await write(stream, e)
        acked.push([e.eventId, sent, now()])
        due += interval
      }
    }),
  )
  const cpu = process.cpuUsage(cpuFrom)
  await close()
  process.stdout.write(`${JSON.stringify({ acked, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`)
}

switch (mode) {
  case 'append':
    await appendMode()
    break
  case 'read':
    await readMode()
    break
  case 'live-sub':
    await liveSubMode()
    break
  case 'live-write':
    await liveWriteMode()
    break
  default:
    process.stderr.write(`unknown mode ${mode}\n`)
    process.exit(2)
}
