import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { auditTrail, auditTrailFromReadModel, readAuditTrail } from '../../src/application/audit.ts'
import type { EventStore, EventToAppend, JsonObject, RecordedEvent } from '../../src/application/ports/event-store.ts'
import { badSignature } from '../../src/domain/events/common/callback-rejected.ts'
import { decodeDomainEvent, eventSourceOf, toEventToAppend, type DomainEvent } from '../../src/domain/events/registry.ts'
import type { DomainEventMetadata } from '../../src/domain/events/metadata.ts'
import { orderStreamName } from '../../src/domain/order/stream.ts'
import { refundStreamName } from '../../src/domain/refund/stream.ts'
import { subscriptionStreamName } from '../../src/domain/subscription/stream.ts'
import { silentLogger } from '../../src/logger.ts'
import { AUDIT_LOG_ID_COLUMNS, auditLogProjection } from '../../src/projections/audit-log/projection.ts'
import { projectedEventOf, type ProjectedEvent } from '../../src/projections/types.ts'
import * as order from '../domain/order/builders.ts'
import * as refund from '../domain/refund/builders.ts'
import * as sub from '../domain/subscription/builders.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID } from '../domain/support/values.ts'
import { freshEventStoreSchema, uniqueSchemaName, type TestSchema } from '../support/postgres.ts'
import { applyInTransaction, createProjectionTables } from './support.ts'
import { makeReadModelQueries } from '../../src/projections/queries.ts'

const log = silentLogger()

const streams = {
  order: orderStreamName(MERCHANT_ID, order.ORDER_ID),
  refund: refundStreamName(MERCHANT_ID, refund.REFUND_ID),
  subscription: subscriptionStreamName(MERCHANT_ID, sub.SUBSCRIBE_ID),
  unmatched: `unmatched-callbacks-${MERCHANT_ID}`,
}

/** A StatusObserved frozen at schema version 1 (the upcast test's fixture). */
const statusObservedV1 = JSON.parse(readFileSync(new URL('../fixtures/events/status-observed.v1.json', import.meta.url), 'utf8')) as { type: string; schemaVersion: number; data: JsonObject }

/** How the application records callbacks: with the signature result in the metadata. */
const metadataOf = (e: DomainEvent, n: number): DomainEventMetadata => {
  const base = { correlationId: `corr-${String(n)}`, causationId: `cause-${String(n)}`, recordedAt: at(n).toISOString(), source: eventSourceOf(e) }
  if (e.type === 'NotificationReceived' || e.type === 'RedirectReceived') return { ...base, signature: { verified: true } }
  if (e.type === 'CallbackRejected') return { ...base, signature: { verified: false, reason: e.data.detail } }
  if (e.type === 'PaymentRequestAccepted') return { ...base, traceId: e.data.traceId }
  return base
}

const orderEvents = (): ReadonlyArray<DomainEvent> => {
  const accepted = order.anAcceptedCheckout()
  const redirect = order.given(...accepted).when(order.redirected(order.aRedirectForm())).events()
  const forged = order.given(...accepted).when(order.notified(order.aPaymentNotification(), { verified: false })).events()
  const paid = order.given(...accepted).when(order.notified(order.aPaymentNotification())).events()
  return [...accepted, ...redirect, ...forged, ...paid]
}
const refundEvents = (): ReadonlyArray<DomainEvent> => [refund.aRefundTracked(), ...refund.given(refund.aRefundTracked()).when(refund.refundNotified(refund.aRefundNotification())).events()]
const subscriptionEvents = (): ReadonlyArray<DomainEvent> => sub.run(sub.anActiveSubscription(), sub.subscriptionNotified(sub.aSubscriptionNotification({ billing_date: '2026-02-01' })))
/** A forged callback that names no order of ours: kept in the merchant's unmatched-callbacks stream. */
const unmatchedEvents = (): ReadonlyArray<DomainEvent> => [
  badSignature('payment_notification', { reason: 'signature does not match the gateway key' }, 'req-9', at(30), order.aPaymentNotification({ merchant_order_id: 'NOPE-1', order_id: '209901010000000009' })),
]

describe('the audit_log projection', () => {
  let es: TestSchema
  let pool: Pool
  let store: EventStore
  let rm: string
  let recorded: ReadonlyArray<RecordedEvent>
  let projected: ReadonlyArray<ProjectedEvent>

  const appendAll = async (stream: string, events: ReadonlyArray<DomainEvent>, first: number): Promise<void> => {
    const batch: EventToAppend[] = events.map((e, i) => toEventToAppend(e, randomUUID(), metadataOf(e, first + i)))
    const r = await store.append(stream, batch, 'any')()
    if (E.isLeft(r)) throw new Error(`append ${stream}: ${r.left._tag}`)
  }

  const readAllRecorded = async (): Promise<ReadonlyArray<RecordedEvent>> => {
    const r = await store.readAll({ maxCount: 10_000 })()
    if (E.isLeft(r)) throw new Error('readAll')
    return r.right.map((i) => {
      if (E.isLeft(i)) throw new Error('undecodable')
      return i.right
    })
  }

  /** As the projector hands them over: decoded (upcast) to the newest shape, the stored envelope beside. */
  const toProjected = (r: RecordedEvent): ProjectedEvent => {
    const decoded = decodeDomainEvent(r.type, r.schemaVersion, r.data)
    if (E.isLeft(decoded)) throw new Error(`decode ${r.type}`)
    return projectedEventOf(r, decoded.right)
  }

  beforeAll(async () => {
    es = await freshEventStoreSchema('audit_log')
    pool = es.pool(4)
    store = makePostgresEventStore({ pool, log }, { schema: es.schema })
    await appendAll(streams.order, orderEvents(), 0)
    await appendAll(streams.refund, refundEvents(), 100)
    await appendAll(streams.subscription, subscriptionEvents(), 200)
    await appendAll(streams.unmatched, unmatchedEvents(), 300)
    // An event stored at an older schema version: kept as stored, shown as stored.
    const v1: EventToAppend = { eventId: randomUUID(), type: statusObservedV1.type, schemaVersion: statusObservedV1.schemaVersion, data: statusObservedV1.data, metadata: { ...metadataOf(order.aStatusObserved(), 400), source: 'notification' } }
    const r = await store.append(streams.order, [v1], 'any')()
    if (E.isLeft(r)) throw new Error('append v1')
    recorded = await readAllRecorded()
    projected = recorded.map(toProjected)
    rm = uniqueSchemaName('rm_audit')
    await createProjectionTables(pool, rm, auditLogProjection)
    // Two batches, as the projector would split them.
    const half = Math.floor(projected.length / 2)
    await applyInTransaction(pool, rm, auditLogProjection, projected.slice(0, half))
    await applyInTransaction(pool, rm, auditLogProjection, projected.slice(half))
  })
  afterAll(async () => {
    await pool.query(`drop schema if exists "${rm}" cascade`)
    await store.close()
    await es.drop()
  })

  const rows = async (where = 'true', values: ReadonlyArray<unknown> = []): Promise<ReadonlyArray<Record<string, unknown>>> =>
    (await pool.query<Record<string, unknown>>(`select * from "${rm}".audit_log where ${where} order by global_position`, [...values])).rows

  it('has one row per event, in log order, with the envelope as stored', async () => {
    const all = await rows()
    expect(all.map((r) => r['event_id'])).toEqual(recorded.map((e) => e.eventId))
    for (const [i, e] of recorded.entries()) {
      const row = all[i] ?? {}
      expect(row).toMatchObject({
        global_position: e.position,
        stream_name: e.streamName,
        stream_revision: e.streamRevision.toString(),
        type: e.type,
        schema_version: e.schemaVersion,
        source: e.metadata.source,
        correlation_id: e.metadata.correlationId,
        causation_id: e.metadata.causationId,
        payload: e.data,
        metadata: e.metadata,
      })
      expect(row['occurred_at']).toEqual(new Date(e.metadata.recordedAt))
      expect(row['recorded_at']).toEqual(e.recordedAt)
    }
  })

  it('keeps an event stored at an older schema version as stored (not upcast)', async () => {
    const [v1] = await rows(`type = 'StatusObserved' and schema_version = 1`)
    expect(v1?.['payload']).toEqual(statusObservedV1.data)
    expect(v1?.['payload']).toHaveProperty('notified', true)
    expect(v1).toMatchObject({ merchant_order_id: order.ORDER_ID, gateway_order_id: GATEWAY_ORDER_ID, source: 'notification' })
  })

  it('shows both times in Bangkok wall-clock time too', async () => {
    const { rows: r } = await pool.query<{ occurred: string; recorded_ok: boolean }>(
      `select to_char(occurred_at_bangkok, 'YYYY-MM-DD HH24:MI:SS') as occurred,
              recorded_at_bangkok = (recorded_at at time zone 'Asia/Bangkok') and recorded_at_bangkok - (recorded_at at time zone 'UTC') = interval '7 hours' as recorded_ok
         from "${rm}".audit_log where stream_name = $1 and stream_revision = 0`,
      [streams.order],
    )
    // metadata.recordedAt of the first order event is 2026-01-01T03:00:00.000Z: 10:00 in Bangkok.
    expect(r).toEqual([{ occurred: '2026-01-01 10:00:00', recorded_ok: true }])
  })

  it('records the signature result of callbacks, and nothing for other events', async () => {
    const sig = (await rows(`stream_name = $1`, [streams.order])).map((r) => [r['type'], r['signature_verified'], r['signature_reason']])
    expect(sig).toEqual([
      ['OrderCreated', null, null],
      ['PaymentRequested', null, null],
      ['PaymentRequestAccepted', null, null],
      ['RedirectReceived', true, null],
      ['CallbackRejected', false, 'signature does not match the gateway key'],
      ['NotificationReceived', true, null],
      ['StatusObserved', null, null],
      ['StatusObserved', null, null],
    ])
    const [accepted] = await rows(`stream_name = $1 and type = 'PaymentRequestAccepted'`, [streams.order])
    expect(accepted?.['trace_id']).toBe('trace-create')
  })

  it('finds every event by any merchant or gateway id', async () => {
    const typesBy = async (column: (typeof AUDIT_LOG_ID_COLUMNS)[number], id: string): Promise<ReadonlyArray<string>> =>
      (await rows(`${column} = $1`, [id])).map((r) => `${String(r['stream_name']).split('-')[0] ?? ''}:${String(r['type'])}`)

    // The order's events (by its stream name), its refund's (their data names the order), the late v1 observation.
    expect(await typesBy('merchant_order_id', order.ORDER_ID)).toEqual([
      'order:OrderCreated',
      'order:PaymentRequested',
      'order:PaymentRequestAccepted',
      'order:RedirectReceived',
      'order:CallbackRejected',
      'order:NotificationReceived',
      'order:StatusObserved',
      'refund:RefundTracked',
      'refund:NotificationReceived',
      'refund:RefundStatusObserved',
      'refund:RefundRecorded',
      'order:StatusObserved',
    ])
    // A forged callback is found by the order id it claimed.
    expect(await typesBy('merchant_order_id', 'NOPE-1')).toEqual(['unmatched:CallbackRejected'])
    expect(await typesBy('gateway_order_id', '209901010000000009')).toEqual(['unmatched:CallbackRejected'])
    expect(await typesBy('gateway_order_id', GATEWAY_ORDER_ID)).toEqual([
      'order:PaymentRequestAccepted',
      'order:RedirectReceived',
      'order:CallbackRejected',
      'order:NotificationReceived',
      'order:StatusObserved',
      'refund:NotificationReceived',
      'refund:RefundStatusObserved',
      'order:StatusObserved',
    ])
    expect(await typesBy('merchant_refund_id', refund.REFUND_ID)).toEqual(['refund:RefundTracked', 'refund:NotificationReceived', 'refund:RefundStatusObserved', 'refund:RefundRecorded'])
    expect(await typesBy('refund_order_id', refund.REFUND_ORDER_ID)).toEqual(['refund:NotificationReceived', 'refund:RefundStatusObserved', 'refund:RefundRecorded'])
    expect(await typesBy('merchant_subscribe_id', sub.SUBSCRIBE_ID)).toEqual(subscriptionEvents().map((e) => `subscription:${e.type}`))
    expect(await typesBy('recurring_bill_id', sub.BILL_ID)).toEqual(subscriptionEvents().filter((e) => e.type !== 'SubscriptionRequested').map((e) => `subscription:${e.type}`))
    expect((await typesBy('merchant_id', MERCHANT_ID)).length).toBe(recorded.length)
    // Every lookup has its index.
    const { rows: idx } = await pool.query<{ indexdef: string }>(`select indexdef from pg_indexes where schemaname = $1 and tablename = 'audit_log'`, [rm])
    for (const c of AUDIT_LOG_ID_COLUMNS) expect(idx.some((i) => i.indexdef.includes(`(${c}, global_position)`))).toBe(true)
  })

  it('serves the audit trail from the read model exactly as from the store', async () => {
    const readModels = makeReadModelQueries({ pool, schema: rm })
    for (const stream of Object.values(streams)) {
      const fromStore = await auditTrail(store, stream)()
      const fromReadModel = await auditTrailFromReadModel(readModels, store, stream)()
      expect(E.isRight(fromStore) && fromStore.right?.events.length).toBeGreaterThan(0)
      expect(fromReadModel).toEqual(fromStore)
      expect(await readAuditTrail({ store, readModels }, stream)()).toEqual(fromStore)
    }
    expect(await auditTrailFromReadModel(readModels, store, orderStreamName(MERCHANT_ID, 'NONE'))()).toEqual(E.right(undefined))
  })

  it('completes a lagging read model with the newer events from the store', async () => {
    const readModels = makeReadModelQueries({ pool, schema: rm })
    const late = order.given(...order.anAcceptedCheckout()).when(order.queried(order.aQueryAnswer({ order_status: 'ZZ' }))).events()
    await appendAll(streams.order, late, 500)
    const fromStore = await auditTrail(store, streams.order)()
    const fromReadModel = await auditTrailFromReadModel(readModels, store, streams.order)()
    expect(fromReadModel).toEqual(fromStore)
    expect(E.isRight(fromReadModel) && fromReadModel.right?.events.at(-1)).toMatchObject({ type: 'StatusObserved', data: { statusCode: 'ZZ' } })
    // A stream the projection has not reached at all.
    const fresh = orderStreamName(MERCHANT_ID, 'LATE-1')
    await appendAll(fresh, order.anAcceptedCheckout(), 600)
    expect(await auditTrailFromReadModel(readModels, store, fresh)()).toEqual(await auditTrail(store, fresh)())
  })

  it('serves a stream of more than ten events in revision order (0, 1, 2 … 11, not the text order 0, 1, 10, 11, 2 …)', async () => {
    const readModels = makeReadModelQueries({ pool, schema: rm })
    const long = orderStreamName(MERCHANT_ID, 'LONG-1')
    const accepted = order.anAcceptedCheckout()
    const observations = Array.from({ length: 12 - accepted.length }, (_, i) => order.given(...accepted).when(order.queried(order.aQueryAnswer({ order_status: `Z${String(i)}` }))).events()).flat()
    await appendAll(long, [...accepted, ...observations], 700)
    const read = await store.readStream(long)()
    const added = E.isRight(read) ? read.right.flatMap((i) => (E.isRight(i) ? [i.right] : [])) : []
    expect(added).toHaveLength(12)
    await applyInTransaction(pool, rm, auditLogProjection, added.map(toProjected))
    const kept = await readModels.auditEvents(long)()
    expect(E.isRight(kept) && kept.right.map((e) => Number(e.streamRevision))).toEqual(Array.from({ length: 12 }, (_, i) => i))
    expect(await auditTrailFromReadModel(readModels, store, long)()).toEqual(await auditTrail(store, long)())
  })

  it('falls back to the store when the read model does not exist', async () => {
    const missing = makeReadModelQueries({ pool, schema: uniqueSchemaName('none') })
    expect(await auditTrailFromReadModel(missing, store, streams.refund)()).toEqual(await auditTrail(store, streams.refund)())
  })

  it('inserts a batch in one statement', async () => {
    const schema = uniqueSchemaName('rm_audit_one')
    await createProjectionTables(pool, schema, auditLogProjection)
    const client = await pool.connect()
    try {
      const spy = vi.spyOn(client, 'query')
      await client.query('begin')
      spy.mockClear()
      await auditLogProjection.apply({ client, schema }, projected)
      await auditLogProjection.apply({ client, schema }, [])
      expect(spy).toHaveBeenCalledTimes(1)
      await client.query('commit')
      spy.mockRestore()
      const { rows: n } = await pool.query<{ n: string }>(`select count(*)::text as n from "${schema}".audit_log`)
      expect(n[0]?.n).toBe(String(projected.length))
    } finally {
      client.release()
      await pool.query(`drop schema if exists "${schema}" cascade`)
    }
  })
})
