import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import { makeKnex } from '../../../src/platform/postgres/pool.ts'
import { migrateEventStore } from '../../../src/adapters/postgres/migrations/eventstore.ts'
import type { EventToAppend, Position } from '../../../src/application/ports/event-store.ts'
import { silentLogger } from '../../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../../support/postgres.ts'
import { eventStoreContract } from './eventstore-contract.ts'

const log = silentLogger()
let schema: TestSchema

beforeAll(async () => {
  schema = await freshEventStoreSchema('eventstore')
})
afterAll(async () => {
  await schema.drop()
})

const makeStore = (poolMax = 4) => {
  const pool = schema.pool(poolMax)
  const store = makePostgresEventStore({ pool, log }, { schema: schema.schema })
  return {
    store,
    close: async () => {
      await store.close()
      await pool.end()
    },
  }
}

eventStoreContract('PostgreSQL', () => Promise.resolve(makeStore()), {
  writeUndecodable: async (stream) => {
    await schema.db.raw(
      `insert into "${schema.schema}".events (stream_name, stream_revision, event_id, type, schema_version, data, metadata)
       select ?, coalesce(max(stream_revision), -1) + 1, gen_random_uuid(), 'Broken', 1, '{}', '{"correlationId": 5}'
         from "${schema.schema}".events where stream_name = ?`,
      [stream, stream],
    )
  },
})

const anEvent = (data: EventToAppend['data'] = { n: 1 }): EventToAppend => ({
  eventId: randomUUID(),
  type: 'ThingHappened',
  schemaVersion: 1,
  data,
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2025-01-01T00:00:00.000Z', source: 'test' },
})

describe('PostgreSQL event store specifics', () => {
  it('headPosition names the last committed event, even while it waits behind an older open append', async () => {
    const { store, close } = makeStore()
    const marker = await store.append(`m-${randomUUID()}`, [anEvent()], 'any')()
    if (E.isLeft(marker)) throw new Error('marker')
    const slow = await schema.pool(1).connect()
    try {
      await slow.query('begin')
      // An appender: registers, takes a transaction id, then stays open (other transactions of the cluster never hold readers back).
      await slow.query(`select "${schema.schema}".register_append()`)
      await slow.query('select pg_current_xact_id()')
      const appended = await store.append(`head-${randomUUID()}`, [anEvent(), anEvent()], 'any')()
      if (E.isLeft(appended)) throw new Error('append')
      expect(await store.headPosition()()).toEqual(E.right(appended.right.position))
      expect(await store.readAll({ from: marker.right.position })()).toEqual(E.right([]))
      await slow.query('commit')
      const after = await store.readAll({ from: marker.right.position })()
      if (E.isLeft(after)) throw new Error('readAll')
      const last = after.right.at(-1)
      expect(after.right).toHaveLength(2)
      expect(last !== undefined && E.isRight(last) ? last.right.position : undefined).toBe(appended.right.position)
    } finally {
      slow.release()
      await close()
    }
  })

  it('never hands out an event while an older transaction is still open', async () => {
    const { store, close } = makeStore()
    const marker = await store.append(`m-${randomUUID()}`, [anEvent()], 'any')()
    if (E.isLeft(marker)) throw new Error('marker')
    const from: Position = marker.right.position
    const slow = await schema.pool(1).connect()
    try {
      const early = anEvent()
      const late = anEvent()
      await slow.query('begin')
      // The slow writer takes its transaction id first, then stays open.
      await slow.query(
        `insert into "${schema.schema}".events (stream_name, stream_revision, event_id, type, schema_version, data, metadata) values ($1, 0, $2, $3, 1, $4, $5)`,
        [`slow-${randomUUID()}`, early.eventId, early.type, JSON.stringify(early.data), JSON.stringify(early.metadata)],
      )
      const fast = await store.append(`fast-${randomUUID()}`, [late], 'any')()
      expect(E.isRight(fast)).toBe(true)
      const before = await store.readAll({ from })()
      if (E.isLeft(before)) throw new Error('readAll')
      expect(before.right).toEqual([])
      await slow.query('commit')
      const after = await store.readAll({ from })()
      if (E.isLeft(after)) throw new Error('readAll')
      expect(after.right.map((i) => (E.isRight(i) ? i.right.eventId : 'bad'))).toEqual([early.eventId, late.eventId])
    } finally {
      slow.release()
      await close()
    }
  })

  it('rejects an event id already stored in another stream', async () => {
    const { store, close } = makeStore()
    const e = anEvent()
    expect(E.isRight(await store.append(`a-${randomUUID()}`, [e], 'any')())).toBe(true)
    const again = await store.append(`b-${randomUUID()}`, [e], 'any')()
    expect(E.isLeft(again) && again.left._tag).toBe('EventIdConflict')
    await close()
  })

  it('reports data jsonb cannot store (NUL, a lone surrogate) as an invalid append, in every append shape', async () => {
    const { store, close } = makeStore()
    for (const text of ['a\u0000b', 'a\ud800b', '\udc00']) {
      const single = await store.append(`nul-${randomUUID()}`, [anEvent({ text })], 'no_stream')()
      expect(E.isLeft(single) && single.left._tag).toBe('InvalidAppend')
      const queued = await store.append(`nul-${randomUUID()}`, [anEvent({ text })], 'any')()
      expect(E.isLeft(queued) && queued.left._tag).toBe('InvalidAppend')
      const batch = await store.append(`nul-${randomUUID()}`, [anEvent(), anEvent({ text })], 'no_stream')()
      expect(E.isLeft(batch) && batch.left._tag).toBe('InvalidAppend')
    }
    await close()
  })

  it('refuses to go on when stored transaction ids are ahead of the cluster (a logical restore)', async () => {
    const restored = await freshEventStoreSchema('restored')
    try {
      await restored.db.raw(
        `insert into "${restored.schema}".events (tx_id, stream_name, stream_revision, event_id, type, schema_version, data, metadata)
         values ((pg_current_xact_id()::text::numeric + 4294967296)::text::xid8, 'order-1', 0, gen_random_uuid(), 'T', 1, '{}', '{}')`,
      )
      const again = await migrateEventStore({ db: restored.db, log }, { schema: restored.schema })()
      expect(E.isLeft(again) && String(again.left.cause)).toMatch(/logical dump/)
    } finally {
      await restored.drop()
    }
  })

  it('migrates idempotently, also when processes race', async () => {
    const db = makeKnex(schema.pool(4))
    const runs = await Promise.all([1, 2, 3].map(() => migrateEventStore({ db, log }, { schema: schema.schema })()))
    expect(runs.every(E.isRight)).toBe(true)
    await db.destroy()
  })
})
