import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditTrail } from '../../src/application/audit.ts'
import type { EventStore, EventToAppend } from '../../src/application/ports/event-store.ts'
import { decodeDomainEvent, eventSourceOf, toEventToAppend } from '../../src/domain/events/registry.ts'
import { EVENT_STORE_SCHEMA, READ_MODEL_SCHEMA } from '../../src/main.ts'
import { auditLogProjection } from '../../src/projections/audit-log/projection.ts'
import { projectedEventOf } from '../../src/projections/types.ts'
import { freshEventStoreDatabase, type EventStoreDatabase } from '../adapters/http/database.ts'
import * as order from '../domain/order/builders.ts'
import { applyInTransaction, createProjectionTables } from '../projections/support.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/** `satang audit verify` and `satang audit <id>`, run as real processes against a fresh database. */

const MERCHANT = '140000000000000001'
let database: EventStoreDatabase
let pool: Pool
let store: EventStore
const cwd = mkdtempSync(join(tmpdir(), 'satang-audit-'))
const satang = (...args: string[]) => runCli(args, { env: envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url }), cwd })
const events = `"${EVENT_STORE_SCHEMA}".events`

const domainEvents = (): ReadonlyArray<EventToAppend> =>
  order.anAcceptedCheckout().map((e, i) =>
    toEventToAppend(e, randomUUID(), { correlationId: 'c', causationId: 'c', recordedAt: new Date(Date.UTC(2026, 0, 1, 3, i)).toISOString(), source: eventSourceOf(e) }),
  )

const append = async (stream: string, batch: ReadonlyArray<EventToAppend>): Promise<void> => {
  const r = await store.append(stream, batch, 'any')()
  if (E.isLeft(r)) throw new Error(`append: ${r.left._tag}`)
}

beforeAll(async () => {
  database = await freshEventStoreDatabase('auditverify')
  pool = database.pool
  store = database.store
  await append(`order-${MERCHANT}-ORD-1`, domainEvents())
  await append(`order-${MERCHANT}-verify`, domainEvents().slice(0, 1))
  for (let i = 0; i < 5; i++) await append(`refund-${MERCHANT}-R-${String(i)}`, [{ ...(domainEvents()[0] as EventToAppend), eventId: randomUUID() }])
})

afterAll(async () => {
  await database.drop()
})

describe('satang audit verify: usage', () => {
  it('--help explains the checks, the kept-heads caveat and the exit codes', async () => {
    const r = await satang('audit', 'verify', '--help')
    expect(r.code).toBe(0)
    for (const option of ['--json', '--save-heads', '--against', '--expect-digest', '--quiet']) expect(r.stdout).toContain(option)
    expect(r.stdout).toMatch(/Anchors \(written by the scheduler/)
    expect(r.stdout).toContain('--anchor-file')
    expect(r.stdout).toMatch(/Exit codes: 0 intact, 1 broken/)
    const parent = await satang('audit', '--help')
    expect(parent.code).toBe(0)
    expect(parent.stdout).toMatch(/^\s+verify\b/m)
  })

  it('exit 2 on bad usage', async () => {
    expect((await satang('audit', 'verify', '--bogus')).code).toBe(2)
    const digest = await satang('audit', 'verify', '--expect-digest', 'abc')
    expect(digest.code).toBe(2)
    expect(digest.stderr).toContain('--expect-digest must be the 64 hex digits')
    const missing = await satang('audit', 'verify', '--against', join(cwd, 'nope.json'))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('no such file')
    const junk = join(cwd, 'junk.json')
    writeFileSync(junk, '{"format":"other"}')
    expect((await satang('audit', 'verify', '--against', junk)).stderr).toContain('is not a stream heads file')
  })
})

describe('satang audit <id> still works beside verify', () => {
  it('prints the trail of an order by its id, served from the read model and completed from the store', async () => {
    const stream = `order-${MERCHANT}-ORD-1`
    // The read model holds only the first event: the rest comes from the store.
    const first = await store.readStream(stream, { maxCount: 1 })()
    if (E.isLeft(first)) throw new Error('read')
    const projected = first.right.map((i) => {
      if (E.isLeft(i)) throw new Error('undecodable')
      const d = decodeDomainEvent(i.right.type, i.right.schemaVersion, i.right.data)
      if (E.isLeft(d)) throw new Error('decode')
      return projectedEventOf(i.right, d.right)
    })
    await createProjectionTables(pool, READ_MODEL_SCHEMA, auditLogProjection)
    await applyInTransaction(pool, READ_MODEL_SCHEMA, auditLogProjection, projected)
    const r = await satang('audit', 'ORD-1', '--json')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const expected = await auditTrail(store, stream)()
    if (E.isLeft(expected)) throw new Error('trail')
    // No callback naming ORD-1 was quarantined: the list beside the trail is empty.
    expect(JSON.parse(r.stdout)).toEqual({ ...JSON.parse(JSON.stringify(expected.right)), quarantined: [] })
    const human = await satang('audit', 'ORD-1')
    expect(human.stdout).toMatch(/^stream order-140000000000000001-ORD-1 \(3 events\)\n#0 .*OrderCreated v1/)
  })

  it('an order named "verify" is reached with --kind or its stream name; "help" is an order id too', async () => {
    const byKind = await satang('audit', '--kind', 'order', 'verify', '--json')
    expect(byKind.code).toBe(0)
    expect(JSON.parse(byKind.stdout)).toMatchObject({ stream: `order-${MERCHANT}-verify` })
    const byStream = await satang('audit', `order-${MERCHANT}-verify`)
    expect(byStream.code).toBe(0)
    const help = await satang('audit', 'help')
    expect(help.code).toBe(1)
    expect(help.stderr).toContain(`no events in stream order-${MERCHANT}-help`)
  })
})

describe('satang audit verify', () => {
  let digest = ''
  const headsFile = join(cwd, 'heads.json')

  it('exit 0 on an intact log, with counts and the stream heads digest', async () => {
    const r = await satang('audit', 'verify')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^event log intact: 9 events in 7 streams checked in \d+\.\d s\nanchors: none yet, .*\nstream heads digest: [0-9a-f]{64}\n$/)
    const json = await satang('audit', 'verify', '--json')
    expect(json.code).toBe(0)
    const parsed = JSON.parse(json.stdout) as { heads_digest: string }
    expect(parsed).toMatchObject({ intact: true, streams: 7, events: 9, first_break: null })
    digest = parsed.heads_digest
    expect(r.stdout).toContain(digest)
  })

  it('keeps the heads in a file and checks them later; checks a kept digest', async () => {
    const saved = await satang('audit', 'verify', '--save-heads', headsFile)
    expect(saved.code).toBe(0)
    expect(saved.stdout).toContain(`stream heads written to ${headsFile}`)
    const file = JSON.parse(readFileSync(headsFile, 'utf8')) as { format: string; headsDigest: string; heads: unknown[] }
    expect(file).toMatchObject({ format: 'satang-stream-heads-v1', headsDigest: digest })
    expect(file.heads).toHaveLength(7)
    expect((await satang('audit', 'verify', '--against', headsFile)).stdout).toContain('7 kept heads matched')
    expect((await satang('audit', 'verify', '--expect-digest', digest)).code).toBe(0)
    // One more event: still intact, the heads still match, the digest no longer does.
    await append(`refund-${MERCHANT}-R-0`, [{ ...(domainEvents()[1] as EventToAppend) }])
    expect((await satang('audit', 'verify', '--against', headsFile)).code).toBe(0)
    const differs = await satang('audit', 'verify', '--expect-digest', digest)
    expect(differs.code).toBe(1)
    expect(differs.stdout).toMatch(/^event log DIFFERS from the kept digest/)
  })

  it('exit 1 with one line naming stream, revision, position and event when an event was altered behind satang’s back', async () => {
    const stream = `order-${MERCHANT}-ORD-1`
    const read = await store.readStream(stream)()
    if (E.isLeft(read)) throw new Error('read')
    const target = read.right[1]
    if (target === undefined || E.isLeft(target)) throw new Error('seed')
    const c = await pool.connect()
    try {
      await c.query('begin')
      await c.query(`alter table ${events} disable trigger user`)
      await c.query(`update ${events} set data = data || '{"amount": "1"}' where event_id = $1`, [target.right.eventId])
      await c.query(`alter table ${events} enable trigger user`)
      await c.query('commit')
    } finally {
      c.release()
    }
    const r = await satang('audit', 'verify')
    expect(r.code).toBe(1)
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    expect(r.stdout).toBe(
      `event log BROKEN: stream ${stream} revision 1 (position ${target.right.position}, event ${target.right.eventId}): hash mismatch: the event's stored columns (data, metadata, type, times or ids) no longer give the hash it was appended with: its content was altered (not yet covered by an anchor)\n`,
    )
    const json = await satang('audit', 'verify', '--json')
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({
      intact: false,
      heads_digest: null,
      first_break: { kind: 'hash_mismatch', stream, revision: '1', position: target.right.position, event_id: target.right.eventId },
    })
  })

  it('the database refuses to change an event at all', async () => {
    await expect(pool.query(`delete from ${events}`)).rejects.toThrow(`satang event log is append-only: DELETE refused on ${EVENT_STORE_SCHEMA}.events`)
  })
})
