import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { makeRecording, type Recording } from '../../src/application/index.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { record, refundKind } from '../../src/application/streams.ts'
import { decodeDomainEvent } from '../../src/domain/events/registry.ts'
import { RefundNotification } from '../../src/domain/gateway/notification.ts'
import { refundableStreamName, refundLedgersOpenedStreamName, refundStreamName } from '../../src/domain/refund/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../support/postgres.ts'
import { makeMemoryEventStore } from './memory-event-store.ts'
import { cause, makeFakeGateway, MERCHANT_ID, signedByGateway, testDeps, type FakeGateway } from './support.ts'

/**
 * Issue 17, part 5: refunds that cannot overdraw. Refund decisions of one order are serialised on the
 * order's refundable ledger; here concurrent refund notifications for one paid order, through two
 * recordings on two connection pools (two processes' worth of writers) on real PostgreSQL.
 */

let es: TestSchema
let storeA: EventStore
let storeB: EventStore
let gateway: FakeGateway
let a: Recording
let b: Recording
let runs = 0

const baht = (satang: bigint): string => `${(satang / 100n).toString()}.${(satang % 100n).toString().padStart(2, '0')}`

const ctx = (n: string) => ({ callbackId: `cb-${n}`, receivedAt: new Date('2026-11-21T03:05:00.000Z') })

/** A checkout of `amount` satang, paid (PS notification): its merchant_order_id and gateway order id. */
const paidOrder = async (amount: bigint): Promise<{ readonly orderId: string; readonly gatewayOrderId: string }> => {
  runs += 1
  const orderId = `RL-${String(runs)}`
  const gatewayOrderId = `2611210000${String(runs).padStart(8, '0')}`
  gateway.answer(
    'applyCheckout',
    E.right({ merchant_id: MERCHANT_ID, merchant_order_id: orderId, order_id: gatewayOrderId, order_status: 'PI', order_amount: baht(amount), order_currency: 'THB', create_time: '2026-11-21 10:00:00', link_url: 'https://gw.example/c' }),
  )
  const created = await a.payments.create('checkout', { merchant_order_id: orderId, order_amount: baht(amount), order_currency: 'THB', order_desc: 'Lamp', customer: { merchant_user_id: 'u-1' } }, cause)
  expect(created).toMatchObject({ _tag: 'Ok' })
  const paid = await a.callbacks.notification(
    signedByGateway({ notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: orderId, order_id: gatewayOrderId, order_status: 'PS', order_amount: baht(amount), order_currency: 'THB' }),
    ctx(`pay-${orderId}`),
  )
  expect(paid).toMatchObject({ _tag: 'Recorded', status: 'PS' })
  return { orderId, gatewayOrderId }
}

const refundNotification = (orderId: string, gatewayOrderId: string, refundId: string, amount: bigint) =>
  signedByGateway({
    notify_type: 'REFUND',
    merchant_id: MERCHANT_ID,
    merchant_refund_id: refundId,
    merchant_order_id: orderId,
    order_id: gatewayOrderId,
    refund_order_id: `9${refundId.replace(/\D/g, '').padStart(17, '0')}`,
    refund_amount: baht(amount),
    refund_currency: 'THB',
    refund_status: 'RS',
    create_time: '2026-11-21 10:10:00',
  })

/** The refunds recorded (RefundRecorded) in these refund streams, by merchant_refund_id. */
const recordedOf = async (refundIds: ReadonlyArray<string>): Promise<ReadonlyMap<string, bigint>> => {
  const out = new Map<string, bigint>()
  for (const id of refundIds) {
    const read = await storeA.readStream(refundStreamName(MERCHANT_ID, id))()
    if (E.isLeft(read)) throw new Error('read failed')
    for (const item of read.right) {
      if (E.isLeft(item) || item.right.type !== 'RefundRecorded') continue
      const e = decodeDomainEvent(item.right.type, item.right.schemaVersion, item.right.data)
      if (E.isRight(e) && e.right.type === 'RefundRecorded') out.set(id, e.right.data.amount)
    }
  }
  return out
}

/** The ledger's reservations, by merchant_refund_id, with their basis. */
const ledgerOf = async (orderId: string): Promise<ReadonlyMap<string, { readonly amount: bigint; readonly basis: string }>> => {
  const read = await storeA.readStream(refundableStreamName(MERCHANT_ID, orderId))()
  if (E.isLeft(read)) throw new Error('read failed')
  const out = new Map<string, { amount: bigint; basis: string }>()
  for (const item of read.right) {
    if (E.isLeft(item)) throw new Error('undecodable ledger event')
    const e = decodeDomainEvent(item.right.type, item.right.schemaVersion, item.right.data)
    if (E.isRight(e) && e.right.type === 'RefundAmountReserved') out.set(e.right.data.merchantRefundId, { amount: e.right.data.amount, basis: e.right.data.basis })
  }
  return out
}

beforeAll(async () => {
  es = await freshEventStoreSchema('refundledger')
  storeA = makePostgresEventStore({ pool: es.pool(8), log: silentLogger() }, { schema: es.schema })
  storeB = makePostgresEventStore({ pool: es.pool(8), log: silentLogger() }, { schema: es.schema })
  gateway = makeFakeGateway()
  a = makeRecording(testDeps(makeMemoryEventStore(), gateway, { store: storeA }))
  b = makeRecording(testDeps(makeMemoryEventStore(), gateway, { store: storeB }))
}, 60_000)

afterAll(async () => {
  await storeA.close()
  await storeB.close()
  await es.drop()
})

describe('refunds that cannot overdraw (real PostgreSQL, concurrent deliveries)', () => {
  it('property: whatever refunds arrive at once, through two writers, with redeliveries, the order never refunds more than was paid, and no refund that fits what is left is refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 100n, max: 100_000n }),
        fc.array(fc.record({ share: fc.integer({ min: 1, max: 100 }), writer: fc.boolean(), twice: fc.boolean() }), { minLength: 2, maxLength: 8 }),
        async (paid, refunds) => {
          const { orderId, gatewayOrderId } = await paidOrder(paid)
          // Each refund asks for 1%–100% of the payment: together they usually ask for more than was paid.
          const asked = refunds.map((r, i) => ({ ...r, id: `${orderId}-R${String(i)}`, amount: (paid * BigInt(r.share) + 99n) / 100n }))
          const deliveries = asked.flatMap((r) => {
            const n = refundNotification(orderId, gatewayOrderId, r.id, r.amount)
            const first = (r.writer ? a : b).callbacks.notification(n, ctx(`${r.id}-1`))
            return r.twice ? [first, (r.writer ? b : a).callbacks.notification(n, ctx(`${r.id}-2`))] : [first]
          })
          const answers = await Promise.all(deliveries)
          for (const answer of answers) expect(answer._tag).toBe('Recorded')

          const recorded = await recordedOf(asked.map((r) => r.id))
          const total = [...recorded.values()].reduce((s, x) => s + x, 0n)
          expect(total).toBeLessThanOrEqual(paid)
          // Nothing refused that would still fit: each refund left out asks for more than what is left.
          for (const r of asked) if (!recorded.has(r.id)) expect(r.amount).toBeGreaterThan(paid - total)
          // The ledger holds exactly the recorded refunds.
          const ledger = await ledgerOf(orderId)
          expect(new Map([...ledger].map(([id, x]) => [id, x.amount]))).toEqual(recorded)
        },
      ),
      { numRuns: 15, endOnFailure: true },
    )
  }, 240_000)

  it('a refund query (GET /v1/refunds/{id}?refresh=true) is decided against the same ledger', async () => {
    const { orderId, gatewayOrderId } = await paidOrder(10_000n)
    expect(await a.callbacks.notification(refundNotification(orderId, gatewayOrderId, `${orderId}-N`, 7_000n), ctx(`${orderId}-n`))).toMatchObject({ _tag: 'Recorded' })
    const queried = `${orderId}-Q`
    expect(await b.refunds.track({ merchant_refund_id: queried, merchant_order_id: orderId }, cause)).toMatchObject({ _tag: 'Ok', status: 'created' })
    const record_ = refundNotification(orderId, gatewayOrderId, queried, 4_000n)
    const { notify_type: _type, sign: _sign, sign_type: _signType, ...answer } = record_
    gateway.answer('queryRefund', E.right(answer))
    const refreshed = await b.refunds.get(queried, true, cause)
    expect(refreshed).toMatchObject({ _tag: 'Ok', body: { recorded: null, needs_review: true, discrepancies: [{ mismatches: [{ field: 'refundable_amount', expected: '3000', observed: '4000' }] }] } })
    expect([...(await ledgerOf(orderId)).keys()]).toEqual([`${orderId}-N`])
  })
})

describe('the upgrade from refunds recorded before refundable ledgers', () => {
  it('refunds already recorded are carried over once into their order’s ledger, and new refunds are decided against them', async () => {
    // A log as an earlier satang wrote it: refunds recorded on their own streams, no ledger, no marker.
    const legacy = await freshEventStoreSchema('refundlegacy')
    const store = makePostgresEventStore({ pool: legacy.pool(4), log: silentLogger() }, { schema: legacy.schema })
    const marker = refundLedgersOpenedStreamName(MERCHANT_ID)
    try {
      const gw = makeFakeGateway()
      const deps = testDeps(makeMemoryEventStore(), gw, { store })
      const rec = makeRecording(deps)
      gw.answer('applyCheckout', E.right({ merchant_id: MERCHANT_ID, merchant_order_id: 'OLD-1', order_id: '261121000000000501', order_status: 'PI', order_amount: '100.00', order_currency: 'THB', create_time: '2026-11-21 10:00:00', link_url: 'https://gw.example/c' }))
      expect(await rec.payments.create('checkout', { merchant_order_id: 'OLD-1', order_amount: '100', order_currency: 'THB', order_desc: 'Lamp', customer: { merchant_user_id: 'u-1' } }, cause)).toMatchObject({ _tag: 'Ok' })
      // The PS notification goes straight to the order (no refund decision, so no ledger is opened).
      expect(
        await rec.callbacks.notification(signedByGateway({ notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: 'OLD-1', order_id: '261121000000000501', order_status: 'PS', order_amount: '100.00', order_currency: 'THB' }), ctx('old-pay')),
      ).toMatchObject({ _tag: 'Recorded' })
      // Two refunds recorded the way satang did before: straight on their streams, checked by a scan.
      for (const [id, amount] of [['OLD-1-A', 3_000n], ['OLD-1-B', 3_500n]] as const) {
        const n = RefundNotification.decode(refundNotification('OLD-1', '261121000000000501', id, amount))
        if (E.isLeft(n)) throw new Error('the refund notification does not decode')
        const done = await record(deps, refundKind)(
          refundStreamName(MERCHANT_ID, id),
          () => ({ type: 'ReceiveRefundNotification', notification: n.right, signature: { verified: true }, callbackId: id, receivedAt: new Date('2026-11-20T03:00:00.000Z'), statusTable: deps.statusTables.refund, order: { paidAmount: 10_000n, currency: 'THB', refundedByOthers: 0n } }),
          { cause },
        )()
        expect(E.isRight(done) && done.right.appended.map((e) => e.type)).toContain('RefundRecorded')
      }
      expect(await store.readStream(refundableStreamName(MERCHANT_ID, 'OLD-1'))()).toEqual(E.right([]))
      expect(await store.readStream(marker)()).toEqual(E.right([]))

      // The first refund decided after the upgrade: 4,000 would overdraw (6,500 of 10,000 taken back already).
      const tooMuch = await rec.callbacks.notification(refundNotification('OLD-1', '261121000000000501', 'OLD-1-C', 4_000n), ctx('new-c'))
      expect(tooMuch).toMatchObject({ _tag: 'Recorded' })
      expect(await rec.refunds.get('OLD-1-C', false, cause)).toMatchObject({ _tag: 'Ok', body: { recorded: null, discrepancies: [{ mismatches: [{ field: 'refundable_amount', expected: '3500', observed: '4000' }] }] } })
      const fits = await rec.callbacks.notification(refundNotification('OLD-1', '261121000000000501', 'OLD-1-D', 3_500n), ctx('new-d'))
      expect(fits).toMatchObject({ _tag: 'Recorded', status: 'RS' })

      const ledger = await (async () => {
        const read = await store.readStream(refundableStreamName(MERCHANT_ID, 'OLD-1'))()
        if (E.isLeft(read)) throw new Error('read failed')
        return read.right.flatMap((i) => (E.isRight(i) ? [i.right] : []))
      })()
      expect(ledger.map((e) => [e.type, e.data['merchantRefundId'], e.data['amount'], e.data['basis']])).toEqual([
        ['RefundAmountReserved', 'OLD-1-A', '3000', 'carried_over'],
        ['RefundAmountReserved', 'OLD-1-B', '3500', 'carried_over'],
        ['RefundAmountReserved', 'OLD-1-D', '3500', 'decided'],
      ])
      const opened = await store.readStream(marker)()
      expect(E.isRight(opened) && opened.right.map((i) => (E.isRight(i) ? [i.right.type, i.right.data['refundsCarried'], i.right.data['ordersCarried']] : null))).toEqual([['RefundLedgersOpened', 2, 1]])

      // A process that has not cached the marker finds it and carries nothing over again.
      const other = makeRecording(testDeps(makeMemoryEventStore(), gw, { store: makePostgresEventStore({ pool: legacy.pool(2), log: silentLogger() }, { schema: legacy.schema }) }))
      expect(await other.callbacks.notification(refundNotification('OLD-1', '261121000000000501', 'OLD-1-E', 100n), ctx('new-e'))).toMatchObject({ _tag: 'Recorded' })
      const again = await store.readStream(refundableStreamName(MERCHANT_ID, 'OLD-1'))()
      expect(E.isRight(again) && again.right.length).toBe(3)
    } finally {
      await store.close()
      await legacy.drop()
    }
  })
})
