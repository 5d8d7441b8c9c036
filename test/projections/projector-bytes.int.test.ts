// Issue 31: the projector holds a budget of bytes of decoded events, not only a count. Its shared buffer
// stops the log's reader past `bufferBytes`, and a batch takes at most a third of it, whatever
// `batchSize` allows; large events make both shorter. The sizer's arithmetic first (pure), then the
// projector on real PostgreSQL with large events: batches and the reader's lead over the slowest
// projection stay within the budget, and every event is still applied once, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { approximateBytes } from '../../src/application/approximate-size.ts'
import { callbackRejected } from '../../src/domain/events/common/callback-rejected.ts'
import { silentLogger } from '../../src/logger.ts'
import { makeBufferSizer, startProjector, type BatchItem } from '../../src/projections/projector.ts'
import type { Projection } from '../../src/projections/types.ts'
import { at } from '../domain/support/values.ts'
import { appendEvent } from './scenarios.ts'
import { freshProjectionDatabase, type ProjectionDatabase } from './support.ts'

const log = silentLogger()

const item = (detail: string, n: number): BatchItem => ({
  ok: false,
  position: `${String(n).padStart(20, '0')}-${String(n).padStart(20, '0')}` as BatchItem['position'],
  streamName: 'bulk-1',
  reason: detail,
})

describe('makeBufferSizer: count limits from a byte budget', () => {
  it('before any item is seen, and with small items, the counts are the limits given', () => {
    const sizer = makeBufferSizer(100, 300, 10 * 1024 * 1024)
    expect([sizer.batch(), sizer.capacity()]).toEqual([100, 300])
    for (let n = 0; n < 64; n += 1) sizer.observe(item('x', n))
    expect([sizer.batch(), sizer.capacity()]).toEqual([100, 300])
  })

  it('large items shorten the buffer to the budget and a batch to a third of it', () => {
    const big = item('y'.repeat(10_000), 1)
    const size = approximateBytes(big)
    const sizer = makeBufferSizer(100, 300, 60 * size)
    sizer.observe(big)
    expect(sizer.averageBytes()).toBe(size)
    expect([sizer.batch(), sizer.capacity()]).toEqual([20, 60])
  })

  it('never below one item, however large an item is', () => {
    const sizer = makeBufferSizer(100, 300, 1_000)
    sizer.observe(item('z'.repeat(50_000), 1))
    expect([sizer.batch(), sizer.capacity()]).toEqual([1, 1])
  })

  it('measures one item in 16 and follows a change of size (moving average)', () => {
    const sizer = makeBufferSizer(1_000, 3_000, 1024 * 1024)
    const small = item('a', 1)
    const large = item('b'.repeat(4_000), 2)
    sizer.observe(small)
    const first = sizer.averageBytes()
    for (let n = 1; n < 16; n += 1) sizer.observe(large) // not sampled
    expect(sizer.averageBytes()).toBe(first)
    for (let n = 0; n < 16 * 40; n += 1) sizer.observe(large)
    expect(sizer.averageBytes()).toBeGreaterThan(approximateBytes(large) * 0.99)
    expect(sizer.batch()).toBe(Math.floor(1024 * 1024 / 3 / sizer.averageBytes()))
  })
})

describe('the projector within its byte budget (real PostgreSQL)', () => {
  const EVENTS = 60
  let db: ProjectionDatabase
  // Every event carries about 12 KB of text, twice over (decoded and as stored).
  const detail = 'd'.repeat(12_000)
  const applied = new Map<string, number[]>()
  const recording = (name: string, gate?: () => Promise<void>): Projection => ({
    name,
    description: `test: records what it is given (${name})`,
    streams: ['bulk-'],
    tables: [],
    createTables: () => [],
    apply: async (_target, events) => {
      await gate?.()
      const seen = applied.get(name) ?? []
      for (const e of events) seen.push(Number(e.streamRevision))
      applied.set(name, seen)
    },
  })
  let release: () => void = () => undefined
  const released = new Promise<void>((r) => (release = r))
  const fast = recording('bytes_fast')
  const slow = recording('bytes_slow', () => released)

  beforeAll(async () => {
    db = await freshProjectionDatabase('proj_bytes', [fast, slow])
    for (let n = 0; n < EVENTS; n += 1) {
      await appendEvent(db.store, 'bulk-1', callbackRejected.make({ callback: 'payment_notification', reason: 'bad_signature', detail: `${String(n)} ${detail}`, violations: [], callbackId: `req-${String(n)}`, receivedAt: at(n), payload: null }))
    }
  })
  afterAll(async () => {
    await db.drop()
  })

  it('takes batches within a third of the budget and reads no further ahead of the slowest projection than the budget, then applies every event once, in order', async () => {
    const batches: Array<{ projection: string; count: number; bytes: number }> = []
    let itemBytes = 0
    const aroundBatch = async <T,>(projection: string, items: ReadonlyArray<BatchItem>, apply: () => Promise<T>): Promise<T> => {
      const sizes = items.map((i) => approximateBytes(i))
      itemBytes = Math.max(itemBytes, ...sizes)
      batches.push({ projection, count: items.length, bytes: sizes.reduce((a, b) => a + b, 0) })
      return apply()
    }
    const budget = 300_000
    const projector = startProjector({ store: db.store, pool: db.pool, log, aroundBatch }, { schema: db.schema, projections: [fast, slow], batchSize: 1_000, bufferBytes: budget })
    try {
      // The slow projection holds its first batch: the fast one runs ahead until the buffer is full.
      const deadline = Date.now() + 20_000
      let ahead = -1
      for (;;) {
        await new Promise((r) => setTimeout(r, 300))
        const now = applied.get('bytes_fast')?.length ?? 0
        if (now === ahead || Date.now() > deadline) break
        ahead = now
      }
      expect(itemBytes).toBeGreaterThan(24_000)
      // What the buffer may hold: the budget at the items' size (the one the reader has just pushed counts).
      const capacity = Math.floor(budget / itemBytes) + 1
      expect(ahead).toBeGreaterThan(0)
      expect(ahead).toBeLessThanOrEqual(capacity)
      expect(ahead).toBeLessThan(EVENTS)
      release()
      await projector.caughtUp(30_000)
    } finally {
      release()
      await projector.stop()
    }
    const all = Array.from({ length: EVENTS }, (_, n) => n)
    expect(applied.get('bytes_fast')).toEqual(all)
    expect(applied.get('bytes_slow')).toEqual(all)
    for (const b of batches) expect({ ...b, within: b.bytes <= budget / 3 + itemBytes }).toEqual({ ...b, within: true })
    // With the count alone (1,000), the whole log would have been one batch.
    expect(Math.max(...batches.map((b) => b.count))).toBeLessThan(EVENTS)
  }, 60_000)
})
