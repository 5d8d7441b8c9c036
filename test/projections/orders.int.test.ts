import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { fold, isPaid, needsReview, paidAmountOf } from '../../src/domain/order/index.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import { ledgerProjection } from '../../src/projections/ledger/projection.ts'
import { callbackRejected } from '../../src/domain/events/common/callback-rejected.ts'
import { silentLogger } from '../../src/logger.ts'
import { projectionStatus } from '../../src/projections/status.ts'
import { migrateReadModels } from '../../src/projections/migrations.ts'
import { foldOrder, initialOrderFold, orderRowOf, ordersProjection } from '../../src/projections/orders/projection.ts'
import { startProjector } from '../../src/projections/projector.ts'
import { compareWithRebuild } from '../../src/projections/rebuild.ts'
import { freshEventStoreSchema, uniqueSchemaName, type TestSchema } from '../support/postgres.ts'
import { otherStreamsForProjections } from './mixed-streams.ts'
import { at } from '../domain/support/values.ts'
import { appendEvent, interleave, orderEventsOf, orderPlanArb } from './scenarios.ts'
import { freshProjectionDatabase } from './support.ts'

const log = silentLogger()

describe('the orders projection through the projector (real PostgreSQL)', () => {
  let es: TestSchema
  let pool: Pool
  let store: EventStore

  beforeAll(async () => {
    es = await freshEventStoreSchema('proj_orders')
    pool = es.pool(12)
    store = makePostgresEventStore({ pool, log }, { schema: es.schema })
  })
  const readModelSchemas: string[] = []
  afterAll(async () => {
    for (const schema of readModelSchemas) await pool.query(`drop schema if exists "${schema}" cascade`)
    await store.close()
    await es.drop()
  })

  const freshReadModels = async (): Promise<string> => {
    const schema = uniqueSchemaName('rm')
    readModelSchemas.push(schema)
    await migrateReadModels({ pool, log }, { schema, projections: [ordersProjection] })
    return schema
  }

  it('for random interleavings of many orders’ observations, every row equals the fold of the aggregate, and the ledger balances to paid minus refunded', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(orderPlanArb, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 3 }),
        async (plans, picks, batchSize, refundEvery) => {
          // Each run has a log of its own.
          const run = await freshProjectionDatabase('proj_prop', [ordersProjection, ledgerProjection])
          const { pool: runPool, store: log1, schema } = run
          try {
            const orders = plans.map((plan, i) => orderEventsOf(i + 1, plan))
            const refunds = otherStreamsForProjections(orders, { subscriptions: 0, refundEvery })
            const streams = [...orders.map((o) => o.events.map((event) => ({ stream: o.stream, event }))), ...refunds]
            const sequence = interleave(
              streams.map((s) => s.map((x) => ({ ...x, eventId: randomUUID() }))),
              picks,
            )
            // Redeliveries: some events are appended a second time with the same id (the store keeps one).
            for (const [i, a] of sequence.entries()) {
              await appendEvent(log1, a.stream, a.event, a.eventId)
              if (picks[i % picks.length] === 0) await appendEvent(log1, a.stream, a.event, a.eventId)
            }
            const projector = startProjector({ store: log1, pool: runPool, log }, { schema, projections: [ordersProjection, ledgerProjection], batchSize })
            try {
              await projector.caughtUp(30_000)
            } finally {
              await projector.stop()
            }
            let paid = 0n
            for (const o of orders) {
              const { rows } = await runPool.query<{ row: Record<string, unknown> }>(`select to_jsonb(o) - 'created_at_bangkok' - 'completed_at_bangkok' as row from "${schema}".orders o where stream_name = $1`, [o.stream])
              const expected = orderRowOf(o.stream, foldOrder(initialOrderFold(), o.events), { position: '', recordedAt: new Date(0) })
              const actual = rows[0]?.row
              expect(actual).toBeDefined()
              // The aggregate's own fold decides the status: the row agrees with it.
              const state = fold(o.events)
              if (state._tag !== 'Order') throw new Error('expected an order')
              expect(actual?.['status_code']).toBe(state.status?.code ?? null)
              expect(actual?.['status_class']).toBe(state.status === null || state.status.classification.needsReview ? 'unknown' : isPaid(state) ? 'paid' : state.status.classification.final ? 'failed' : 'pending')
              expect(actual?.['paid_amount_satang']).toBe(isPaid(state) ? Number(state.order.amount) : null)
              expect(actual?.['needs_review']).toBe(needsReview(state))
              expect(actual?.['gateway_order_id']).toBe(state.gatewayOrderId)
              expect(actual?.['redirect_status']).toBe(state.redirectStatus)
              expect(actual?.['open_discrepancies']).toBe(state.discrepancies.length)
              // Counted straight from the events, not through the projection's code.
              expect(actual?.['notifications_seen']).toBe(o.events.filter((e) => e.type === 'NotificationReceived').length)
              expect(actual?.['redirects_seen']).toBe(o.events.filter((e) => e.type === 'RedirectReceived').length)
              expect(actual?.['events_seen']).toBe(o.events.length)
              const { last_event_position: _p, last_event_recorded_at: _r, ...rest } = actual ?? {}
              const { last_event_position: _ep, last_event_recorded_at: _er, ...want } = JSON.parse(JSON.stringify(expected)) as Record<string, unknown>
              expect(normalise(rest)).toEqual(normalise(want))
              paid += paidAmountOf(state) ?? 0n
            }
            const refunded = refunds.flat().reduce((sum, x) => sum + (x.event.type === 'RefundRecorded' ? x.event.data.amount : 0n), 0n)
            // The ledger: balanced per currency, and what the gateway owes is paid minus refunded.
            const { rows: totals } = await runPool.query<{ currency: string; debit: string; credit: string }>(
              `select currency, sum(debit_satang)::text as debit, sum(credit_satang)::text as credit from "${schema}".ledger_entries group by currency`,
            )
            for (const t of totals) expect(t.debit).toBe(t.credit)
            const { rows: receivable } = await runPool.query<{ balance: string | null }>(`select sum(balance_satang)::text as balance from "${schema}".trial_balance where account = 'gateway_receivable'`)
            expect(BigInt(receivable[0]?.balance ?? '0')).toBe(paid - refunded)
          } finally {
            await run.drop()
          }
        },
      ),
      { numRuns: 12 },
    )
  }, 240_000)

  it('caughtUp waits for events committed behind an older open transaction', async () => {
    const schema = await freshReadModels()
    const projector = startProjector({ store, pool, log }, { schema, projections: [ordersProjection], batchSize: 5 })
    const slow = await pool.connect()
    const o = orderEventsOf(660_001, fc.sample(orderPlanArb, { numRuns: 1, seed: 66 })[0] ?? { amount: 100n, service: 'qr_promptpay', observations: [] })
    try {
      await projector.caughtUp(30_000)
      await slow.query('begin')
      await slow.query(`select "${es.schema}".register_append()`)
      await slow.query('select pg_current_xact_id()') // an older append transaction: the events below wait behind it
      for (const e of o.events) await appendEvent(store, o.stream, e)
      const waiting = projector.caughtUp(30_000)
      let settled = false
      void waiting.then(() => (settled = true))
      await new Promise((r) => setTimeout(r, 300))
      expect(settled).toBe(false)
      await slow.query('commit')
      await waiting
      const { rows } = await pool.query<{ events_seen: number }>(`select events_seen from "${schema}".orders where stream_name = $1`, [o.stream])
      expect(rows).toEqual([{ events_seen: o.events.length }])
    } finally {
      slow.release()
      await projector.stop()
    }
  })

  it('two projectors on one database never apply an event twice (the checkpoint row is the lock)', async () => {
    const schema = await freshReadModels()
    const one = startProjector({ store, pool, log }, { schema, projections: [ordersProjection], batchSize: 5 })
    const two = startProjector({ store, pool, log }, { schema, projections: [ordersProjection], batchSize: 7 })
    const orders = fc.sample(orderPlanArb, { numRuns: 40, seed: 11 }).map((plan, i) => orderEventsOf(880_000 + i, plan))
    try {
      for (const a of interleave(orders.map((o) => o.events.map((event) => ({ stream: o.stream, event }))), [3, 1, 4, 1, 5, 9, 2, 6])) await appendEvent(store, a.stream, a.event)
      await one.caughtUp(30_000)
      await two.caughtUp(30_000)
    } finally {
      await Promise.all([one.stop(), two.stop()])
    }
    const { differences } = await compareWithRebuild({ store, pool, log }, { schema, projection: ordersProjection })
    expect(differences).toEqual([{ table: 'orders', onlyLive: 0, onlyRebuilt: 0 }])
    for (const o of orders) {
      const { rows } = await pool.query<{ events_seen: number }>(`select events_seen from "${schema}".orders where stream_name = $1`, [o.stream])
      expect(rows).toEqual([{ events_seen: o.events.length }])
    }
  })

  it('a refused callback before the order exists changes nothing, however the events are split into batches', async () => {
    // A log of its own: every projection reads it whole.
    const own = await freshProjectionDatabase('proj_forged', PROJECTIONS)
    const { pool: ownPool, store: ownStore, schema } = own
    try {
      const o = orderEventsOf(770_001, { amount: 5_000n, service: 'qr_promptpay', observations: [{ via: 'notification', status: 'PS', amountOk: true, minute: 5 }] })
      const forged = callbackRejected.make({ callback: 'payment_notification', reason: 'bad_signature', detail: 'signature does not match', violations: [], callbackId: 'req-forged', receivedAt: at(0), payload: null })
      await appendEvent(ownStore, o.stream, forged)
      for (const e of o.events) await appendEvent(ownStore, o.stream, e)
      const projector = startProjector({ store: ownStore, pool: ownPool, log }, { schema, projections: PROJECTIONS, batchSize: 1 })
      try {
        await projector.caughtUp(30_000)
      } finally {
        await projector.stop()
      }
      for (const projection of PROJECTIONS) {
        const { differences } = await compareWithRebuild({ store: ownStore, pool: ownPool, log }, { schema, projection })
        for (const d of differences) expect({ projection: projection.name, ...d }).toEqual({ projection: projection.name, table: d.table, onlyLive: 0, onlyRebuilt: 0 })
      }
      const { rows } = await ownPool.query<{ events_seen: number; status_code: string }>(`select events_seen, status_code from "${schema}".orders where stream_name = $1`, [o.stream])
      expect(rows).toEqual([{ events_seen: o.events.length, status_code: 'PS' }])
    } finally {
      await own.drop()
    }
  })

  it('stops on an event it cannot read, naming the stream and position, and keeps the checkpoint before it', async () => {
    const schema = await freshReadModels()
    const good = orderEventsOf(990_001, { amount: 10_000n, service: 'qr_promptpay', observations: [] })
    for (const e of good.events) await appendEvent(store, good.stream, e)
    const appended = await store.append(good.stream, [{ eventId: randomUUID(), type: 'PaymentTeleported', schemaVersion: 1, data: {}, metadata: { correlationId: 'c', causationId: 'c', recordedAt: new Date().toISOString(), source: 'operator' } }], 'any')()
    if (appended._tag === 'Left') throw new Error('append failed')
    const projector = startProjector({ store, pool, log }, { schema, projections: [ordersProjection], batchSize: 1000, retryFailedOnStart: false })
    try {
      await projector.caughtUp(30_000)
      const [status] = await projectionStatus(store, pool, schema, [ordersProjection])
      expect(status?.state).toBe('failed')
      expect(status?.failure?.message).toContain(good.stream)
      expect(status?.failure?.message).toContain('unknown event type PaymentTeleported')
      expect(status?.failure?.position).toBe(appended.right.position)
      expect(status?.eventsBehind).toBeGreaterThanOrEqual(1)
      // The order's events before it were applied.
      const { rows } = await pool.query(`select status_code from "${schema}".orders where stream_name = $1`, [good.stream])
      expect(rows).toEqual([{ status_code: 'PI' }])
    } finally {
      await projector.stop()
    }
  })
})

/** Timestamps as instants, numbers as numbers: JSON from PostgreSQL and from JavaScript differ only in form. */
const normalise = (row: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => {
      if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) return [k, new Date(v).toISOString()]
      if (k.endsWith('_satang') && v !== null) return [k, String(v)]
      return [k, v]
    }),
  )
