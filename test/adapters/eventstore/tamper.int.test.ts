import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { afterEach, describe, expect, it } from 'vitest'
import { verifyEventChain, type ChainVerification, type StreamHead, type VerifyOptions } from '../../../src/adapters/eventstore/chain.ts'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import { migrateEventStore } from '../../../src/adapters/postgres/migrations/eventstore.ts'
import type { EventStore, EventToAppend, ExpectedRevision, RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { silentLogger } from '../../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../../support/postgres.ts'

const log = silentLogger()
const schemas: TestSchema[] = []

afterEach(async () => {
  await Promise.all(schemas.splice(0).map((s) => s.drop()))
})

const anEvent = (n: number, extra: Record<string, string> = {}): EventToAppend => ({
  eventId: randomUUID(),
  type: 'ThingHappened',
  schemaVersion: 1,
  data: { n, note: `thing ${String(n)} — ไทย`, ...extra },
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'test' },
})

type Fixture = {
  readonly schema: TestSchema
  readonly store: EventStore
  /** Every event of `stream`, as stored. */
  readonly read: (stream: string) => Promise<ReadonlyArray<RecordedEvent>>
  readonly verify: (options?: VerifyOptions) => Promise<ChainVerification>
  /** Runs `sql` with every user trigger of the events table disabled (as a superuser can). */
  readonly behindSatangsBack: (sql: string, values?: ReadonlyArray<unknown>) => Promise<void>
  readonly t: string
}

const fixture = async (label: string): Promise<Fixture> => {
  const schema = await freshEventStoreSchema(label)
  schemas.push(schema)
  const pool = schema.pool(4)
  const store = makePostgresEventStore({ pool, log }, { schema: schema.schema })
  const t = `"${schema.schema}".events`
  return {
    schema,
    store,
    t,
    read: async (stream) => {
      const r = await store.readStream(stream)()
      if (E.isLeft(r)) throw new Error('readStream failed')
      return r.right.map((i) => {
        if (E.isLeft(i)) throw new Error('undecodable')
        return i.right
      })
    },
    verify: async (options) => {
      const r = await verifyEventChain(pool, schema.schema, options)()
      if (E.isLeft(r)) throw new Error('verify failed', { cause: r.left.cause })
      return r.right
    },
    behindSatangsBack: async (sql, values = []) => {
      const c = await pool.connect()
      try {
        await c.query('begin')
        await c.query(`alter table ${t} disable trigger user`)
        await c.query(sql, [...values])
        await c.query(`alter table ${t} enable trigger user`)
        await c.query('commit')
      } catch (e) {
        await c.query('rollback')
        throw e
      } finally {
        c.release()
      }
    },
  }
}

const append = async (store: EventStore, stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision = 'any'): Promise<void> => {
  const r = await store.append(stream, events, expected)()
  if (E.isLeft(r)) throw new Error(`append failed: ${r.left._tag}`)
}

/** Three streams, written through every append path: one event, a batch in one statement, and `any` (append_queued). */
const seed = async (f: Fixture): Promise<{ readonly a: string; readonly b: string; readonly c: string }> => {
  const id = randomUUID().slice(0, 8)
  const a = `order-140000000000000001-A-${id}`
  const b = `order-140000000000000001-B-${id}`
  const c = `refund-140000000000000001-C-${id}`
  await append(f.store, a, [anEvent(0)], 'no_stream')
  await append(f.store, a, [anEvent(1), anEvent(2), anEvent(3)], 0n)
  await append(f.store, b, [anEvent(0), anEvent(1)], 'no_stream')
  await append(f.store, a, [anEvent(4)], 3n)
  await append(f.store, c, [anEvent(0), anEvent(1), anEvent(2)], 'any')
  await append(f.store, b, [anEvent(2)], 'stream_exists')
  await append(f.store, a, [anEvent(5), anEvent(6)], 'any')
  return { a, b, c }
}

describe('the append-only events table', () => {
  it.each([
    ['UPDATE', (t: string) => `update ${t} set data = '{"n": 99}' where stream_revision = 1`],
    ['DELETE', (t: string) => `delete from ${t} where stream_revision = 1`],
    ['TRUNCATE', (t: string) => `truncate ${t}`],
  ])('refuses %s with a clear message', async (op, sql) => {
    const f = await fixture('appendonly')
    await seed(f)
    await expect(f.schema.db.raw(sql(f.t))).rejects.toThrow(`satang event log is append-only: ${op} refused on ${f.schema.schema}.events`)
    expect((await f.verify()).intact).toBe(true)
  })

  it('refuses an event whose previous revision is not stored: the chain never has a broken link', async () => {
    const f = await fixture('gap')
    const { a } = await seed(f)
    await expect(
      f.schema.db.raw(`insert into ${f.t} (stream_name, stream_revision, event_id, type, schema_version, data, metadata) values (?, 9, gen_random_uuid(), 'T', 1, '{}', '{}')`, [a]),
    ).rejects.toThrow(`cannot append ${a} revision 9: revision 8 of that stream is not stored`)
  })

  it('sets the hash itself: a writer cannot choose it', async () => {
    const f = await fixture('forged')
    const stream = `s-${randomUUID()}`
    await f.schema.db.raw(
      `insert into ${f.t} (stream_name, stream_revision, event_id, type, schema_version, data, metadata, prev_hash, hash)
       values (?, 0, gen_random_uuid(), 'T', 1, '{}', '{}', null, '\\x00'::bytea)`,
      [stream],
    )
    const rows = await f.schema.db.raw<{ rows: Array<{ n: number }> }>(`select octet_length(hash) as n from ${f.t} where stream_name = ?`, [stream])
    expect(rows.rows).toEqual([{ n: 32 }])
    expect((await f.verify()).intact).toBe(true)
  })
})

describe('verifyEventChain', () => {
  it('verifies a log written through every append path, and returns counts and a digest of the stream heads', async () => {
    const f = await fixture('intact')
    const { a, b, c } = await seed(f)
    const progress: number[] = []
    const r = await f.verify({ collectHeads: true, pageSize: 4, onProgress: (p) => progress.push(p.events) })
    expect(r).toMatchObject({ intact: true, firstBreak: null, streams: 3, events: 13 })
    expect(r.headsDigest).toMatch(/^[0-9a-f]{64}$/)
    expect(r.heads?.map((h) => [h.stream, h.revision])).toEqual([
      [a, 6n],
      [b, 2n],
      [c, 2n],
    ])
    expect(progress).toEqual([4, 8, 12, 13])
    // The same log gives the same digest; one more event changes it.
    expect((await f.verify()).headsDigest).toBe(r.headsDigest)
    await append(f.store, c, [anEvent(3)])
    expect((await f.verify()).headsDigest).not.toBe(r.headsDigest)
  })

  it('chains every event to the previous one of its stream, a batch within itself too', async () => {
    const f = await fixture('links')
    const { a } = await seed(f)
    const rows = await f.schema.db.raw<{ rows: Array<{ stream_revision: string; prev_hash: Buffer | null; hash: Buffer }> }>(
      `select stream_revision, prev_hash, hash from ${f.t} where stream_name = ? order by stream_revision`,
      [a],
    )
    expect(rows.rows.map((r) => Number(r.stream_revision))).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(rows.rows[0]?.prev_hash).toBeNull()
    rows.rows.slice(1).forEach((r, i) => expect(r.prev_hash?.equals(rows.rows[i]?.hash ?? Buffer.alloc(0))).toBe(true))
  })

  it('an empty log is intact', async () => {
    const f = await fixture('empty')
    expect(await f.verify()).toMatchObject({ intact: true, streams: 0, events: 0 })
  })

  it('detects an event whose data was altered and names it', async () => {
    const f = await fixture('altered')
    const { a } = await seed(f)
    const target = (await f.read(a))[3]
    if (target === undefined) throw new Error('seed')
    await f.behindSatangsBack(`update ${f.t} set data = jsonb_set(data, '{n}', '300') where event_id = $1`, [target.eventId])
    const r = await f.verify()
    expect(r.intact).toBe(false)
    expect(r.firstBreak).toMatchObject({ kind: 'hash_mismatch', stream: a, revision: 3n, position: target.position, eventId: target.eventId })
    expect(r.firstBreak?.reason).toContain(`stream ${a} revision 3 (position ${target.position}, event ${target.eventId})`)
    expect(r.firstBreak?.reason).toContain('content was altered')
    expect(r.headsDigest).toBeNull()
  })

  it('detects an altered metadata, type or commit time', async () => {
    for (const change of [`metadata = metadata || '{"actor":"mallory"}'`, `type = 'OtherThing'`, `recorded_at = recorded_at + interval '1 microsecond'`]) {
      const f = await fixture('columns')
      const { c } = await seed(f)
      const target = (await f.read(c))[1]
      await f.behindSatangsBack(`update ${f.t} set ${change} where event_id = $1`, [target?.eventId])
      expect((await f.verify()).firstBreak).toMatchObject({ kind: 'hash_mismatch', stream: c, revision: 1n, eventId: target?.eventId })
    }
  })

  it('detects a deleted event in the middle of a stream and names the gap', async () => {
    const f = await fixture('deleted')
    const { b } = await seed(f)
    const [, deleted, after] = await f.read(b)
    if (deleted === undefined || after === undefined) throw new Error('seed')
    await f.behindSatangsBack(`delete from ${f.t} where event_id = $1`, [deleted.eventId])
    const r = await f.verify()
    expect(r.firstBreak).toMatchObject({ kind: 'missing_revision', stream: b, revision: 2n, position: after.position, eventId: after.eventId, missing: { from: 1n, to: 1n } })
    expect(r.firstBreak?.reason).toContain('revision 1 of the stream is missing (deleted)')
  })

  it('detects a deleted first event', async () => {
    const f = await fixture('deletedfirst')
    const { c } = await seed(f)
    const [first, second] = await f.read(c)
    await f.behindSatangsBack(`delete from ${f.t} where event_id = $1`, [first?.eventId])
    expect((await f.verify()).firstBreak).toMatchObject({ kind: 'missing_revision', stream: c, revision: 1n, eventId: second?.eventId, missing: { from: 0n, to: 0n } })
  })

  it('detects data swapped between two events and names the first of them', async () => {
    const f = await fixture('swapped')
    const { a, c } = await seed(f)
    const x = (await f.read(a))[5]
    const y = (await f.read(c))[0]
    if (x === undefined || y === undefined) throw new Error('seed')
    await f.behindSatangsBack(
      `update ${f.t} e set data = o.data from ${f.t} o
        where (e.event_id, o.event_id) in (($1::uuid, $2::uuid), ($2::uuid, $1::uuid))`,
      [x.eventId, y.eventId],
    )
    const swapped = await f.read(a)
    expect(swapped[5]?.data).toEqual(y.data)
    expect((await f.verify()).firstBreak).toMatchObject({ kind: 'hash_mismatch', stream: a, revision: 5n, position: x.position, eventId: x.eventId })
  })

  it('detects an event rewritten together with its hash: the next event no longer links to it', async () => {
    const f = await fixture('rehashed')
    const { a } = await seed(f)
    const events = await f.read(a)
    const [rewritten, next] = [events[2], events[3]]
    if (rewritten === undefined || next === undefined) throw new Error('seed')
    await f.behindSatangsBack(
      `update ${f.t} set data = '{"n": 2000}',
              hash = "${f.schema.schema}".event_chain_hash(prev_hash, event_id, stream_name, stream_revision, type, schema_version, '{"n": 2000}'::jsonb, metadata, recorded_at, position, tx_id)
        where event_id = $1`,
      [rewritten.eventId],
    )
    const r = await f.verify()
    expect(r.firstBreak).toMatchObject({ kind: 'link_mismatch', stream: a, revision: 3n, position: next.position, eventId: next.eventId })
    expect(r.firstBreak?.reason).toContain(`chain link mismatch: it was appended after a different revision 2 than the stored one (event ${rewritten.eventId})`)
  })

  it('needs kept heads to see deleted last events, a deleted stream, or a chain rewritten to its end', async () => {
    const f = await fixture('heads')
    const { a, b } = await seed(f)
    const kept = (await f.verify({ collectHeads: true })).heads ?? []
    const keptHeads: ReadonlyArray<StreamHead> = kept
    expect(kept).toHaveLength(3)
    expect((await f.verify({ keptHeads })).intact).toBe(true)

    // More events since the heads were kept: still intact.
    await append(f.store, b, [anEvent(3)])
    expect((await f.verify({ keptHeads })).intact).toBe(true)

    // The last event of a deleted: the log is consistent in itself, the kept head is not there.
    const lastOfA = (await f.read(a)).at(-1)
    await f.behindSatangsBack(`delete from ${f.t} where event_id = $1`, [lastOfA?.eventId])
    expect((await f.verify()).intact).toBe(true)
    expect((await f.verify({ keptHeads })).firstBreak).toMatchObject({ kind: 'head_missing', stream: a, revision: 6n, position: null, missing: { from: 6n, to: 6n } })

    // b's kept head rewritten with a recomputed chain from there on.
    await f.behindSatangsBack(`delete from ${f.t} where stream_name = $1`, [a])
    await f.behindSatangsBack(
      `update ${f.t} set data = '{"n": -1}',
              hash = "${f.schema.schema}".event_chain_hash(prev_hash, event_id, stream_name, stream_revision, type, schema_version, '{"n": -1}'::jsonb, metadata, recorded_at, position, tx_id)
        where stream_name = $1 and stream_revision = 3`,
      [b],
    )
    expect((await f.verify()).intact).toBe(true)
    const headsWithoutA = keptHeads.filter((h) => h.stream !== a)
    expect((await f.verify({ keptHeads: headsWithoutA })).intact).toBe(true)
    await f.behindSatangsBack(
      `update ${f.t} set data = '{"n": -2}',
              hash = "${f.schema.schema}".event_chain_hash(prev_hash, event_id, stream_name, stream_revision, type, schema_version, '{"n": -2}'::jsonb, metadata, recorded_at, position, tx_id)
        where stream_name = $1 and stream_revision = 2`,
      [b],
    )
    await f.behindSatangsBack(
      `update ${f.t} e set prev_hash = p.hash,
              hash = "${f.schema.schema}".event_chain_hash(p.hash, e.event_id, e.stream_name, e.stream_revision, e.type, e.schema_version, e.data, e.metadata, e.recorded_at, e.position, e.tx_id)
         from ${f.t} p where e.stream_name = $1 and e.stream_revision = 3 and p.stream_name = $1 and p.stream_revision = 2`,
      [b],
    )
    expect((await f.verify()).intact).toBe(true)
    expect((await f.verify({ keptHeads: headsWithoutA })).firstBreak).toMatchObject({ kind: 'head_mismatch', stream: b, revision: 2n })

    // A whole stream deleted.
    expect((await f.verify({ keptHeads: keptHeads.filter((h) => h.stream === a) })).firstBreak).toMatchObject({ kind: 'head_missing', stream: a })
  })

  it('gives existing events their hashes when the migration is applied to a populated log', async () => {
    const f = await fixture('backfill')
    await seed(f)
    const s = f.schema.schema
    const before = await f.schema.db.raw<{ rows: Array<{ event_id: string; hash: Buffer }> }>(`select event_id, hash from ${f.t} order by event_id`)
    // Back to the state before 0002: no chain columns, no triggers.
    await f.schema.db.raw(`drop function "${s}".events_chain, "${s}".events_refuse_change, "${s}".event_chain_hash cascade`)
    await f.schema.db.raw(`alter table ${f.t} drop column hash, drop column prev_hash`)
    await f.schema.db.raw(`delete from "${s}".eventstore_migrations where name = '0002_tamper_evidence'`)
    const migrated = await migrateEventStore({ db: f.schema.db, log }, { schema: s })()
    expect(E.isRight(migrated)).toBe(true)
    const after = await f.schema.db.raw<{ rows: Array<{ event_id: string; hash: Buffer }> }>(`select event_id, hash from ${f.t} order by event_id`)
    expect(after.rows.map((r) => [r.event_id, r.hash.toString('hex')])).toEqual(before.rows.map((r) => [r.event_id, r.hash.toString('hex')]))
    expect((await f.verify()).intact).toBe(true)
    await expect(f.schema.db.raw(`delete from ${f.t}`)).rejects.toThrow('append-only')
  })

  it('hashes in one array (0008) exactly as field by field (0002), for awkward values too', async () => {
    const f = await fixture('onearray')
    const s = f.schema.schema
    const stream = `ลูกค้า-🧾-"q"\\b-${randomUUID()}`
    const awkward: EventToAppend[] = [
      { ...anEvent(0), type: 'Type ไทย ✓', data: {} },
      { ...anEvent(1), data: { text: 'back\\slash "quote" tab\t newline\n nul-free \u0001 ü é ไทย 𝄞', nested: { a: [1, 2.5, -0, null, true, 'x'] } } },
      { ...anEvent(2), data: { big: 'ก'.repeat(70_000), ascii: 'z'.repeat(70_000) } },
      { ...anEvent(3), schemaVersion: 2147483647, metadata: { correlationId: '', causationId: 'ค', recordedAt: '2026-01-01T00:00:00.000Z', source: '\\' } },
    ]
    await append(f.store, stream, awkward.slice(0, 1), 'no_stream')
    await append(f.store, stream, awkward.slice(1), 0n)
    // A recorded_at before 2001 (fewer digits of epoch microseconds), written by hand through the trigger.
    await f.schema.db.raw(
      `insert into ${f.t} (stream_name, stream_revision, event_id, type, schema_version, data, metadata, recorded_at)
       values (?, 4, gen_random_uuid(), 'Old', 1, '{"n": 1}', '{}', '1999-12-31 23:59:59.999999+07')`,
      [stream],
    )
    // 0002's expression, written out here as the docs state the format.
    const field = (v: string): string => `int4send(octet_length(convert_to(${v}, 'UTF8'))) || convert_to(${v}, 'UTF8')`
    const fields = ['e.event_id::text', 'e.stream_name', 'e.stream_revision::text', 'e.type', 'e.schema_version::text', 'e.data::text', 'e.metadata::text',
      '((extract(epoch from e.recorded_at) * 1000000)::bigint)::text', 'e.position::text', 'e.tx_id::text']
    const rows = await f.schema.db.raw<{ rows: Array<{ revision: string; stored: string; field_by_field: string; function: string }> }>(
      `select e.stream_revision::text as revision, encode(e.hash, 'hex') as stored,
              encode(sha256(coalesce(e.prev_hash, ''::bytea) || ${fields.map(field).join(' || ')}), 'hex') as field_by_field,
              encode("${s}".event_chain_hash(e.prev_hash, e.event_id, e.stream_name, e.stream_revision, e.type, e.schema_version, e.data, e.metadata, e.recorded_at, e.position, e.tx_id), 'hex') as function
         from ${f.t} e where e.stream_name = ? order by e.stream_revision`,
      [stream],
    )
    expect(rows.rows.map((r) => r.revision)).toEqual(['0', '1', '2', '3', '4'])
    for (const r of rows.rows) {
      expect(r.field_by_field).toBe(r.stored)
      expect(r.function).toBe(r.stored)
    }
    expect((await f.verify()).intact).toBe(true)
    const left = await f.schema.db.raw<{ rows: Array<{ n: number }> }>(`select count(*)::int as n from pg_proc where proname = 'chain_field' and pronamespace = ?::regnamespace`, [s])
    expect(left.rows).toEqual([{ n: 0 }])
  })

  it('keeps a log chained before 0008 intact across the upgrade: its streams go on chaining with the new function', async () => {
    const f = await fixture('upgrade0008')
    const s = f.schema.schema
    // Back to 0002's function and the state before 0008.
    await f.schema.db.raw(`create function "${s}".chain_field(v text) returns bytea language sql stable parallel safe strict as $fn$
      select int4send(octet_length(convert_to(v, 'UTF8'))) || convert_to(v, 'UTF8') $fn$`)
    await f.schema.db.raw(`create or replace function "${s}".event_chain_hash(
        p_prev bytea, p_event_id uuid, p_stream_name text, p_stream_revision bigint, p_type text, p_schema_version integer,
        p_data jsonb, p_metadata jsonb, p_recorded_at timestamptz, p_position bigint, p_tx_id xid8) returns bytea
      language sql stable parallel safe as $fn$ select sha256(coalesce(p_prev, ''::bytea)
        || "${s}".chain_field(p_event_id::text) || "${s}".chain_field(p_stream_name) || "${s}".chain_field(p_stream_revision::text)
        || "${s}".chain_field(p_type) || "${s}".chain_field(p_schema_version::text) || "${s}".chain_field(p_data::text)
        || "${s}".chain_field(p_metadata::text) || "${s}".chain_field(((extract(epoch from p_recorded_at) * 1000000)::bigint)::text)
        || "${s}".chain_field(p_position::text) || "${s}".chain_field(p_tx_id::text)) $fn$`)
    await f.schema.db.raw(`delete from "${s}".eventstore_migrations where name = '0008_chain_hash_in_one_array'`)
    const { a, b } = await seed(f)
    const migrated = await migrateEventStore({ db: f.schema.db, log }, { schema: s })()
    expect(E.isRight(migrated)).toBe(true)
    const body = await f.schema.db.raw<{ rows: Array<{ src: string }> }>(`select prosrc as src from pg_proc where proname = 'event_chain_hash' and pronamespace = ?::regnamespace`, [s])
    expect(body.rows[0]?.src).toContain('array_send')
    await append(f.store, a, [anEvent(7), anEvent(8)], 6n)
    await append(f.store, b, [anEvent(3)], 2n)
    const r = await f.verify()
    expect(r).toMatchObject({ intact: true, firstBreak: null, events: 16 })
  })

  it('fails clearly on a schema without the chain', async () => {
    const f = await fixture('nochain')
    const r = await verifyEventChain(f.schema.pool(1), 'no_such_schema')()
    expect(E.isLeft(r) && String(r.left.cause)).toMatch(/no hash chain .* run satang migrate/)
  })
})
