import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool, QueryConfig } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePageSizer } from '../../../src/adapters/eventstore/page-bytes.ts'
import { approximateBytes } from '../../../src/application/approximate-size.ts'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import type { EventToAppend, ReadItem } from '../../../src/application/ports/event-store.ts'
import { silentLogger } from '../../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../../support/postgres.ts'
import { observedPool } from '../../support/observed-pool.ts'

let db: TestSchema
beforeAll(async () => {
  db = await freshEventStoreSchema('page_bytes')
})
afterAll(async () => {
  await db.drop()
})

const anEvent = (text: string): EventToAppend => ({
  eventId: randomUUID(),
  type: 'Sized',
  schemaVersion: 1,
  data: { text },
  metadata: { correlationId: 'page-bytes', causationId: 'page-bytes', recordedAt: '2026-01-01T00:00:00.000Z', source: 'operator' },
})

/** The pool, with the page size (events) of every catch-up read of the log recorded. */
const recordingLimits = (pool: Pool): { pool: Pool; limits: number[] } => {
  const limits: number[] = []
  const record = (config: unknown): void => {
    const c = config as QueryConfig
    if (typeof c === 'object' && typeof c.name === 'string' && c.name.startsWith('satang_es_all_')) limits.push(Number(c.values?.[2]))
  }
  return { pool: observedPool(pool, record), limits }
}

describe('a subscriber reads the log in pages bounded by bytes', () => {
  it('large events are read fewer at a time (the page budget held), small ones a full page at a time, and every event is delivered once, in order', async () => {
    const writer = makePostgresEventStore({ pool: db.pool(2), log: silentLogger() }, { schema: db.schema })
    const stream = `sized-${randomUUID()}`
    // 20 small events, 30 of about 32 KiB, 20 small again.
    const texts = [...Array.from({ length: 20 }, (_, i) => `s${String(i)}`), ...Array.from({ length: 30 }, (_, i) => `${String(i)}:${'x'.repeat(32_768)}`), ...Array.from({ length: 20 }, (_, i) => `t${String(i)}`)]
    for (const text of texts) expect(E.isRight(await writer.append(stream, [anEvent(text)], 'any')())).toBe(true)
    await writer.close()

    const budget = 128 * 1024
    const { pool, limits } = recordingLimits(db.pool(2))
    const store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: db.schema, pageSize: 10, pageBytes: budget })
    const seen: string[] = []
    const done = new Promise<void>((resolve) => {
      const sub = store.subscribeToAll({}, (item: ReadItem) => {
        if (E.isRight(item) && item.right.streamName === stream) seen.push(String(item.right.data['text']).slice(0, 6))
        if (seen.length === texts.length) {
          void sub.stop()
          resolve()
        }
        return Promise.resolve()
      })
    })
    await done
    await store.close()
    expect(seen).toEqual(texts.map((t) => t.slice(0, 6)))
    // Full pages of 10 while events are small; after a page of 32 KiB events, at most 4 at a time (4 × 32 KiB = the budget).
    expect(limits[0]).toBe(10)
    expect(Math.min(...limits)).toBeLessThanOrEqual(4)
    expect(Math.min(...limits)).toBeGreaterThanOrEqual(1)
    // Back to full pages once the events are small again.
    expect(limits.at(-1)).toBe(10)
  }, 60_000)

  it('the sizer: as many events as fit the budget at the sampled average size, at least one, at most the page size', () => {
    const item = (bytes: number): ReadItem => E.left({ position: '0', streamName: 's', type: 'T', reason: 'x'.repeat(bytes) }) as unknown as ReadItem
    const sizer = makePageSizer(1_000, 100_000)
    expect(sizer.limit()).toBe(1_000)
    sizer.observe(Array.from({ length: 50 }, () => item(10_000)))
    expect(sizer.limit()).toBeGreaterThanOrEqual(9)
    expect(sizer.limit()).toBeLessThanOrEqual(10)
    sizer.observe([item(1_000_000)])
    expect(sizer.limit()).toBe(1)
    sizer.observe(Array.from({ length: 50 }, () => item(10)))
    expect(sizer.limit()).toBe(Math.floor(100_000 / approximateBytes(item(10))))
    expect(makePageSizer(1_000, 10_000_000).limit()).toBe(1_000)
    const big = makePageSizer(1_000, 10_000_000)
    big.observe([item(10)])
    expect(big.limit()).toBe(1_000)
    sizer.observe([])
    expect(sizer.limit()).toBe(Math.floor(100_000 / approximateBytes(item(10))))
  })
})
