import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Client, Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore, Subscription } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../support/satang-with-sandbox.ts'

/**
 * Issue 24: the log's horizon is satang's own. Transactions holding a transaction id open elsewhere
 * on the same PostgreSQL server — in another database, and in satang's database under another
 * schema — for the whole test (at least 30 s) do not delay satang: payments created meanwhile reach the
 * orders read model (the projector inside satang up), a live subscriber (the relay reads through the
 * same subscribeToAll) and a plain readAll within 2 s each.
 */

let t: SatangWithSandbox
let sibling: { readonly url: string; readonly drop: () => Promise<void> }
let otherDb: Client
let otherSchema: Client
let pool: Pool
let store: EventStore
let subscription: Subscription
const heard = new Map<string, number>()
const foreignXids: string[] = []
/** When the foreign transactions were opened. */
let openedAt = 0
/** How long they stay open while payments are created: issue 24's 30 s. */
const HOLD_MS = 30_000

/** A transaction that wrote something and stays open: it holds its transaction id until the end of the test. */
const holdOpen = async (url: string, schema: string): Promise<Client> => {
  const c = new Client({ connectionString: url, application_name: 'horizon-test-foreign' })
  await c.connect()
  await c.query('begin')
  await c.query(`create schema "${schema}"`)
  await c.query(`create table "${schema}".batch (n int)`)
  await c.query(`insert into "${schema}".batch values (1)`)
  foreignXids.push((await c.query<{ x: string }>('select pg_current_xact_id()::text as x')).rows[0]?.x ?? '')
  return c
}

beforeAll(async () => {
  t = await startSatangWithSandbox('horizon')
  sibling = await freshDatabase('horizon_sibling')
  otherDb = await holdOpen(sibling.url, 'bi_load')
  otherSchema = await holdOpen(t.databaseUrl, `other_${randomUUID().replaceAll('-', '').slice(0, 8)}`)
  openedAt = performance.now()
  pool = new Pool({ connectionString: t.databaseUrl, max: 4 })
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
  const head = await store.headPosition()()
  if (E.isLeft(head)) throw new Error('headPosition')
  subscription = store.subscribeToAll(head.right === undefined ? {} : { from: head.right }, (item) => {
    if (E.isRight(item) && !heard.has(item.right.streamName)) heard.set(item.right.streamName, performance.now())
    return Promise.resolve()
  })
}, 120_000)

afterAll(async () => {
  await subscription.stop()
  await store.close()
  await pool.end()
  await otherDb.query('rollback').catch(() => undefined)
  await otherDb.end()
  await otherSchema.query('rollback').catch(() => undefined)
  await otherSchema.end()
  await sibling.drop()
  await t.stop()
})

const waitUntil = async (what: string, ok: () => Promise<boolean> | boolean, ms: number): Promise<number> => {
  const start = performance.now()
  while (!(await ok())) {
    if (performance.now() - start > ms) throw new Error(`${what}: not within ${String(ms)} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
  return performance.now() - start
}

describe('the horizon ignores transactions that are not satang appends', () => {
  it('payments created while other transactions of the cluster stay open for 30 s reach the read model, a live subscriber and readAll within 2 s', async () => {
    const from = await store.headPosition()()
    if (E.isLeft(from)) throw new Error('headPosition')
    // A payment every 3 s or so until the foreign transactions have been open 30 s, one more after.
    let rounds = 0
    for (let round = 0; round === 0 || performance.now() - openedAt < HOLD_MS + 3_000; round++) {
      rounds += 1
      const id = `HZ-${String(round)}-${randomUUID().slice(0, 8)}`
      const created = await t.api('POST', '/v1/checkouts', { merchant_order_id: id, order_amount: '80', order_currency: 'THB', order_desc: 'Noodles', customer: { merchant_user_id: 'u-1' } })
      expect(created.status).toBe(201)
      const acked = performance.now()
      await waitUntil(`order ${id} in the orders read model`, async () => (await pool.query('select 1 from satang.orders where merchant_order_id = $1', [id])).rowCount === 1, 2_000)
      const streamName = (await pool.query<{ stream_name: string }>('select stream_name from satang.orders where merchant_order_id = $1', [id])).rows[0]?.stream_name ?? ''
      await waitUntil(`order ${id} at the live subscriber`, () => heard.has(streamName), Math.max(0, 2_000 - (performance.now() - acked)))
      const read = await store.readAll(from.right === undefined ? {} : { from: from.right, maxCount: 100_000 })()
      expect(E.isRight(read) && read.right.some((i) => E.isRight(i) && i.right.streamName === streamName)).toBe(true)
      await new Promise((r) => setTimeout(r, 3_000))
    }
    expect(rounds).toBeGreaterThanOrEqual(5)
    expect(performance.now() - openedAt).toBeGreaterThanOrEqual(HOLD_MS)
    // The foreign transactions were open all along, and below the events: the cluster-wide horizon
    // (pg_snapshot_xmin) would have held every one of them back.
    const snapshot = (await pool.query<{ xmin: string; running: string[] }>('select pg_snapshot_xmin(s)::text as xmin, array(select x::text from pg_snapshot_xip(s) x) as running from pg_current_snapshot() s')).rows[0]
    for (const x of foreignXids) expect(snapshot?.running).toContain(x)
    const newest = (await pool.query<{ tx: string }>('select max(tx_id)::text as tx from eventstore.events')).rows[0]?.tx ?? '0'
    expect(BigInt(snapshot?.xmin ?? '0')).toBeLessThan(BigInt(newest))
  }, 120_000)
})
