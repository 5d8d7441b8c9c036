import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import { ordersProjection } from '../../src/projections/orders/projection.ts'
import { startProjector } from '../../src/projections/projector.ts'
import { compareWithRebuild, rebuildProjection } from '../../src/projections/rebuild.ts'
import { freshProjectionDatabase, type ProjectionDatabase } from './support.ts'
import { otherStreamsForProjections } from './mixed-streams.ts'
import { appendEvent, interleave, orderEventsOf, orderPlanArb } from './scenarios.ts'

const log = silentLogger()

/**
 * Acceptance (issue 6): a rebuild runs while events keep arriving and the live projector keeps
 * applying them; readers of the tables see the old table or the new one (never a missing, empty or
 * half-built one), and afterwards the tables equal a fresh rebuild.
 */
describe('rebuild under load', () => {
  let db: ProjectionDatabase
  let pool: Pool
  let store: EventStore
  let schema: string

  beforeAll(async () => {
    db = await freshProjectionDatabase('rebuild', PROJECTIONS, 16)
    pool = db.pool
    store = db.store
    schema = db.schema
    const orders = fc.sample(orderPlanArb, { numRuns: 300, seed: 42 }).map((plan, i) => orderEventsOf(i + 1, plan))
    const streams = [...orders.map((o) => o.events.map((event) => ({ stream: o.stream, event }))), ...otherStreamsForProjections(orders)]
    for (const a of interleave(streams, fc.sample(fc.nat(), { numRuns: 300, seed: 3 }))) await appendEvent(store, a.stream, a.event)
  }, 120_000)

  afterAll(async () => {
    await db.drop()
  })

  it('readers see the old or the new tables while writes continue; the result equals a fresh rebuild', async () => {
    const projector = startProjector({ store, pool, log }, { schema, projections: PROJECTIONS, batchSize: 200 })
    let writing = true
    let readingDuringRebuild = 0
    let writtenDuringRebuild = 0
    let rebuilding = false
    const readErrors: unknown[] = []
    const counts: number[] = []
    const audits: number[] = []
    const unbalanced: string[] = []
    try {
      await projector.caughtUp(60_000)
      // Writers: new orders keep arriving through the whole rebuild.
      let next = 10_000
      const writer = (async () => {
        const plans = fc.sample(orderPlanArb, { numRuns: 2000, seed: 9 })
        while (writing) {
          const plan = plans[next % plans.length]
          if (plan === undefined) break
          const o = orderEventsOf(next++, plan)
          for (const e of o.events) await appendEvent(store, o.stream, e, randomUUID())
          if (rebuilding) writtenDuringRebuild += 1
        }
      })()
      // Readers: the tables are always there and whole: orders and audit rows only grow, and the ledger
      // always balances (a half-built ledger could not be caught balancing at every read).
      const reader = (async () => {
        while (writing) {
          try {
            const { rows } = await pool.query<{ n: number; audit: number; unbalanced: string | null }>(
              `select (select count(*)::int from "${schema}".orders) as n,
                      (select count(*)::int from "${schema}".audit_log) as audit,
                      (select (sum(debit_satang) - sum(credit_satang))::text from "${schema}".ledger_entries) as unbalanced`,
            )
            const row = rows[0]
            counts.push(row?.n ?? -1)
            audits.push(row?.audit ?? -1)
            if (row?.unbalanced !== null && row?.unbalanced !== '0') unbalanced.push(row?.unbalanced ?? 'no row')
            if (rebuilding) readingDuringRebuild += 1
          } catch (e) {
            readErrors.push(e)
          }
        }
      })()

      for (const projection of PROJECTIONS) {
        rebuilding = true
        const result = await rebuildProjection({ store, pool, log }, { schema, projection, batchSize: 500 })
        rebuilding = false
        expect(result.events).toBeGreaterThan(0)
      }
      await new Promise((r) => setTimeout(r, 300))
      writing = false
      await Promise.all([writer, reader])
      await projector.caughtUp(60_000)
    } finally {
      writing = false
      await projector.stop()
    }

    expect(readErrors).toEqual([])
    expect(readingDuringRebuild).toBeGreaterThan(10)
    expect(writtenDuringRebuild).toBeGreaterThan(0)
    expect(counts.length).toBeGreaterThan(10)
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1] ?? 0)
    for (let i = 1; i < audits.length; i++) expect(audits[i]).toBeGreaterThanOrEqual(audits[i - 1] ?? 0)
    expect(unbalanced).toEqual([])
    expect(counts[0]).toBeGreaterThan(0)

    for (const projection of PROJECTIONS) {
      const { differences } = await compareWithRebuild({ store, pool, log }, { schema, projection })
      for (const d of differences) expect({ projection: projection.name, ...d }).toEqual({ projection: projection.name, table: d.table, onlyLive: 0, onlyRebuilt: 0 })
    }
    // The live projector went on after the swaps: it applied the orders written after them.
    const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from "${schema}".orders`)
    expect(rows[0]?.n).toBeGreaterThan(300)
    expect(ordersProjection.tables).toContain('orders')
  }, 240_000)
})
