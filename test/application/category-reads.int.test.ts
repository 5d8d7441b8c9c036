import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Client, type Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { readCategoryUpToHead } from '../../src/application/category-reads.ts'
import type { EventStore, EventToAppend, ReadItem } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../support/postgres.ts'

/**
 * `readCategoryUpToHead` on real PostgreSQL: an event committed while an older append transaction
 * is still open is not readable from the global log yet; a decision that must see every event
 * of a category (start-up recovery of creates, the refund carry-over) waits for it instead of missing
 * it, and says so when it could not wait long enough.
 */

const log = silentLogger()
let es: TestSchema
let pool: Pool
let store: EventStore

const anEvent = (n: number): EventToAppend => ({
  eventId: randomUUID(),
  type: 'TestHappened',
  schemaVersion: 1,
  data: { n },
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: new Date(Date.UTC(2026, 0, 1)).toISOString(), source: 'operator' },
})

beforeAll(async () => {
  es = await freshEventStoreSchema('category_reads')
  pool = es.pool(4)
  store = makePostgresEventStore({ pool, log }, { schema: es.schema })
})

afterAll(async () => {
  await store.close()
  await es.drop()
})

const append = async (stream: string, n: number): Promise<void> => {
  const r = await store.append(stream, [anEvent(n)], 'any')()
  if (E.isLeft(r)) throw new Error(`append ${stream}: ${r.left._tag}`)
}

/** An append transaction holding a transaction id, so events committed after it began stay beyond the horizon until it ends. */
const openTransaction = async (): Promise<{ readonly end: () => Promise<void> }> => {
  const c = new Client({ connectionString: es.url })
  await c.connect()
  await c.query('begin')
  await c.query(`select "${es.schema}".register_append()`)
  await c.query('select pg_current_xact_id()')
  return {
    end: async () => {
      await c.query('commit')
      await c.end()
    },
  }
}

const numbersOf = (items: ReadonlyArray<ReadItem>, stream: string): ReadonlyArray<unknown> => items.flatMap((i) => (E.isRight(i) && i.right.streamName === stream ? [i.right.data['n']] : []))

describe('readCategoryUpToHead', () => {
  it('waits for an event hidden behind an older open transaction, and visits it', async () => {
    const stream = `order-wait-${randomUUID().slice(0, 8)}`
    await append(stream, 1)
    const older = await openTransaction()
    await append(stream, 2)
    // A plain read of the category does not show event 2 while the older transaction is open.
    const plain = await store.readCategory('order-wait-')()
    expect(E.isRight(plain) && numbersOf(plain.right, stream)).not.toContain(2)
    const seen: ReadItem[] = []
    const reading = readCategoryUpToHead(store, 'order-wait-', {}, (item): E.Either<never, void> => {
      seen.push(item)
      return E.right(undefined)
    })
    await new Promise((r) => setTimeout(r, 300))
    await older.end()
    const read = await reading
    expect(E.isRight(read) && read.right._tag).toBe('UpToHead')
    expect(numbersOf(seen, stream)).toEqual([1, 2])
  })

  it('says it stopped short of the head when the older transaction outlasts the wait, and never visited what it could not read', async () => {
    const stream = `order-short-${randomUUID().slice(0, 8)}`
    const older = await openTransaction()
    try {
      await append(stream, 1)
      const seen: ReadItem[] = []
      const read = await readCategoryUpToHead(
        store,
        'order-short-',
        {},
        (item): E.Either<never, void> => {
          seen.push(item)
          return E.right(undefined)
        },
        { waitMs: 300, pollMs: 20 },
      )
      expect(E.isRight(read) && read.right._tag).toBe('ShortOfHead')
      expect(numbersOf(seen, stream)).toEqual([])
    } finally {
      await older.end()
    }
  })

  it('stops with the Left a visit returns', async () => {
    const stream = `order-stop-${randomUUID().slice(0, 8)}`
    await append(stream, 1)
    await append(stream, 2)
    let visits = 0
    const read = await readCategoryUpToHead(store, 'order-stop-', {}, (): E.Either<string, void> => {
      visits += 1
      return E.left('enough')
    })
    expect(read).toEqual(E.left('enough'))
    expect(visits).toBe(1)
  })
})
