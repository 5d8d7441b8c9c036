import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { makePostgresStreamLocks } from '../../src/adapters/postgres/job-lock.ts'
import { makeRecording } from '../../src/application/index.ts'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { silentLogger } from '../../src/logger.ts'
import { envelope, startFakeGateway, type FakeGatewayServer } from '../support/fake-gateway-server.ts'
import { freshEventStoreSchema, type TestSchema } from '../support/postgres.ts'
import { makeFakeGateway, testDeps, timedOut } from './support.ts'
import { makeMemoryEventStore } from './memory-event-store.ts'

/*
 * Many processes, one truth: whether an order's unknown create outcome is resolved (one payment query
 * to the gateway, one recorded observation) is decided by a PostgreSQL advisory lock per stream, not by
 * the memory of one process. Two real OS processes on one database race to resolve the same orders,
 * several attempts each at the same moment; the gateway answers slowly, so every attempt overlaps.
 */

const CHILD = fileURLToPath(new URL('./resolution-process.ts', import.meta.url))
const MERCHANT_ID = '140000000000000001'

let es: TestSchema
let pool: Pool
let store: EventStore
let gateway: FakeGatewayServer

const orderIdOf = (body: string, query: Readonly<Record<string, string>>): string => {
  if (query['merchant_order_id'] !== undefined) return query['merchant_order_id']
  const parsed: unknown = JSON.parse(body === '' ? '{}' : body)
  return typeof parsed === 'object' && parsed !== null && 'merchant_order_id' in parsed && typeof parsed.merchant_order_id === 'string' ? parsed.merchant_order_id : '?'
}

beforeAll(async () => {
  es = await freshEventStoreSchema('resolve')
  pool = es.pool(4)
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: es.schema })
  gateway = await startFakeGateway()
  // Every query answers "paid", after 1.5 s: long enough for every attempt of both processes to overlap.
  gateway.respond((req) => {
    const id = orderIdOf(req.body, req.query)
    const data = { merchant_id: MERCHANT_ID, merchant_order_id: id, order_id: '261121000000000001', order_status: 'PS', order_amount: '1250.50', order_currency: 'THB', order_desc: 'Bicycle helmet', create_time: '2026-11-21 10:00:00' }
    return { kind: 'json', body: envelope({ data, traceId: `trace-${id}` }), delayMs: 1_500 }
  })
})

afterAll(async () => {
  await gateway.close()
  await store.close()
  await es.drop()
})

/** Orders whose create timed out: OrderCreated, PaymentRequested, PaymentOutcomeUnknown in the real log. */
const seedUnknownOutcomes = async (ids: ReadonlyArray<string>): Promise<void> => {
  const fake = makeFakeGateway()
  fake.answer('applyCheckout', timedOut())
  // `stopping` aborted: this process records the unknown outcomes and resolves nothing itself.
  const seeding = makeRecording(testDeps(makeMemoryEventStore(), fake, { store, stopping: AbortSignal.abort() }))
  for (const id of ids) {
    const r = await seeding.payments.create('checkout', { merchant_order_id: id, order_amount: '1250.5', order_currency: 'THB', order_desc: 'Bicycle helmet', customer: { merchant_user_id: 'u-7' } }, { correlationId: id, causationId: id })
    expect(r).toMatchObject({ _tag: 'Ok', status: 'accepted' })
  }
}

type Child = { readonly proc: ChildProcessWithoutNullStreams; readonly out: () => string; readonly stdout: () => string; readonly exited: Promise<number | null> }

const startChild = (streams: ReadonlyArray<string>, locks: 'postgres' | 'none'): Child => {
  const proc = spawn(process.execPath, [CHILD], {
    env: { ...process.env, RESOLVE_DATABASE_URL: es.url, RESOLVE_SCHEMA: es.schema, RESOLVE_GATEWAY: gateway.baseUrl, RESOLVE_STREAMS: streams.join(','), RESOLVE_TRIES: '3', RESOLVE_LOCKS: locks },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
  return { proc, out: () => `${out}\nstderr: ${err}`, stdout: () => out, exited }
}

const waitReady = async (c: Child): Promise<void> => {
  for (let i = 0; i < 600 && !c.stdout().includes('ready'); i++) await new Promise((r) => setTimeout(r, 50))
  if (!c.stdout().includes('ready')) throw new Error(`the resolving process did not start: ${c.out()}`)
}

/** Two processes, each trying every stream three times at once; the steps each process saw. */
const race = async (streams: ReadonlyArray<string>, locks: 'postgres' | 'none'): Promise<ReadonlyArray<ReadonlyArray<string>>> => {
  const children = [startChild(streams, locks), startChild(streams, locks)]
  await Promise.all(children.map(waitReady))
  for (const c of children) c.proc.stdin.write('go\n')
  const codes = await Promise.all(children.map((c) => c.exited))
  expect(codes, children.map((c) => c.out()).join('\n')).toEqual([0, 0])
  return children.map((c) => JSON.parse(c.stdout().trim().split('\n').at(-1) ?? '[]') as ReadonlyArray<string>)
}

const queriesFor = (id: string): number => gateway.requests.filter((r) => orderIdOf(r.body, r.query) === id).length

const typesOf = async (id: string): Promise<ReadonlyArray<string>> => {
  const r = await store.readStream(`order-${MERCHANT_ID}-${id}`)()
  if (E.isLeft(r)) throw new Error(`cannot read ${id}`)
  return r.right.flatMap((item) => (E.isRight(item) ? [item.right.type] : ['undecodable']))
}

describe('resolving unknown create outcomes from two OS processes on one database', () => {
  it('for each order exactly one gateway query and one StatusObserved, however many attempts race in both processes', async () => {
    const ids = ['RACE-1', 'RACE-2', 'RACE-3']
    await seedUnknownOutcomes(ids)
    const steps = await race(
      ids.map((id) => `order-${MERCHANT_ID}-${id}`),
      'postgres',
    )
    const all = steps.flat()
    // 2 processes × 3 orders × 3 attempts: one acted per order, every other was told someone else was acting
    // (or, having come after, found it resolved without asking).
    expect(all).toHaveLength(18)
    expect(all.filter((s) => s.startsWith('Pending: the create is in flight, or being resolved')).length).toBeGreaterThanOrEqual(12)
    for (const id of ids) {
      expect(queriesFor(id), `gateway queries for ${id}`).toBe(1)
      expect(await typesOf(id)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown', 'StatusObserved'])
    }
  })

  it('control: the same race without the database lock sends more than one query per order (what the lock prevents)', async () => {
    const ids = ['FREE-1', 'FREE-2']
    await seedUnknownOutcomes(ids)
    await race(
      ids.map((id) => `order-${MERCHANT_ID}-${id}`),
      'none',
    )
    for (const id of ids) expect(queriesFor(id), `gateway queries for ${id} without the lock`).toBeGreaterThan(1)
  })

  it('a lock held by a process that dies (SIGKILL) is free at once for the other', async () => {
    const locks = makePostgresStreamLocks({ pool, log: silentLogger() })
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import pg from 'pg'; const c = new pg.Client({ connectionString: ${JSON.stringify(es.url)} }); await c.connect();
         await c.query("select pg_advisory_lock(1515847685, hashtext('order-x-DIES'))"); process.stdout.write('held\\n'); setInterval(() => {}, 1000)`,
      ],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    holder.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    try {
      for (let i = 0; i < 200 && !out.includes('held'); i++) await new Promise((r) => setTimeout(r, 50))
      expect(out).toContain('held')
      const taken = await locks.tryLock('order-x-DIES')()
      expect(taken).toEqual(E.right(null))
      holder.kill('SIGKILL')
      await new Promise((r) => holder.once('exit', r))
      let lease = await locks.tryLock('order-x-DIES')()
      for (let i = 0; i < 50 && E.isRight(lease) && lease.right === null; i++) {
        await new Promise((r) => setTimeout(r, 100))
        lease = await locks.tryLock('order-x-DIES')()
      }
      expect(E.isRight(lease) && lease.right !== null).toBe(true)
      if (E.isRight(lease)) await lease.right?.release()
    } finally {
      holder.kill('SIGKILL')
      await locks.close()
    }
  })
})
