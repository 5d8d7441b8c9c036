// Valid event logs for the bench, made by the domain itself, so that the projector can apply every
// event: orders with notifications, queries, redirects and discrepancies (decided by `decide` from
// random plans), refunds, subscriptions with charges and a reconciliation run per chunk. A chunk is
// `ORDERS_PER_CHUNK` orders and their other streams, interleaved as live traffic would be (~60 streams
// open at once, one event of each in turn), so the projector's batches touch as many rows as events.
//
// The bulk path: each chunk is written with multi-row INSERT statements of `eventstore.events` (1,000
// rows each, each its own short transaction), rows in log order; the table's own BEFORE INSERT
// trigger chains every row to the previous one of its stream, exactly as for the store's appends (the rows are as `satang audit verify`
// expects them). The same rows can go into the bare table too (no trigger), so that it holds as many
// rows as the event log when the bare writer is measured against it.
import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import type pg from 'pg'
import type { EventToAppend } from '../../src/application/ports/event-store.ts'
import { eventSourceOf, toEventToAppend, type DomainEvent } from '../../src/domain/events/registry.ts'
import { redactPayerData } from '../../src/domain/events/redaction.ts'
import { classifyPaymentStatus, DEFAULT_PAYMENT_STATUS_TABLE } from '../../src/domain/gateway/statuses.ts'
import { satang } from '../../src/domain/money.ts'
import { orderCreated, orderStreamName, paymentRequestAccepted, paymentRequested } from '../../src/domain/order/index.ts'
import { MERCHANT_ID, seededGatewayOrderId, seededOrderId } from './seeded.ts'
// The generators the projection tests use (the domain decides every order's events from a plan).
import { otherStreamsForProjections } from '../../test/projections/mixed-streams.ts'
import { orderEventsOf, orderPlanArb } from '../../test/projections/scenarios.ts'

export const ORDERS_PER_CHUNK = 500
const WINDOW = 60
// Each statement commits on its own: a transaction that stays open holds back every reader of every
// satang event log on the same PostgreSQL cluster (their visibility horizon is the cluster's oldest
// running transaction), so the loader keeps its transactions short.
const ROWS_PER_STATEMENT = 1_000

export type Row = { readonly stream: string; readonly revision: number; readonly event: EventToAppend }

const plans = fc.sample(orderPlanArb, { numRuns: 4000, seed: 1 })

const toAppend = (e: DomainEvent, at: string): EventToAppend => toEventToAppend(e, randomUUID(), { correlationId: 'bench-log', causationId: 'bench-log', recordedAt: at, source: eventSourceOf(e) })

/** Interleaves whole streams: a window of `WINDOW` streams open at a time, one event of each in turn. */
const interleaveStreams = (streams: ReadonlyArray<{ readonly stream: string; readonly events: ReadonlyArray<DomainEvent> }>, at: string): Row[] => {
  const rows: Row[] = []
  for (let start = 0; start < streams.length; start += WINDOW) {
    const window = streams.slice(start, start + WINDOW)
    const longest = Math.max(...window.map((x) => x.events.length))
    for (let k = 0; k < longest; k++) {
      for (const x of window) {
        const e = x.events[k]
        if (e !== undefined) rows.push({ stream: x.stream, revision: k, event: toAppend(e, at) })
      }
    }
  }
  return rows
}

/** The rows of chunk `c` (chunks are disjoint: order numbers, refund, subscription and run ids differ). */
export const chunkRows = (c: number): Row[] => {
  const orders = Array.from({ length: ORDERS_PER_CHUNK }, (_, k) => {
    const index = c * ORDERS_PER_CHUNK + k + 1
    return orderEventsOf(index, plans[index % plans.length] ?? { amount: 10_000n, service: 'qr_promptpay', observations: [] })
  })
  const streams: Array<{ stream: string; events: DomainEvent[] }> = orders.map((o) => ({ stream: o.stream, events: [...o.events] }))
  for (const items of otherStreamsForProjections(orders, { subscriptions: 8, subscriptionPrefix: `${String(c)}-` })) {
    const first = items[0]
    if (first !== undefined) streams.push({ stream: first.stream, events: items.map((x) => x.event) })
  }
  // Shuffle the streams deterministically so orders, refunds and subscriptions mix in the log.
  const rng = fc.sample(fc.integer({ min: 0, max: 1 << 30 }), { numRuns: streams.length, seed: c + 7 })
  const keyed = streams.map((s, i) => ({ s, k: rng[i] ?? i })).sort((a, b) => a.k - b.k).map((x) => x.s)
  return interleaveStreams(keyed, new Date().toISOString())
}

const insertSql = (table: string): string =>
  `insert into ${table} (stream_name, stream_revision, event_id, type, schema_version, data, metadata)
   select r.s, r.v, r.i::uuid, r.t, r.sv, r.d, r.m
     from jsonb_to_recordset($1::jsonb) as r(o integer, s text, v bigint, i text, t text, sv integer, d jsonb, m jsonb)
    order by r.o`

const asJson = (rows: ReadonlyArray<Row>): string =>
  JSON.stringify(rows.map((r, o) => ({ o, s: r.stream, v: r.revision, i: r.event.eventId, t: r.event.type, sv: r.event.schemaVersion, d: r.event.data, m: r.event.metadata })))

/**
 * Writes rows (in log order) into `table`, `ROWS_PER_STATEMENT` per INSERT, each its own transaction.
 * A stream's events may span statements: each statement sees the ones before it committed.
 */
export const insertRows = async (pool: pg.Pool, table: string, rows: ReadonlyArray<Row>): Promise<void> => {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) await pool.query(insertSql(table), [asJson(rows.slice(i, i + ROWS_PER_STATEMENT))])
}

/** The events of a checkout that waits for its payment (created, requested, accepted with PI), as satang records it. */
export const checkoutEvents = (n: number, at: Date): ReadonlyArray<DomainEvent> => {
  const id = seededOrderId(n)
  const gatewayOrderId = seededGatewayOrderId(n)
  const amount = satang(10_000n + BigInt(n % 90_000))
  if (E.isLeft(amount)) throw new Error('bench amount')
  return [
    orderCreated.make({ merchantId: MERCHANT_ID, storeId: null, merchantOrderId: id, operation: 'checkout', service: 'svc.checkout.apply', paymentMethod: null, productCode: null, amount: amount.right, currency: 'THB', orderDesc: 'Bench', merchantUrls: { notifyUrl: null, redirectUrl: null, cancelUrl: null }, createdAt: at }),
    paymentRequested.make({ operation: 'checkout', service: 'svc.checkout.apply', request: redactPayerData({ merchant_order_id: id }), requestedAt: at }),
    paymentRequestAccepted.make({ gatewayOrderId, statusCode: 'PI', classification: classifyPaymentStatus(DEFAULT_PAYMENT_STATUS_TABLE, 'PI'), amount: amount.right, currency: 'THB', createTime: at, linkUrl: null, traceId: 'seed', response: redactPayerData({ order_id: gatewayOrderId }), receivedAt: at }),
  ]
}

/** Rows of seeded checkouts `from` … `from + count - 1`. */
export const checkoutRows = (from: number, count: number): Row[] => {
  const at = new Date()
  const iso = at.toISOString()
  const rows: Row[] = []
  for (let n = from; n < from + count; n++) {
    const stream = orderStreamName(MERCHANT_ID, seededOrderId(n))
    checkoutEvents(n, at).forEach((e, revision) => rows.push({ stream, revision, event: toAppend(e, iso) }))
  }
  return rows
}
