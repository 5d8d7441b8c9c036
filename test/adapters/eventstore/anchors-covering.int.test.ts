import { generateKeyPairSync, randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Client, type Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anchorKeyIdOf, writeAnchor } from '../../../src/adapters/eventstore/anchors.ts'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import type { EventStore, EventToAppend, Position } from '../../../src/application/ports/event-store.ts'
import { silentLogger } from '../../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../../support/postgres.ts'

/**
 * An anchor asked to cover a position (`covering`, what a reconciliation run asks for its own events):
 * none is written while an older append still runs, so that the position is not readable yet; one is,
 * once it ends; and when the last anchor covers the position already, it is the answer and none is
 * written. Real PostgreSQL, an appender held open on its own connection.
 */

let schema: TestSchema
let pool: Pool
let store: EventStore
const { privateKey } = generateKeyPairSync('ed25519')
const key = { privateKey, keyId: anchorKeyIdOf(privateKey) }

const anEvent = (): EventToAppend => ({
  eventId: randomUUID(),
  type: 'ThingHappened',
  schemaVersion: 1,
  data: { n: 1 },
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'test' },
})

const anchorRows = async (): Promise<number> => Number((await pool.query<{ n: string }>(`select count(*)::text as n from "${schema.schema}".anchors`)).rows[0]?.n ?? '0')

const head = async (): Promise<Position> => {
  const h = await store.headPosition()()
  if (E.isLeft(h) || h.right === undefined) throw new Error('no head')
  return h.right
}

const write = (covering?: Position) => writeAnchor(pool, schema.schema, key, 'covering test', undefined, covering === undefined ? {} : { covering })()

beforeAll(async () => {
  schema = await freshEventStoreSchema('anchorcover')
  pool = schema.pool(4)
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: schema.schema })
}, 120_000)

afterAll(async () => {
  await store.close()
  await schema.drop()
})

describe('an anchor that must cover a position', () => {
  it('waits for an older append still running, is written once it ends, and is not written again when the last one covers it', async () => {
    expect(E.isRight(await store.append(`thing-${randomUUID()}`, [anEvent()], 'no_stream')())).toBe(true)
    const first = await write()
    if (E.isLeft(first) || first.right === null) throw new Error('first anchor')
    expect(first.right.existing).toBeUndefined()

    // One more append, committed and readable; then an append of the log's own kind, inserted and still
    // open, and a later one: that one is committed, but not readable until the open one ends.
    expect(E.isRight(await store.append(`thing-${randomUUID()}`, [anEvent()], 'no_stream')())).toBe(true)
    const held = new Client({ connectionString: schema.url })
    await held.connect()
    try {
      await held.query('begin')
      await held.query(
        `insert into "${schema.schema}".events (stream_name, stream_revision, event_id, type, schema_version, data, metadata) values ($1, 0, $2, 'ThingHappened', 1, '{"n":1}', '{"correlationId":"c","causationId":"c","recordedAt":"2026-01-01T00:00:00.000Z","source":"test"}')`,
        [`held-${randomUUID()}`, randomUUID()],
      )
      expect(E.isRight(await store.append(`thing-${randomUUID()}`, [anEvent()], 'no_stream')())).toBe(true)
      const target = await head()

      // Without `covering`, an anchor is written of the log as far as it is readable: short of the target.
      const short = await write()
      if (E.isLeft(short) || short.right === null) throw new Error('anchor without covering')
      expect((short.right.position ?? '') < target).toBe(true)
      const rows = await anchorRows()

      // With it: nothing written while the target is not readable, null.
      expect(await write(target)).toEqual(E.right(null))
      expect(await anchorRows()).toBe(rows)

      await held.query('rollback')
      const second = await write(target)
      if (E.isLeft(second) || second.right === null) throw new Error('second anchor')
      expect(second.right.existing).toBeUndefined()
      expect(second.right.seq).toBe(short.right.seq + 1n)
      expect((second.right.position ?? '') >= target).toBe(true)
      expect(await anchorRows()).toBe(rows + 1)

      // The last anchor covers the target: it is the answer, and nothing is written.
      const again = await write(target)
      if (E.isLeft(again) || again.right === null) throw new Error('existing anchor')
      expect(again.right).toMatchObject({ existing: true, seq: second.right.seq, position: second.right.position })
      expect(await anchorRows()).toBe(rows + 1)
      // Also for a target the last anchor passed long ago.
      expect(await write(first.right.position ?? undefined)).toMatchObject({ _tag: 'Right', right: { existing: true, seq: second.right.seq } })
    } finally {
      await held.end()
    }
  })
})
