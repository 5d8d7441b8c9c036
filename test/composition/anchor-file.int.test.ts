import { randomUUID } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { migrateEventStore } from '../../src/adapters/postgres/migrations/eventstore.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { makeAnchorWriter } from '../../src/composition/anchors.ts'
import { EVENT_STORE_SCHEMA, type Database } from '../../src/composition/database.ts'
import { decodeConfig, type Config } from '../../src/config.ts'
import { eventSourceOf, toEventToAppend } from '../../src/domain/events/registry.ts'
import { makeLogger, silentLogger } from '../../src/logger.ts'
import { makeKnex, makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import * as order from '../domain/order/builders.ts'

/**
 * SATANG_ANCHOR_FILE gets every anchor appended (one JSON line, 0600), never through a symbolic link:
 * a link at its name (or as its folder) stops the anchor writer at start naming the variable, the path
 * and the rule; one planted while it runs is refused at the next anchor (which stays in the database)
 * and logged with the path and the rule. The file a link points at is never touched. Real PostgreSQL.
 */

const PAST = new Date('2020-01-02T03:04:05.000Z')
const VICTIM_TEXT = 'victim\n'
const log = silentLogger()
const dir = mkdtempSync(join(tmpdir(), 'satang-anchor-file-'))
let database: { readonly url: string; readonly drop: () => Promise<void> }
let pool: Pool
let store: EventStore
let appended = 0

beforeAll(async () => {
  database = await freshDatabase('anchorfile')
  pool = makePostgresPool({ url: database.url }, log)
  const knex = makeKnex(pool)
  const migrated = await migrateEventStore({ db: knex, log }, { schema: EVENT_STORE_SCHEMA })()
  await knex.destroy()
  if (E.isLeft(migrated)) throw new Error('migrate')
  store = makePostgresEventStore({ pool, log }, { schema: EVENT_STORE_SCHEMA })
})
afterAll(async () => {
  await store.close()
  await pool.end()
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

/** One more event in the log, readable (an anchor covers only what is below every open transaction), so the next anchor is new. */
const oneMoreEvent = async (): Promise<void> => {
  const e = order.anAcceptedCheckout()[0]
  if (e === undefined) throw new Error('builder')
  const event = toEventToAppend(e, randomUUID(), { correlationId: 'c', causationId: 'c', recordedAt: new Date().toISOString(), source: eventSourceOf(e) })
  expect(E.isRight(await store.append(`order-140000000000000001-LINK-${randomUUID().slice(0, 8)}`, [event], 'any')())).toBe(true)
  appended += 1
  for (let i = 0; ; i++) {
    const readable = await store.readAll({ maxCount: 1000 })()
    if (E.isRight(readable) && readable.right.length === appended) return
    if (i > 600) throw new Error('the event did not become readable within 60 s')
    await new Promise((r) => setTimeout(r, 100))
  }
}

const configFor = (anchorFile: string): Config => {
  const decoded = decodeConfig({ SATANG_DATA_DIR: dir, SATANG_DATABASE_URL: database.url, SATANG_ANCHOR_FILE: anchorFile })
  if (E.isLeft(decoded)) throw new Error(JSON.stringify(decoded.left))
  return decoded.right
}
const db = (): Database => ({ pool, description: 'test', close: async () => undefined })
const victim = (): string => {
  const p = join(mkdtempSync(join(dir, 'victim-')), 'victim.txt')
  writeFileSync(p, VICTIM_TEXT)
  chmodSync(p, 0o644)
  utimesSync(p, PAST, PAST)
  return p
}
const expectUntouched = (p: string): void => {
  expect(readFileSync(p, 'utf8')).toBe(VICTIM_TEXT)
  expect(statSync(p).mtimeMs).toBe(PAST.getTime())
  expect(statSync(p).mode & 0o777).toBe(0o644)
}
/** A logger whose lines the test reads. */
const capturedLogger = () => {
  const sink = new PassThrough()
  let text = ''
  sink.on('data', (d: Buffer) => (text += d.toString('utf8')))
  return { logger: makeLogger({ level: 'error' }, sink), lines: () => text }
}

describe('SATANG_ANCHOR_FILE is appended to without following a symbolic link', () => {
  it('appends each anchor as one JSON line, to a file made 0600', async () => {
    const file = join(dir, 'anchors.jsonl')
    const writer = await makeAnchorWriter(configFor(file), db(), log)
    await oneMoreEvent()
    const written = await writer.write('first')()
    expect(E.isRight(written) && written.right !== null).toBe(true)
    expect(readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { reason: string }).reason)).toEqual(['first'])
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it('a link at its name, or as its folder, stops the writer at start, naming the variable, the path and the rule', async () => {
    const v = victim()
    const link = join(dir, 'linked.jsonl')
    symlinkSync(v, link)
    await expect(makeAnchorWriter(configFor(link), db(), log)).rejects.toThrow(`SATANG_ANCHOR_FILE: ${JSON.stringify(link)}: is a symbolic link`)
    const real = join(dir, 'real')
    mkdirSync(real)
    const linkedFolder = join(dir, 'linked-folder')
    symlinkSync(real, linkedFolder)
    await expect(makeAnchorWriter(configFor(join(linkedFolder, 'anchors.jsonl')), db(), log)).rejects.toThrow(`SATANG_ANCHOR_FILE: ${JSON.stringify(linkedFolder)}: is a symbolic link`)
    expectUntouched(v)
  })

  it('a link planted while it runs is refused at the next anchor (kept in the database), logged with the path and the rule; its target untouched', async () => {
    const file = join(dir, 'planted.jsonl')
    const captured = capturedLogger()
    const writer = await makeAnchorWriter(configFor(file), db(), captured.logger)
    await oneMoreEvent()
    expect(E.isRight(await writer.write('before')())).toBe(true)
    const v = victim()
    rmSync(file)
    symlinkSync(v, file)
    await oneMoreEvent()
    // The anchor is in the database all the same.
    const written = await writer.write('after')()
    expect(written).toMatchObject({ _tag: 'Right', right: { anchor: { reason: 'after' } } })
    expectUntouched(v)
    const logged = captured.lines()
    expect(logged).toContain('could not be appended to SATANG_ANCHOR_FILE')
    expect(logged).toContain(`${JSON.stringify(file).slice(1, -1)}`)
    expect(logged).toContain('is a symbolic link')
  })
})
