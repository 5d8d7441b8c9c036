import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatherAppends } from '../../../src/adapters/eventstore/gathered-appends.ts'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import type { EventStore, EventToAppend } from '../../../src/application/ports/event-store.ts'
import { silentLogger } from '../../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../../support/postgres.ts'

// Many streams in one round trip (issue 28, reconciliation): appendToStreams answers each append as
// append would, readStreams gives each stream as readStream does, and gatherAppends changes nothing a
// writer can see.
let db: TestSchema
let store: EventStore
beforeAll(async () => {
  db = await freshEventStoreSchema('append_to_streams')
  store = makePostgresEventStore({ pool: db.pool(4), log: silentLogger() }, { schema: db.schema })
})
afterAll(async () => {
  await store.close()
  await db.drop()
})

const anEvent = (n: number, eventId: string = randomUUID()): EventToAppend => ({
  eventId,
  type: 'Counted',
  schemaVersion: 1,
  data: { n },
  metadata: { correlationId: 'many', causationId: 'many', recordedAt: '2026-01-01T00:00:00.000Z', source: 'operator' },
})

const appendToStreams = (s: EventStore): NonNullable<EventStore['appendToStreams']> => {
  if (s.appendToStreams === undefined) throw new Error('the PostgreSQL store appends to many streams')
  return s.appendToStreams
}

describe('appendToStreams (PostgreSQL)', () => {
  it('appends to each stream whose expectation holds, refuses the others with the actual revision, and reads back as readStream does', async () => {
    const [a, b, c] = [`many-${randomUUID()}`, `many-${randomUUID()}`, `many-${randomUUID()}`]
    expect(E.isRight(await store.append(b, [anEvent(0), anEvent(1)], 'no_stream')())).toBe(true)
    const answered = await appendToStreams(store)([
      { stream: a, events: [anEvent(10), anEvent(11)], expected: 'no_stream' },
      { stream: b, events: [anEvent(12)], expected: 1n },
      { stream: c, events: [anEvent(13)], expected: 4n },
    ])()
    if (E.isLeft(answered)) throw new Error('appendToStreams failed')
    const [ra, rb, rc] = answered.right
    expect(ra !== undefined && E.isRight(ra) ? ra.right.nextExpectedRevision : null).toBe(1n)
    expect(rb !== undefined && E.isRight(rb) ? rb.right.nextExpectedRevision : null).toBe(2n)
    expect(rc).toEqual(E.left({ _tag: 'WrongExpectedVersion', stream: c, expected: 4n, actual: 'no_stream' }))
    // The positions answered are those the log holds.
    const readB = await store.readStream(b)()
    const lastB = E.isRight(readB) ? readB.right.at(-1) : undefined
    expect(lastB !== undefined && E.isRight(lastB) && rb !== undefined && E.isRight(rb) ? lastB.right.position === rb.right.position : false).toBe(true)

    if (store.readStreams === undefined) throw new Error('the PostgreSQL store reads many streams')
    const many = await store.readStreams([a, b, c])()
    if (E.isLeft(many)) throw new Error('readStreams failed')
    expect([...many.right.keys()].sort()).toEqual([a, b].sort())
    for (const s of [a, b]) {
      const one = await store.readStream(s)()
      expect(many.right.get(s)).toEqual(E.isRight(one) ? one.right : null)
    }
    expect(many.right.get(b)?.map((i) => (E.isRight(i) ? i.right.data['n'] : null))).toEqual([0, 1, 12])
  })

  it('a batch stored already answers as the first time (a retry), an id stored elsewhere is a conflict, and the other appends of the round trip still land', async () => {
    const [a, b, d] = [`many-${randomUUID()}`, `many-${randomUUID()}`, `many-${randomUUID()}`]
    const first = anEvent(1)
    const once = await store.append(a, [first], 'no_stream')()
    const taken = anEvent(2)
    expect(E.isRight(await store.append(b, [taken], 'no_stream')())).toBe(true)
    const answered = await appendToStreams(store)([
      { stream: a, events: [first], expected: 'no_stream' },
      { stream: d, events: [anEvent(3)], expected: 'no_stream' },
      { stream: `many-${randomUUID()}`, events: [anEvent(4, taken.eventId)], expected: 'no_stream' },
    ])()
    if (E.isLeft(answered)) throw new Error('appendToStreams failed')
    const [ra, rd, rx] = answered.right
    expect(ra).toEqual(E.isRight(once) ? E.right({ ...once.right, alreadyStored: true }) : null)
    expect(rd !== undefined && E.isRight(rd) ? rd.right.nextExpectedRevision : null).toBe(0n)
    expect(rx !== undefined && E.isLeft(rx) ? rx.left._tag : null).toBe('EventIdConflict')
  })

  it('gathered appends: concurrent writers of 40 streams each get their own answer, in one round trip or few, and a stale expectation is refused as by append', async () => {
    const calls: number[] = []
    const counting: EventStore = { ...store, appendToStreams: (appends) => (calls.push(appends.length), appendToStreams(store)(appends)) }
    const gathered = gatherAppends(counting, { maxAppends: 256, maxInFlight: 1 })
    const streams = Array.from({ length: 40 }, () => `gathered-${randomUUID()}`)
    const results = await Promise.all(streams.map((s, i) => gathered.append(s, [anEvent(i)], 'no_stream')()))
    expect(results.every((r) => E.isRight(r) && r.right.nextExpectedRevision === 0n)).toBe(true)
    expect(calls.reduce((n, x) => n + x, 0)).toBe(40)
    expect(calls.length).toBeLessThanOrEqual(2)
    // Two appends of one stream never share a round trip: the second at revision 0 follows the first.
    const s = streams[0] ?? ''
    const [x, y] = await Promise.all([gathered.append(s, [anEvent(100)], 0n)(), gathered.append(s, [anEvent(101)], 0n)()])
    expect(x !== undefined && E.isRight(x) ? x.right.nextExpectedRevision : null).toBe(1n)
    expect(y).toEqual(E.left({ _tag: 'WrongExpectedVersion', stream: s, expected: 0n, actual: 1n }))
  })

  it('a round trip PostgreSQL refuses (text jsonb cannot store) is settled append by append on the same connection: no connection is ended and opened again', async () => {
    const pool = db.pool(1)
    let opened = 0
    pool.on('connect', () => {
      opened += 1
    })
    const own = makePostgresEventStore({ pool, log: silentLogger() }, { schema: db.schema })
    try {
      for (let round = 0; round < 3; round++) {
        const [good, bad] = [`ok-${randomUUID()}`, `nul-${randomUUID()}`]
        const answered = await appendToStreams(own)([
          { stream: good, events: [anEvent(round)], expected: 'no_stream' },
          { stream: bad, events: [{ ...anEvent(round), data: { note: 'a\u0000b' } }], expected: 'no_stream' },
        ])()
        if (E.isLeft(answered)) throw new Error('appendToStreams failed')
        const [g, b] = answered.right
        expect(g !== undefined && E.isRight(g) ? g.right.nextExpectedRevision : null).toBe(0n)
        expect(b !== undefined && E.isLeft(b) ? b.left._tag : null).toBe('InvalidAppend')
      }
      // One connection, opened once: the refused statements left it usable (pg's pool.query would
      // have ended it at each of them).
      expect(opened).toBe(1)
    } finally {
      await own.close()
      await pool.end()
    }
  })
})
