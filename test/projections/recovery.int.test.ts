import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeResolver } from '../../src/application/payment-resolution.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { orderStreamName, paymentOutcomeUnknown, type OrderEvent } from '../../src/domain/order/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { ordersProjection } from '../../src/projections/orders/projection.ts'
import { startProjector } from '../../src/projections/projector.ts'
import { makeMemoryEventStore } from '../application/memory-event-store.ts'
import { makeFakeGateway, rejected, testDeps } from '../application/support.ts'
import { anOrderCreated, aPaymentRequestAccepted, aPaymentRequested } from '../domain/order/builders.ts'
import { at, MERCHANT_ID } from '../domain/support/values.ts'
import { freshProjectionDatabase, type ProjectionDatabase } from './support.ts'
import { appendEvent } from './scenarios.ts'
import { makeReadModelQueries } from '../../src/projections/queries.ts'

const log = silentLogger()

/**
 * Start-up recovery of creates whose outcome is unknown: with the orders read model it reads the open
 * creates as of the projection's checkpoint (one query) and only the order events after it, instead
 * of every order stream; it finds the same streams.
 */
describe('start-up recovery from the orders read model', () => {
  let db: ProjectionDatabase
  let pool: Pool
  let store: EventStore
  let schema: string

  beforeAll(async () => {
    db = await freshProjectionDatabase('recovery', [ordersProjection], 8)
    pool = db.pool
    store = db.store
    schema = db.schema
  })
  afterAll(async () => {
    await db.drop()
  })

  const order = async (id: string, events: ReadonlyArray<OrderEvent>): Promise<string> => {
    const stream = orderStreamName(MERCHANT_ID, id)
    for (const e of [anOrderCreated({ merchantOrderId: id }), ...events]) await appendEvent(store, stream, e)
    return stream
  }

  it('finds the creates recorded as requested or unknown, before and after the checkpoint, reading only the events after it', async () => {
    const unknown = await order('REC-UNKNOWN', [aPaymentRequested(), paymentOutcomeUnknown.make({ reason: 'timeout', httpStatus: null, traceId: null, since: at(2) })])
    await order('REC-ACCEPTED', [aPaymentRequested(), aPaymentRequestAccepted()])
    const requested = await order('REC-REQUESTED', [aPaymentRequested()])
    const projector = startProjector({ store, pool, log }, { schema, projections: [ordersProjection] })
    await projector.caughtUp(30_000)
    await projector.stop()
    // After the checkpoint: one more create left open.
    const late = await order('REC-LATE', [aPaymentRequested()])

    let orderEventsRead = 0
    const counting: EventStore = {
      ...store,
      readCategory: (prefix, options) => async () => {
        const page = await store.readCategory(prefix, options)()
        if (E.isRight(page)) orderEventsRead += page.right.length
        return page
      },
    }
    const gateway = makeFakeGateway()
    gateway.answer('queryPayment', rejected(500001, 'try later'))
    const withReadModel = makeResolver(testDeps(makeMemoryEventStore(), gateway, { store: counting, readModels: makeReadModelQueries({ pool, schema }), resolve: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, notFoundAfterMs: 0, notFoundCodes: [404001] } }))
    expect(await withReadModel.recover({ correlationId: 'startup', causationId: 'startup' })).toBe(3)
    await withReadModel.idle()
    expect(orderEventsRead).toBe(2) // REC-LATE's two events, not the 8 before the checkpoint
    const queried = gateway.calls.filter((c) => c.method === 'queryPayment').map((c) => c.request['merchant_order_id'])
    expect([...queried].sort()).toEqual(['REC-LATE', 'REC-REQUESTED', 'REC-UNKNOWN'])
    expect([unknown, requested, late].every((s) => s.startsWith('order-'))).toBe(true)

    // Without the read model: the same streams, from every order event.
    orderEventsRead = 0
    const scanning = makeResolver(testDeps(makeMemoryEventStore(), makeFakeGateway(), { store: counting, resolve: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, notFoundAfterMs: 0, notFoundCodes: [404001] }, stopping: AbortSignal.abort() }))
    expect(await scanning.recover({ correlationId: 'startup', causationId: 'startup' })).toBe(3)
    // every order event: the 10 above and the two PaymentOutcomeUnknown (interrupted) the first resolver recorded
    expect(orderEventsRead).toBe(12)
  })
})
