import fc from 'fast-check'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeRecording } from '../../src/application/index.ts'
import type { UseCaseResult } from '../../src/application/results.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { fold, isPaid } from '../../src/domain/order/index.ts'
import { redirectReceived } from '../../src/domain/events/common/redirect-received.ts'
import { redactPayerData } from '../../src/domain/events/redaction.ts'
import { silentLogger } from '../../src/logger.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import { startProjector } from '../../src/projections/projector.ts'
import { makeMemoryEventStore } from '../application/memory-event-store.ts'
import { makeFakeGateway, testDeps } from '../application/support.ts'
import { at } from '../domain/support/values.ts'
import { freshProjectionDatabase, type ProjectionDatabase } from './support.ts'
import { otherStreamsForProjections } from './mixed-streams.ts'
import { appendEvent, orderEventsOf, orderPlanArb } from './scenarios.ts'
import { makeReadModelQueries } from '../../src/projections/queries.ts'

const log = silentLogger()

/**
 * The merchant API's GET answers come from the read models (orders, refunds, subscriptions) and are
 * the same answers the event log gives; a row behind its stream is never served.
 */
describe('GET answers from the read models', () => {
  let db: ProjectionDatabase
  let pool: Pool
  let store: EventStore
  let schema: string

  beforeAll(async () => {
    db = await freshProjectionDatabase('api_reads', PROJECTIONS, 12)
    pool = db.pool
    store = db.store
    schema = db.schema
  })
  afterAll(async () => {
    await db.drop()
  })

  const body = (r: UseCaseResult): Record<string, unknown> => {
    if (r._tag !== 'Ok') throw new Error(`expected 200, got ${JSON.stringify(r)}`)
    return r.body
  }
  const withoutSource = (b: Record<string, unknown>): Record<string, unknown> => {
    const { served_from: _s, read_model_position: _p, ...rest } = b
    return rest
  }

  it('serve payments, refunds and subscriptions from the read models, equal to the fold of the log', async () => {
    const orders = fc.sample(orderPlanArb, { numRuns: 30, seed: 5 }).map((plan, i) => orderEventsOf(i + 1, plan))
    const others = otherStreamsForProjections(orders, { subscriptions: 2, refundEvery: 1 })
    for (const o of orders) for (const e of o.events) await appendEvent(store, o.stream, e)
    for (const s of others) for (const x of s) await appendEvent(store, x.stream, x.event)
    const projector = startProjector({ store, pool, log }, { schema, projections: PROJECTIONS })
    await projector.caughtUp(30_000)
    await projector.stop()

    const fromReadModels = makeRecording(testDeps(makeMemoryEventStore(), makeFakeGateway(), { store, readModels: makeReadModelQueries({ pool, schema }) }))
    const fromLog = makeRecording(testDeps(makeMemoryEventStore(), makeFakeGateway(), { store }))
    const cause = { correlationId: 't', causationId: 't' }

    for (const o of orders.slice(0, 10)) {
      const id = o.stream.split('-').slice(2).join('-')
      const projected = body(await fromReadModels.payments.get(id, false, cause))
      const folded = body(await fromLog.payments.get(id, false, cause))
      expect(projected['served_from']).toBe('read_model')
      expect(folded['served_from']).toBe('event_log')
      expect(withoutSource(projected)).toEqual(withoutSource(folded))
    }
    const refundIds = others.flat().flatMap((x) => (x.event.type === 'RefundTracked' ? [x.event.data.merchantRefundId] : []))
    expect(refundIds.length).toBeGreaterThan(0)
    for (const id of refundIds) {
      const projected = body(await fromReadModels.refunds.get(id, false, cause))
      expect(projected['served_from']).toBe('read_model')
      expect(withoutSource(projected)).toEqual(withoutSource(body(await fromLog.refunds.get(id, false, cause))))
    }
    for (const id of ['SUB-1', 'SUB-2']) {
      const projected = body(await fromReadModels.subscriptions.get(id))
      expect(projected['served_from']).toBe('read_model')
      expect(withoutSource(projected)).toEqual(withoutSource(body(await fromLog.subscriptions.get(id))))
    }

    // A new event the projector has not applied yet: the answer folds the stream instead of serving the stale row.
    const paid = orders.find((o) => isPaid(fold(o.events)))
    if (paid === undefined) throw new Error('no paid order in the sample')
    const id = paid.stream.split('-').slice(2).join('-')
    await appendEvent(store, paid.stream, redirectReceived.make({ kind: 'CHECKOUT', status: 'PS', observationKey: `redirect:${id}:late`, receivedAt: at(90), payload: redactPayerData({ merchant_order_id: id, order_status: 'PS' }) }))
    const fresh = body(await fromReadModels.payments.get(id, false, cause))
    expect(fresh['served_from']).toBe('event_log')
    expect(fresh['redirect_status']).toBe('PS')
  })
})
