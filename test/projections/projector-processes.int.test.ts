import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { migrateReadModels } from '../../src/projections/migrations.ts'
import { ordersProjection } from '../../src/projections/orders/projection.ts'
import { compareWithRebuild } from '../../src/projections/rebuild.ts'
import { freshEventStoreSchema, testDatabaseUrl, uniqueSchemaName, type TestSchema } from '../support/postgres.ts'
import { appendEvent, interleave, orderEventsOf, orderPlanArb } from './scenarios.ts'

/*
 * Two projector processes (real OS processes, each with its own pool) on one database while events
 * keep arriving: the checkpoint row, locked in the transaction that applies a batch and moves it, lets
 * one of them apply each event exactly once. `events_seen` counts the events applied per order, so an
 * event applied twice would show. (test/projections/orders.int.test.ts shows it with two projectors in
 * one process.)
 */

const CHILD = fileURLToPath(new URL('./projector-process.ts', import.meta.url))
const log = silentLogger()

let es: TestSchema
let pool: Pool
let store: EventStore
let schema: string
const children: ChildProcessWithoutNullStreams[] = []

beforeAll(async () => {
  es = await freshEventStoreSchema('projproc')
  pool = es.pool(4)
  store = makePostgresEventStore({ pool, log }, { schema: es.schema })
  schema = uniqueSchemaName('rm')
  await migrateReadModels({ pool, log }, { schema, projections: [ordersProjection] })
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await store.close()
  await pool.query(`drop schema if exists "${schema}" cascade`)
  await es.drop()
})

const startChild = async (batch: number): Promise<ChildProcessWithoutNullStreams> => {
  const c = spawn(process.execPath, [CHILD], {
    env: { ...process.env, PROJ_DATABASE_URL: testDatabaseUrl(), PROJ_EVENT_SCHEMA: es.schema, PROJ_SCHEMA: schema, PROJ_BATCH: String(batch) },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  c.stderr.pipe(process.stderr)
  children.push(c)
  let out = ''
  c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  for (let i = 0; i < 600 && !out.includes('started'); i++) await sleep(50)
  if (!out.includes('started')) throw new Error('a projector process did not start')
  return c
}

describe('two projector processes on one database', () => {
  it('never apply an event twice: every order counts each of its events once, and the table equals a rebuild', async () => {
    const one = await startChild(5)
    const two = await startChild(7)
    const orders = fc.sample(orderPlanArb, { numRuns: 60, seed: 17 }).map((plan, i) => orderEventsOf(990_000 + i, plan))
    const appended = interleave(
      orders.map((o) => o.events.map((event) => ({ stream: o.stream, event }))),
      [2, 7, 1, 8, 2, 8],
    )
    for (const a of appended) await appendEvent(store, a.stream, a.event)
    const total = appended.length
    const seen = async (): Promise<number> => Number((await pool.query<{ n: string }>(`select coalesce(sum(events_seen), 0)::text as n from "${schema}".orders`)).rows[0]?.n ?? '0')
    const deadline = Date.now() + 60_000
    while ((await seen()) < total && Date.now() < deadline) await sleep(100)
    // Both had the chance to apply what the other applied.
    await sleep(500)
    for (const c of [one, two]) c.stdin.write('stop\n')
    await Promise.all([one, two].map((c) => new Promise((r) => c.once('exit', r))))

    expect(await seen()).toBe(total)
    for (const o of orders) {
      const { rows } = await pool.query<{ events_seen: number }>(`select events_seen from "${schema}".orders where stream_name = $1`, [o.stream])
      expect(rows, o.stream).toEqual([{ events_seen: o.events.length }])
    }
    const { differences } = await compareWithRebuild({ store, pool, log }, { schema, projection: ordersProjection })
    expect(differences).toEqual([{ table: 'orders', onlyLive: 0, onlyRebuilt: 0 }])
    // The checkpoint counted every event once.
    const { rows } = await pool.query<{ events_applied: string }>(`select events_applied::text from "${schema}".projection_checkpoints where name = 'orders'`)
    expect(Number(rows[0]?.events_applied)).toBe(total)
  })
})
