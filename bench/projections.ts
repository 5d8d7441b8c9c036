// Projection catch-up benchmark: a log of 100,000 events (orders with notifications, queries,
// redirects and discrepancies; refunds; subscriptions with charges), interleaved as live traffic would
// be, is written first; then the projector starts from nothing and applies it to every read model. Figures: events/s into all read
// models together (the issue's target), and the time to rebuild the largest projection from the log.
import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { Client } from 'pg'
import { makePostgresEventStore } from '../src/adapters/eventstore/postgres.ts'
import { makeKnex, makePostgresPool } from '../src/platform/postgres/pool.ts'
import { migrateEventStore } from '../src/adapters/postgres/migrations/eventstore.ts'
import { eventSourceOf, toEventToAppend, type DomainEvent } from '../src/domain/events/registry.ts'
import { PROJECTIONS } from '../src/projections/index.ts'
import { migrateReadModels } from '../src/projections/migrations.ts'
import { startProjector } from '../src/projections/projector.ts'
import { rebuildProjection } from '../src/projections/rebuild.ts'
import { otherStreamsForProjections } from '../test/projections/mixed-streams.ts'
import { orderEventsOf, orderPlanArb } from '../test/projections/scenarios.ts'
import type { BenchContext, BenchResult } from './types.ts'

const TARGET_EVENTS = 100_000
const WRITERS = 8

const round = (n: number, digits = 0): number => Number(n.toFixed(digits))

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const dbName = `satang_bench_proj_${randomUUID().replaceAll('-', '').slice(0, 10)}`
  const admin = new Client({ connectionString: ctx.databaseUrl })
  await admin.connect()
  await admin.query(`create database "${dbName}"`)
  const url = new URL(ctx.databaseUrl)
  url.pathname = `/${dbName}`
  const pool = makePostgresPool({ url: url.toString(), poolMax: 16 }, ctx.log)
  const store = makePostgresEventStore({ pool, log: ctx.log }, { schema: 'eventstore' })
  try {
    const knex = makeKnex(pool)
    const migrated = await migrateEventStore({ db: knex, log: ctx.log }, { schema: 'eventstore' })()
    await knex.destroy()
    if (E.isLeft(migrated)) throw new Error('event store migration failed')
    await migrateReadModels({ pool, log: ctx.log }, { schema: 'satang', projections: PROJECTIONS })

    // The log: whole streams per append, 8 writers.
    const streams: Array<{ stream: string; events: DomainEvent[] }> = []
    let total = 0
    const plans = fc.sample(orderPlanArb, { numRuns: 4000, seed: 1 })
    const orders = []
    for (let i = 0; total < TARGET_EVENTS * 0.93; i++) {
      const o = orderEventsOf(i + 1, plans[i % plans.length] ?? { amount: 10_000n, service: 'qr_promptpay', observations: [] })
      orders.push(o)
      streams.push({ stream: o.stream, events: [...o.events] })
      total += o.events.length
    }
    for (let round = 0; total < TARGET_EVENTS; round++) {
      for (const items of otherStreamsForProjections(orders.slice(round * 3000, round * 3000 + 3000), { subscriptions: 40, subscriptionPrefix: `${String(round)}-` })) {
        const first = items[0]
        if (first === undefined) continue
        streams.push({ stream: first.stream, events: items.map((x) => x.event) })
        total += items.length
      }
    }
    // Traffic as it comes: each writer keeps ~60 orders open at a time and appends one event of each in
    // turn, so the log interleaves ~500 streams and a batch of the projector touches as many rows as it
    // has events (the hard case for read models, where whole-stream appends would flatter them).
    process.stderr.write(`  projections: writing ${total.toLocaleString('en-US')} events of ${streams.length.toLocaleString('en-US')} streams, interleaved, one event per append…\n`)
    const WINDOW = 60
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        const mine = streams.filter((_, i) => i % WRITERS === w)
        for (let start = 0; start < mine.length; start += WINDOW) {
          const window = mine.slice(start, start + WINDOW)
          const longest = Math.max(...window.map((x) => x.events.length))
          for (let k = 0; k < longest; k++) {
            for (const x of window) {
              const e = x.events[k]
              if (e === undefined) continue
              const r = await store.append(x.stream, [toEventToAppend(e, randomUUID(), { correlationId: 'bench', causationId: 'bench', recordedAt: new Date().toISOString(), source: eventSourceOf(e) })], k === 0 ? 'no_stream' : BigInt(k - 1))()
              if (E.isLeft(r)) throw new Error(`append failed: ${r.left._tag}`)
            }
          }
        }
      }),
    )

    process.stderr.write('  projections: catching up every read model from nothing…\n')
    const started = performance.now()
    const spent = new Map<string, { ms: number; events: number; batches: number }>()
    const onApplied = (name: string, events: number, ms: number): void => {
      const x = spent.get(name) ?? { ms: 0, events: 0, batches: 0 }
      spent.set(name, { ms: x.ms + ms, events: x.events + events, batches: x.batches + 1 })
    }
    const projector = startProjector({ store, pool, log: ctx.log, onApplied }, { schema: 'satang', projections: PROJECTIONS, eventTable: '"eventstore".events' })
    try {
      await projector.caughtUp(600_000)
    } finally {
      await projector.stop()
    }
    const seconds = (performance.now() - started) / 1000
    for (const [name, x] of spent) process.stderr.write(`  projections: ${name}: ${String(x.batches)} batches, ${x.events.toLocaleString('en-US')} events, ${(x.ms / 1000).toFixed(2)} s in its transactions\n`)
    const { rows } = await pool.query<{ name: string; failure: string | null }>('select name, failure from satang.projection_checkpoints')
    const failed = rows.filter((r) => r.failure !== null)
    if (failed.length > 0) throw new Error(`projections failed: ${failed.map((r) => `${r.name}: ${r.failure ?? ''}`).join('; ')}`)

    const orderRebuild = await rebuildProjection({ store, pool, log: ctx.log }, { schema: 'satang', eventTable: '"eventstore".events', projection: PROJECTIONS[0] ?? (() => { throw new Error('no projections') })() })

    return [
      { name: `projection catch-up, ${PROJECTIONS.length} read models (${PROJECTIONS.map((p) => p.name).join(', ')}), ${total.toLocaleString('en-US')} events`, value: round(total / seconds), unit: 'events/s', target: { op: '>=', value: 20_000 } },
      { name: 'projection catch-up, wall time', value: round(seconds, 2), unit: 's' },
      { name: `rebuild of ${orderRebuild.projection} from the log (build + swap)`, value: round(orderRebuild.events / orderRebuild.seconds), unit: 'events/s' },
    ]
  } finally {
    await store.close()
    await pool.end()
    // let the pool's connections finish closing before the database goes
    await new Promise((r) => setTimeout(r, 300))
    await admin.query(`drop database if exists "${dbName}" with (force)`)
    await admin.end()
  }
}
