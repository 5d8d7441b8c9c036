import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { anchorJson, anchorKeyIdOf, writeAnchor } from '../../src/adapters/eventstore/anchors.ts'
import type { EventStore, EventToAppend } from '../../src/application/ports/event-store.ts'
import { eventSourceOf, toEventToAppend } from '../../src/domain/events/registry.ts'
import { EVENT_STORE_SCHEMA } from '../../src/main.ts'
import { freshEventStoreDatabase } from '../adapters/http/database.ts'
import * as order from '../domain/order/builders.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/**
 * `satang audit verify` against signed anchors: each of the five tamperings (done as the superuser,
 * triggers disabled, as only an owner or superuser could) is found, named and dated by the anchor that
 * covered it; an untouched log passes. Real PostgreSQL, the real CLI.
 */

const MERCHANT = '140000000000000001'
const events = `"${EVENT_STORE_SCHEMA}".events`
const cwd = mkdtempSync(join(tmpdir(), 'satang-anchors-'))
const keys = generateKeyPairSync('ed25519')
const keyFile = join(cwd, 'anchor-private.pem')
writeFileSync(keyFile, keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { mode: 0o600 })
const anchorKey = { privateKey: keys.privateKey, keyId: anchorKeyIdOf(keys.privateKey) }

const batch = (n: number): ReadonlyArray<EventToAppend> =>
  Array.from({ length: n }, (_, i) => {
    const e = order.anAcceptedCheckout()[i % 3]
    if (e === undefined) throw new Error('builder')
    return toEventToAppend(e, randomUUID(), { correlationId: 'c', causationId: 'c', recordedAt: new Date(Date.UTC(2026, 0, 1, 3, i)).toISOString(), source: eventSourceOf(e) })
  })

type Scenario = { readonly url: string; readonly pool: Pool; readonly store: EventStore; readonly streams: ReadonlyArray<string>; readonly drop: () => Promise<void> }
let current: Scenario | undefined

/** A fresh database with the event store migrated and nothing in it (dropped after the test). */
const emptyLog = async (streams: ReadonlyArray<string> = []): Promise<Scenario> => {
  current = { ...(await freshEventStoreDatabase('anchors')), streams }
  return current
}

/**
 * An anchor covers what is readable: events below every transaction still open on the server (other
 * tests' too). Waits until all `n` events of the log are, so that the next anchor covers them all.
 */
const untilReadable = async (store: EventStore, n: number): Promise<void> => {
  for (let i = 0; ; i++) {
    const readable = await store.readAll({ maxCount: 1000 })()
    if (E.isRight(readable) && readable.right.length === n) return
    if (i > 600) throw new Error(`${String(n)} events did not become readable within 60 s`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** A fresh log of 3 streams of 4 events, anchored, then one more stream (after the anchor). */
const anchoredLog = async (): Promise<Scenario> => {
  const s = await emptyLog(['A', 'B', 'C'].map((name) => `order-${MERCHANT}-${name}-${randomUUID().slice(0, 6)}`))
  for (const stream of s.streams) for (const e of batch(4)) expect(E.isRight(await s.store.append(stream, [e], 'any')())).toBe(true)
  await untilReadable(s.store, 12)
  const anchored = await writeAnchor(s.pool, EVENT_STORE_SCHEMA, anchorKey, 'test')()
  if (E.isLeft(anchored) || anchored.right === null) throw new Error('anchor')
  expect(anchored.right.events).toBe(12n)
  writeFileSync(join(cwd, `anchors-${new URL(s.url).pathname.slice(1)}.jsonl`), `${JSON.stringify(anchorJson(anchored.right.anchor))}\n`)
  expect(E.isRight(await s.store.append(`order-${MERCHANT}-LATE`, batch(1), 'any')())).toBe(true)
  return s
}

afterEach(async () => {
  await current?.drop()
  current = undefined
})

const verify = (s: Scenario, ...args: string[]) =>
  runCli(['audit', 'verify', ...args], { env: envWithoutSatangSettings({ SATANG_DATABASE_URL: s.url, SATANG_ANCHOR_KEY_FILE: keyFile, SATANG_LOG_LEVEL: 'warn' }), cwd })

/** Runs `sql` as the superuser with the append-only triggers off, as a tamperer would. */
const tamper = async (s: Scenario, ...sql: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]>): Promise<void> => {
  const c = await s.pool.connect()
  try {
    await c.query('begin')
    await c.query(`alter table ${events} disable trigger user`)
    for (const [text, values] of sql) await c.query(text, [...values])
    await c.query(`alter table ${events} enable trigger user`)
    await c.query('commit')
  } finally {
    c.release()
  }
}

type Broken = { intact: boolean; first_break: { kind: string; stream: string; revision: string; since_anchor: string | null } | null; anchors: { problems: string[] } }
const brokenJson = async (s: Scenario): Promise<Broken> => {
  const r = await verify(s, '--json')
  expect(r.code).toBe(1)
  return JSON.parse(r.stdout) as Broken
}

describe('satang audit verify with anchors', () => {
  it('passes on an untouched log: the anchor verifies and the log matches it', async () => {
    const s = await anchoredLog()
    const r = await verify(s)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^event log intact: 13 events in 4 streams checked/)
    expect(r.stdout).toMatch(/anchors: 1 checked with the key .*anchor-private\.pem; the log matches anchor #1 \(.*, test\) at position \d{20}-\d{20}/)
    const file = join(cwd, `anchors-${new URL(s.url).pathname.slice(1)}.jsonl`)
    expect((await verify(s, '--anchor-file', file)).code).toBe(0)
  })

  it('a changed event: hash mismatch at its stream and revision, covered since anchor #1', async () => {
    const s = await anchoredLog()
    const stream = s.streams[1] ?? ''
    await tamper(s, [`update ${events} set data = data || '{"amount": "1"}' where stream_name = $1 and stream_revision = 2`, [stream]])
    const r = await verify(s)
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(new RegExp(`^event log BROKEN: stream ${stream} revision 2 \\(position \\d{20}-\\d{20}, event [0-9a-f-]{36}\\): hash mismatch: .*; this was anchored by anchor #1 \\(.*, test\\), so it was altered after that anchor was written`))
    expect((await brokenJson(s)).first_break).toMatchObject({ kind: 'hash_mismatch', stream, revision: '2', since_anchor: '1' })
  })

  it('a deleted event in the middle: the missing revision is named', async () => {
    const s = await anchoredLog()
    const stream = s.streams[0] ?? ''
    await tamper(s, [`delete from ${events} where stream_name = $1 and stream_revision = 1`, [stream]])
    const r = await verify(s)
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(new RegExp(`^event log BROKEN: stream ${stream} revision 2 .*: revision 1 of the stream is missing \\(deleted\\); this was anchored by anchor #1`))
    expect((await brokenJson(s)).first_break).toMatchObject({ kind: 'missing_revision', stream, since_anchor: '1' })
  })

  it('a deleted tail: the anchored head is missing, which the chain alone cannot show', async () => {
    const s = await anchoredLog()
    const stream = s.streams[2] ?? ''
    await tamper(s, [`delete from ${events} where stream_name = $1 and stream_revision >= 2`, [stream]])
    const r = await verify(s)
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`event log BROKEN: stream ${stream}: revisions 2 to 3 missing: the kept head is revision 3 but the stream ends at revision 1 (its last events were deleted); this was anchored by anchor #1`)
    expect((await brokenJson(s)).first_break).toMatchObject({ kind: 'head_missing', stream, revision: '3', since_anchor: '1' })
  })

  it('a deleted whole stream: named, with the anchor that recorded it', async () => {
    const s = await anchoredLog()
    const stream = s.streams[1] ?? ''
    await tamper(s, [`delete from ${events} where stream_name = $1`, [stream]])
    const r = await verify(s)
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`event log BROKEN: stream ${stream}: the whole stream is missing; the kept head is its revision 3 (the stream was deleted); this was anchored by anchor #1`)
    expect((await brokenJson(s)).first_break).toMatchObject({ kind: 'head_missing', stream, since_anchor: '1' })
  })

  it('a reordered pair: the swapped events no longer link', async () => {
    const s = await anchoredLog()
    const stream = s.streams[0] ?? ''
    await tamper(
      s,
      [`update ${events} set stream_revision = 1000 where stream_name = $1 and stream_revision = 1`, [stream]],
      [`update ${events} set stream_revision = 1 where stream_name = $1 and stream_revision = 2`, [stream]],
      [`update ${events} set stream_revision = 2 where stream_name = $1 and stream_revision = 1000`, [stream]],
    )
    const r = await verify(s)
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(new RegExp(`^event log BROKEN: stream ${stream} revision 1 .*; this was anchored by anchor #1`))
    const json = await brokenJson(s)
    expect(['link_mismatch', 'hash_mismatch']).toContain(json.first_break?.kind)
    expect(json.first_break).toMatchObject({ stream, revision: '1', since_anchor: '1' })
  })

  it('counts past nine: a batch of 12 in one transaction, a stream of 26 events, 12 anchors — each covers the head, all verify', async () => {
    const s = await emptyLog()
    const { pool, store } = s
    const head = async (): Promise<string> => {
      const r = await pool.query<{ tx_id: string; position: string }>(`select e.tx_id::text, e.position::text from ${events} e order by e.tx_id desc, e.position desc limit 1`)
      const row = r.rows[0]
      return `${(row?.tx_id ?? '').padStart(20, '0')}-${(row?.position ?? '').padStart(20, '0')}`
    }
    // Positions 1 to 12 in one transaction: the head is position 12, which sorts before 9 as text.
    expect(E.isRight(await store.append(`order-${MERCHANT}-BATCH`, batch(12), 'any')())).toBe(true)
    await untilReadable(store, 12)
    const first = await writeAnchor(pool, EVENT_STORE_SCHEMA, anchorKey, 'batch')()
    expect(E.isRight(first) && first.right?.anchor).toMatchObject({ seq: 1n, events: 12n, streams: 1n, position: await head() })
    // A stream that grows by 15 between two anchors (revisions 0 to 14, then 15 to 25), and anchors 3 to 12 one event apart.
    const long = `order-${MERCHANT}-LONG`
    for (const e of batch(15)) expect(E.isRight(await store.append(long, [e], 'any')())).toBe(true)
    await untilReadable(store, 27)
    const second = await writeAnchor(pool, EVENT_STORE_SCHEMA, anchorKey, 'long')()
    expect(E.isRight(second) && second.right?.anchor).toMatchObject({ seq: 2n, events: 27n, streams: 2n, position: await head() })
    for (let n = 3; n <= 12; n++) {
      expect(E.isRight(await store.append(long, batch(1), 'any')())).toBe(true)
      await untilReadable(store, 25 + n)
      const next = await writeAnchor(pool, EVENT_STORE_SCHEMA, anchorKey, `step ${String(n)}`)()
      expect(E.isRight(next) && next.right?.anchor).toMatchObject({ seq: BigInt(n), events: BigInt(25 + n), position: await head() })
    }
    const r = await verify(s, '--json')
    expect(r.stderr).toBe('')
    const json = JSON.parse(r.stdout) as { intact: boolean; anchors: { count: number; problems: string[]; reference: { seq: string } } }
    expect(json.anchors.problems).toEqual([])
    expect(json).toMatchObject({ intact: true, anchors: { count: 12, reference: { seq: '12' } } })
    expect(r.code).toBe(0)
  })

  it('a rewritten anchor or a deleted one is reported as such (the anchor file keeps the evidence)', async () => {
    const s = await anchoredLog()
    const c = await s.pool.connect()
    try {
      await c.query(`alter table "${EVENT_STORE_SCHEMA}".anchors disable trigger user`)
      await c.query(`update "${EVENT_STORE_SCHEMA}".anchors set events = events + 1`)
    } finally {
      c.release()
    }
    const r = await verify(s)
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('anchors BROKEN: anchor #1 (')
    expect(r.stdout).toContain('its signature does not verify: its fields were altered')
    const file = join(cwd, `anchors-${new URL(s.url).pathname.slice(1)}.jsonl`)
    expect(readFileSync(file, 'utf8')).toContain('"seq":"1"')
    const withFile = await verify(s, '--anchor-file', file)
    expect(withFile.stdout).toContain(`anchors BROKEN: anchor #1 differs between the database and ${file}: it was replaced`)
  })
})
