import { generateKeyPairSync, randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool, PoolClient } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anchorKeyIdOf, anchorSignatureValid, checkAnchors, writeAnchor, type Anchor } from '../../../src/adapters/eventstore/anchors.ts'
import { makeHeadsDigest, verifyEventChain, type StreamHead } from '../../../src/adapters/eventstore/chain.ts'
import type { EventStore, EventToAppend } from '../../../src/application/ports/event-store.ts'
import { eventSourceOf, toEventToAppend } from '../../../src/domain/events/registry.ts'
import { EVENT_STORE_SCHEMA } from '../../../src/main.ts'
import * as order from '../../domain/order/builders.ts'
import { freshEventStoreDatabase } from '../http/database.ts'

/**
 * writeAnchor reads the heads it digests in pages (issue 31: it used to load every stream's head, about
 * 0.7 KiB per stream, 190 MiB of heap at 200,000 streams). With a page size of 2 over many streams whose
 * names sort differently by bytes than by a locale (upper and lower case, accents, Greek, an emoji), the
 * anchors it writes carry the same digests as the unpaged computation the old code did (copied below),
 * and as `satang audit verify`'s own walk of the log; and no query hands the process more than a page of
 * rows, whatever the number of streams. Real PostgreSQL.
 */

const keys = generateKeyPairSync('ed25519')
const anchorKey = { privateKey: keys.privateKey, keyId: anchorKeyIdOf(keys.privateKey) }
const PAGE = 2

const eventsFor = (n: number): ReadonlyArray<EventToAppend> =>
  Array.from({ length: n }, (_, i) => {
    const e = order.anAcceptedCheckout()[i % 3]
    if (e === undefined) throw new Error('builder')
    return toEventToAppend(e, randomUUID(), { correlationId: 'c', causationId: 'c', recordedAt: new Date(Date.UTC(2026, 0, 1, 3, i)).toISOString(), source: eventSourceOf(e) })
  })

// Byte order is not a locale's: 'B' < 'a' < 'z' < '~' < 'é' < 'Ω' < '😀' by UTF-8 bytes.
const SUFFIXES = ['a', 'B', 'z', '~', 'é', 'Ω', '😀', 'Z', '0', 'aa', 'É', 'ß']
const names = (prefix: string, n: number): ReadonlyArray<string> => Array.from({ length: n }, (_, i) => `${prefix}-${SUFFIXES[i % SUFFIXES.length] ?? ''}${String(i)}`)

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))

/** The old writeAnchor's computation, unpaged: every head in memory, merged, then digested. */
const fold = (heads: ReadonlyArray<StreamHead>, changes: ReadonlyArray<StreamHead>): ReadonlyArray<StreamHead> => {
  const out: StreamHead[] = []
  let i = 0
  let j = 0
  while (i < heads.length || j < changes.length) {
    const h = heads[i]
    const c = changes[j]
    if (c === undefined || (h !== undefined && byteOrder(h.stream, c.stream) < 0)) {
      if (h !== undefined) out.push(h)
      i += 1
    } else if (h === undefined || byteOrder(h.stream, c.stream) > 0) {
      out.push(c)
      j += 1
    } else {
      out.push(c)
      i += 1
      j += 1
    }
  }
  return out
}
const digestOf = (heads: ReadonlyArray<StreamHead>): string => {
  const d = makeHeadsDigest()
  for (const h of heads) d.add(h.stream, h.revision, Buffer.from(h.hash, 'hex'))
  return d.hex()
}

/** Each stream's last event after `after` and up to `upTo` (positions as the anchors store them), sorted in Node by bytes. */
const headsBetween = async (pool: Pool, after: Anchor | null, upTo: Anchor): Promise<ReadonlyArray<StreamHead>> => {
  const r = await pool.query<{ stream_name: string; stream_revision: string; hash: Buffer; tx_id: string; position: string }>(
    `select e.stream_name, e.stream_revision::text, e.hash, e.tx_id::text, e.position::text from "${EVENT_STORE_SCHEMA}".events e`,
  )
  const key = (tx: string, pos: string): string => `${tx.padStart(20, '0')}-${pos.padStart(20, '0')}`
  const last = new Map<string, StreamHead>()
  for (const row of r.rows) {
    const p = key(row.tx_id, row.position)
    if ((after?.position != null && p <= after.position) || upTo.position === null || p > upTo.position) continue
    const seen = last.get(row.stream_name)
    if (seen === undefined || seen.revision < BigInt(row.stream_revision)) last.set(row.stream_name, { stream: row.stream_name, revision: BigInt(row.stream_revision), hash: row.hash.toString('hex') })
  }
  return [...last.values()].sort((x, y) => byteOrder(x.stream, y.stream))
}

/** A pool whose clients record how many rows each query hands back to the process. */
const watched = (pool: Pool, rowsPerQuery: number[]): Pool =>
  ({
    connect: async (): Promise<PoolClient> => {
      const c = await pool.connect()
      const query = c.query.bind(c) as (...args: unknown[]) => Promise<{ rows: unknown[] }>
      const release = c.release.bind(c)
      Object.assign(c, {
        query: async (...args: unknown[]) => {
          const r = await query(...args)
          rowsPerQuery.push(r.rows.length)
          return r
        },
        release: (err?: Error | boolean) => {
          // Give the pool its client back as it was.
          Reflect.deleteProperty(c, 'query')
          Reflect.deleteProperty(c, 'release')
          release(err)
        },
      })
      return c
    },
  }) as unknown as Pool

let pool: Pool
let store: EventStore
let drop: () => Promise<void>

beforeAll(async () => {
  const database = await freshEventStoreDatabase('anchorpages')
  pool = database.pool
  store = database.store
  drop = database.drop
})

afterAll(async () => {
  await drop()
})

/** Waits until all `n` events are readable (below every open transaction), so that the next anchor covers them. */
const untilReadable = async (n: number): Promise<void> => {
  for (let i = 0; ; i++) {
    const r = await pool.query<{ n: string }>(
      `select count(*)::text as n from "${EVENT_STORE_SCHEMA}".events e where e.tx_id < pg_snapshot_xmin(pg_current_snapshot())`,
    )
    if (r.rows[0]?.n === String(n)) return
    if (i > 600) throw new Error(`${String(n)} events did not become readable within 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const append = async (streams: ReadonlyArray<string>, perStream: number): Promise<void> => {
  for (const s of streams) expect(E.isRight(await store.append(s, eventsFor(perStream), 'any')())).toBe(true)
}

describe('writeAnchor in pages', () => {
  it('page size 2 over 60 streams in 4 anchors: the digests of the unpaged computation and of the log walk, never more than a page of rows in the process', async () => {
    const first = names('order-p', 40)
    await append(first, 2)
    let total = 80
    const written: Anchor[] = []
    const rounds: ReadonlyArray<() => Promise<void>> = [
      async () => undefined,
      // New streams sorting before, between and after the anchored ones, and some anchored ones moved on.
      async () => {
        await append(names('order-a', 8), 1)
        await append(names('order-q', 6), 1)
        await append(first.filter((_, i) => i % 3 === 0), 1)
        total += 8 + 6 + 14
      },
      // Only anchored streams moved.
      async () => {
        await append(first.filter((_, i) => i % 7 === 1), 2)
        total += 6 * 2
      },
      // New streams past every other.
      async () => {
        await append(names('order-zzz', 3), 3)
        total += 9
      },
    ]
    for (const round of rounds) {
      await round()
      await untilReadable(total)
      const rows: number[] = []
      const r = await writeAnchor(watched(pool, rows), EVENT_STORE_SCHEMA, anchorKey, `round ${String(written.length + 1)}`, undefined, { pageSize: PAGE })()
      if (E.isLeft(r) || r.right === null) throw new Error(`anchor ${String(written.length + 1)} not written`)
      const anchor = r.right.anchor
      // Bounded: no query gave the process more than a page (the old code took every head at once).
      expect(Math.max(...rows)).toBeLessThanOrEqual(PAGE)
      const prev = written.at(-1) ?? null
      const changes = await headsBetween(pool, prev, anchor)
      const all = await headsBetween(pool, null, anchor)
      expect(changes.length).toBeGreaterThan(PAGE)
      expect(anchor.changedStreams).toBe(BigInt(changes.length))
      expect(anchor.changesDigest).toBe(digestOf(changes))
      expect(anchor.streams).toBe(BigInt(all.length))
      expect(anchor.events).toBe(BigInt(total))
      // The old computation: the previous anchor's heads (all heads up to it) folded with the changes.
      const before = prev === null ? [] : await headsBetween(pool, null, prev)
      expect(anchor.headsDigest).toBe(digestOf(fold(before, changes)))
      expect(anchor.headsDigest).toBe(digestOf(all))
      expect(anchorSignatureValid(anchor, keys.publicKey)).toBe(true)
      written.push(anchor)
    }
    // audit verify's independent walk of the log gives the latest anchor's digest, and the anchors check.
    const latest = written.at(-1)
    if (latest?.position == null) throw new Error('no anchor')
    const walked = await verifyEventChain(pool, EVENT_STORE_SCHEMA, { digestAt: latest.position })()
    if (E.isLeft(walked)) throw new Error('verify')
    expect(walked.right.intact).toBe(true)
    expect(walked.right.atPosition?.headsDigest).toBe(latest.headsDigest)
    const checked = await checkAnchors(pool, EVENT_STORE_SCHEMA, keys.publicKey)
    expect(checked.problems).toEqual([])
    // The check reads the recorded heads in pages too: the same result with pages of 2.
    const checkedInPages = await checkAnchors(pool, EVENT_STORE_SCHEMA, keys.publicKey, { pageSize: PAGE })
    expect(checkedInPages).toEqual(checked)
    expect(checked.anchors.map((a) => a.headsDigest)).toEqual(written.map((a) => a.headsDigest))
    expect(checked.heads.map((h) => h.stream)).toEqual((await headsBetween(pool, null, latest)).map((h) => h.stream))
    // Nothing new: no anchor.
    const none = await writeAnchor(pool, EVENT_STORE_SCHEMA, anchorKey, 'idle', undefined, { pageSize: PAGE })()
    expect(E.isRight(none) && none.right === null).toBe(true)
  })

  it('refuses a page size that is not a whole number of at least 1, naming it', async () => {
    for (const pageSize of [0, -1, 1.5]) {
      const r = await writeAnchor(pool, EVENT_STORE_SCHEMA, anchorKey, 'bad', undefined, { pageSize })()
      expect(E.isLeft(r) && r.left.cause instanceof Error ? r.left.cause.message : '').toContain('pageSize must be a whole number of at least 1')
    }
  })
})
