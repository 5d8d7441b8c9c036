import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { viewAsOf } from '../../src/application/as-of.ts'
import type { Position } from '../../src/application/ports/event-store.ts'
import { isJsonObject } from '../../src/domain/events/json.ts'
import { silentLogger } from '../../src/logger.ts'
import { positionAt, withReadModelsAsOf } from '../../src/projections/as-of.ts'
import { auditLogProjection } from '../../src/projections/audit-log/projection.ts'
import { readTrialBalanceAsOf } from '../../src/projections/ledger/as-of.ts'
import { ledgerProjection } from '../../src/projections/ledger/projection.ts'
import { readTrialBalance } from '../../src/projections/ledger/reads.ts'
import { ordersProjection } from '../../src/projections/orders/projection.ts'
import { decodeBatchItem, startProjector } from '../../src/projections/projector.ts'
import { refundsProjection } from '../../src/projections/refunds/projection.ts'
import { otherStreamsForProjections } from './mixed-streams.ts'
import { appendEvent, interleave, orderEventsOf, orderPlanArb } from './scenarios.ts'
import { applyInTransaction, freshProjectionDatabase } from './support.ts'
import { hearPgQueuedQueries } from '../support/pg-queued-query.ts'

/**
 * "As of" (issue 15): the trial balance and any order's state as of a global position equal what a
 * rebuild stopped at that position gives — the projections applied to the log's prefix alone — for
 * random logs (orders with late, repeated and out-of-order observations, refunds) and random cuts.
 */

const PROJECTIONS = [ordersProjection, ledgerProjection, refundsProjection, auditLogProjection]
const everyEntry = { date: null, currency: null, channel: null }

describe('as of a position', () => {
  it('the trial balance and each order as of a cut equal a rebuild stopped at that cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(orderPlanArb, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { minLength: 1, maxLength: 20 }), fc.nat(), async (plans, picks, cutSeed) => {
        const run = await freshProjectionDatabase('as_of', PROJECTIONS)
        const { pool, store, schema } = run
        try {
          const orders = plans.map((plan, i) => orderEventsOf(i + 1, plan))
          const streams = [...orders.map((o) => o.events.map((event) => ({ stream: o.stream, event }))), ...otherStreamsForProjections(orders, { subscriptions: 0, refundEvery: 1 })]
          for (const a of interleave(streams, picks)) await appendEvent(store, a.stream, a.event, randomUUID())
          const projector = startProjector({ store, pool, log: silentLogger() }, { schema, projections: PROJECTIONS, batchSize: 1000 })
          try {
            await projector.caughtUp(30_000)
          } finally {
            await projector.stop()
          }
          const page = await store.readAll({ maxCount: 10_000 })()
          if (E.isLeft(page)) throw new Error('read')
          const items = page.right.map(decodeBatchItem)
          const cut = cutSeed % items.length
          const position = items[cut]?.position as Position
          const prefix = items.slice(0, cut + 1).flatMap((i) => (i.ok ? [i.event] : []))

          // The rebuild stopped there: the projections applied to the prefix alone, in a schema of its own.
          const rebuilt = `${schema}_cut`
          await pool.query(`create schema "${rebuilt}"`)
          for (const p of [ledgerProjection, ordersProjection]) {
            for (const sql of p.createTables(rebuilt)) await pool.query(sql)
            for (const sql of p.createViews?.(rebuilt) ?? []) await pool.query(sql)
            await applyInTransaction(pool, rebuilt, p, prefix)
          }
          const expected = await readTrialBalance({ pool, schema: rebuilt }, everyEntry)

          // From the live read model (its checkpoint is past the cut) …
          expect(await readTrialBalanceAsOf({ store, pool }, schema, everyEntry, position)).toEqual(expected)
          // … and from the log alone, in a transaction that leaves nothing behind.
          expect(await withReadModelsAsOf({ store, pool }, [ledgerProjection], position, (rm) => readTrialBalance({ pool: rm.db, schema: rm.schema }, everyEntry))).toEqual(expected)

          for (const o of orders) {
            const view = await viewAsOf(store, 'order', o.stream, { position, instant: new Date(), requested: position })
            const { rows } = await pool.query<{ status_code: string | null; paid_amount_satang: string | null; request_phase: string }>(
              `select status_code, paid_amount_satang::text, request_phase from "${rebuilt}".orders where stream_name = $1`,
              [o.stream],
            )
            const row = rows[0]
            if (row === undefined) {
              expect(view._tag).toBe('NotFound')
              continue
            }
            expect(view._tag).toBe('Ok')
            if (view._tag !== 'Ok') continue
            const status = view.body['status']
            expect(isJsonObject(status) ? status['code'] : null).toBe(row.status_code)
            expect(view.body['paid']).toBe(row.paid_amount_satang !== null)
            expect(isJsonObject(view.body['request']) ? view.body['request']['phase'] : null).toBe(row.request_phase)
          }
          await pool.query(`drop schema "${rebuilt}" cascade`)
          // Nothing of the as-of schemas is left behind.
          const left = await pool.query(`select count(*)::int as n from pg_namespace where nspname like 'satang_as_of_%'`)
          expect(left.rows[0]).toEqual({ n: 0 })
        } finally {
          await run.drop()
        }
      }),
      { numRuns: 8 },
    )
  })

  it('a reader may send its queries at once: they run one after another in the as-of transaction, and pg does not warn', async () => {
    // pg 8 queues a query sent to a client that is running one, warns (once per process) that pg 9 will
    // refuse it, and the console's overview did just that with Promise.all over the as-of client.
    const pgWarnings = hearPgQueuedQueries()
    const run = await freshProjectionDatabase('as_of_at_once', [ledgerProjection])
    try {
      const order = orderEventsOf(1, { amount: 10000n, service: 'svc.checkout.apply', observations: [] })
      for (const e of order.events) await appendEvent(run.store, order.stream, e)
      const head = await run.store.headPosition()()
      if (E.isLeft(head) || head.right === undefined) throw new Error('no head')
      const seen = await withReadModelsAsOf({ store: run.store, pool: run.pool }, [ledgerProjection], head.right, (rm) =>
        Promise.all([1, 2, 3, 4].map(async (n) => (await rm.db.query<{ n: number; schema: string }>('select $1::int as n, current_schema() as schema, pg_sleep(0.01)', [n])).rows[0])),
      )
      expect(seen.map((r) => r?.n)).toEqual([1, 2, 3, 4])
      // A failed query does not stop the ones queued after it (each waits for the one before, however it ended) …
      const after = await withReadModelsAsOf({ store: run.store, pool: run.pool }, [ledgerProjection], head.right, (rm) =>
        Promise.allSettled([rm.db.query('select no_such_column from pg_class'), rm.db.query('select 1 as one')]),
      )
      expect(after[0]?.status).toBe('rejected')
      // … which then fails as PostgreSQL fails it: the transaction is aborted.
      expect(after[1]?.status === 'rejected' ? String(after[1].reason) : 'fulfilled').toContain('current transaction is aborted')
      await new Promise((r) => setTimeout(r, 20))
      expect(pgWarnings.heard()).toEqual([])
    } finally {
      pgWarnings.stop()
      await run.drop()
    }
  })

  it('an instant is the last position committed by then; before the first event the log was empty', async () => {
    const run = await freshProjectionDatabase('as_of_instant', PROJECTIONS)
    const { pool, store, schema } = run
    try {
      const orders = [orderEventsOf(1, { amount: 10000n, service: 'svc.checkout.apply', observations: [] })]
      const before = new Date(Date.now() - 1000)
      for (const o of orders) for (const e of o.events) await appendEvent(store, o.stream, e)
      const page = await store.readAll({ maxCount: 100 })()
      if (E.isLeft(page)) throw new Error('read')
      const last = page.right.at(-1)
      if (last === undefined || E.isLeft(last)) throw new Error('no events')
      expect(await positionAt({ store, pool }, schema, new Date(last.right.recordedAt.getTime() + 1))).toBe(last.right.position)
      expect(await positionAt({ store, pool }, schema, before)).toBeNull()
    } finally {
      await run.drop()
    }
  })
})
