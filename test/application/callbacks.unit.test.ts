import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { Writable } from 'node:stream'
import { makeLogger } from '../../src/logger.ts'
import { unmatchedCallbacksStream } from '../../src/application/callbacks.ts'
import { makeRecording, type Recording } from '../../src/application/index.ts'
import { makeMemoryEventStore, type MemoryEventStore } from './memory-event-store.ts'
import { cause, eventsOf, makeFakeGateway, MERCHANT_ID, signedByGateway, testDeps, typesOf } from './support.ts'

const STREAM = `order-${MERCHANT_ID}-ORD-9`
const ORDER_ID = '261121000000000009'

const ctx = (n: number) => ({ callbackId: `cb-${String(n)}`, receivedAt: new Date('2026-11-21T03:05:00.000Z') })
/** Where callbacks received on 2026-11-21 (Bangkok) that satang does not trust are kept. */
const QUARANTINE = 'quarantine-notification-2026-11-21'
const REDIRECT_QUARANTINE = 'quarantine-redirect-2026-11-21'

const paymentNotification = (status: string, over: Record<string, string> = {}) =>
  signedByGateway({
    notify_type: 'PAYMENT',
    merchant_id: MERCHANT_ID,
    merchant_order_id: 'ORD-9',
    order_id: ORDER_ID,
    order_status: status,
    order_amount: '500.00',
    order_currency: 'THB',
    ...over,
  })

/** An order created and accepted (PI), as after POST /v1/checkouts. */
const withCheckout = async (): Promise<{ store: MemoryEventStore; recording: Recording }> => {
  const store = makeMemoryEventStore()
  const gateway = makeFakeGateway()
  gateway.answer(
    'applyCheckout',
    E.right({ merchant_id: MERCHANT_ID, merchant_order_id: 'ORD-9', order_id: ORDER_ID, order_status: 'PI', order_amount: '500.00', order_currency: 'THB', create_time: '2026-11-21 10:00:00', link_url: 'https://gw.example/c/9' }),
  )
  const recording = makeRecording(testDeps(store, gateway))
  await recording.payments.create('checkout', { merchant_order_id: 'ORD-9', order_amount: '500', order_currency: 'THB', order_desc: 'Lamp', customer: { merchant_user_id: 'u-1' }, redirect_url: 'https://shop.example/thanks?o=9' }, cause)
  return { store, recording }
}

const statusOf = async (recording: Recording): Promise<unknown> => {
  const r = await recording.payments.get('ORD-9', false, cause)
  return r._tag === 'Ok' ? r.body['status'] : r
}

describe('payment notifications', () => {
  it('a verified notification is recorded with its evidence and acknowledged', async () => {
    const { store, recording } = await withCheckout()
    const r = await recording.callbacks.notification(paymentNotification('PS'), ctx(1))
    expect(r).toEqual({ _tag: 'Recorded', redirectTo: null, status: 'PS' })
    expect(typesOf(store, STREAM).slice(3)).toEqual(['NotificationReceived', 'StatusObserved'])
    expect(eventsOf(store, STREAM)[4]?.metadata).toMatchObject({ source: 'notification', signature: { verified: true }, correlationId: 'cb-1' })
  })

  it('a forged notification is refused, quarantined (not on the order it names), and changes no state', async () => {
    const { store, recording } = await withCheckout()
    const before = await statusOf(recording)
    const forged = { ...paymentNotification('PS'), order_amount: '1.00' }
    const r = await recording.callbacks.notification(forged, ctx(2))
    expect(r).toMatchObject({ _tag: 'Rejected', reason: 'bad_signature' })
    expect(typesOf(store, STREAM)).toHaveLength(3)
    expect(typesOf(store, QUARANTINE)).toEqual(['CallbackQuarantined'])
    expect(eventsOf(store, QUARANTINE)[0]?.metadata).toMatchObject({ source: 'notification', signature: { verified: false }, correlationId: 'cb-2' })
    const kept = eventsOf(store, QUARANTINE)[0]?.data
    expect(kept).toMatchObject({ reason: 'bad_signature', signatureVerified: false, claimed: { merchantId: MERCHANT_ID, merchantOrderId: 'ORD-9' }, dayTotals: [{ callback: 'payment_notification', events: 1 }] })
    expect(JSON.parse(String(kept?.['bodyHead']))).toMatchObject({ order_amount: '1.00' })
    expect(await statusOf(recording)).toEqual(before)
  })

  it('the same forgery delivered again (another request, another id) is the one quarantine event already kept', async () => {
    const { store, recording } = await withCheckout()
    const forged = { ...paymentNotification('PS'), order_amount: '1.00' }
    for (let i = 0; i < 5; i++) await recording.callbacks.notification(forged, ctx(100 + i))
    await recording.callbacks.notification({ ...forged, order_amount: '2.00' }, ctx(200))
    expect(typesOf(store, QUARANTINE)).toEqual(['CallbackQuarantined', 'CallbackQuarantined'])
    expect(typesOf(store, STREAM)).toHaveLength(3)
  })

  it('a forgery naming an order satang never created opens no order stream', async () => {
    const store = makeMemoryEventStore()
    const recording = makeRecording(testDeps(store, makeFakeGateway()))
    for (let i = 0; i < 20; i++) await recording.callbacks.notification({ ...paymentNotification('PS', { merchant_order_id: `NEVER-${String(i)}` }), sign: 'AAAA' }, ctx(300 + i))
    expect(new Set(store.all().map((e) => e.streamName))).toEqual(new Set([QUARANTINE]))
    expect(store.all()).toHaveLength(20)
  })

  it('trusted: only a verified callback of this merchant', () => {
    const store = makeMemoryEventStore()
    const { callbacks } = makeRecording(testDeps(store, makeFakeGateway()))
    expect(callbacks.trusted(paymentNotification('PS'))).toBe(true)
    expect(callbacks.trusted({ ...paymentNotification('PS'), order_amount: '1.00' })).toBe(false)
    expect(callbacks.trusted(paymentNotification('PS', { merchant_id: '140000000000000002' }))).toBe(false)
    expect(callbacks.trusted([paymentNotification('PS')])).toBe(false)
    expect(callbacks.trusted(null)).toBe(false)
  })

  it('the same notification delivered twice yields one StatusObserved', async () => {
    const { store, recording } = await withCheckout()
    const n = paymentNotification('PS')
    await recording.callbacks.notification(n, ctx(3))
    const again = await recording.callbacks.notification(n, ctx(4))
    expect(again).toMatchObject({ _tag: 'Recorded' })
    expect(typesOf(store, STREAM).filter((t) => t === 'StatusObserved')).toHaveLength(1)
  })

  it('a WP observed after PS does not regress the order', async () => {
    const { store, recording } = await withCheckout()
    await recording.callbacks.notification(paymentNotification('PS'), ctx(5))
    const late = await recording.callbacks.notification(paymentNotification('WP'), ctx(6))
    expect(late).toMatchObject({ _tag: 'Recorded', status: 'PS' })
    expect(await statusOf(recording)).toMatchObject({ code: 'PS', final: true })
    expect(typesOf(store, STREAM).filter((t) => t === 'StatusObserved')).toHaveLength(1)
  })

  it('an amount that disagrees with the order is a discrepancy, never applied', async () => {
    const { store, recording } = await withCheckout()
    await recording.callbacks.notification(paymentNotification('PS', { order_amount: '5.00' }), ctx(7))
    expect(typesOf(store, STREAM).slice(3)).toEqual(['NotificationReceived', 'DiscrepancyObserved'])
    expect(await statusOf(recording)).toMatchObject({ code: 'PI' })
  })

  it('a verified notification about an unknown order is not recorded (the gateway will retry)', async () => {
    const { recording } = await withCheckout()
    const r = await recording.callbacks.notification(paymentNotification('PS', { merchant_order_id: 'NOPE' }), ctx(8))
    expect(r).toMatchObject({ _tag: 'Unknown' })
  })

  it('a body without notify_type, or for another merchant, is quarantined', async () => {
    const { store, recording } = await withCheckout()
    const a = await recording.callbacks.notification({ hello: 'world' }, ctx(9))
    const b = await recording.callbacks.notification(paymentNotification('PS', { merchant_id: '140000000000000002' }), ctx(10))
    expect(a).toMatchObject({ _tag: 'Rejected', reason: 'bad_signature' })
    expect(b).toMatchObject({ _tag: 'Rejected', reason: 'undecodable' })
    expect(eventsOf(store, QUARANTINE).map((e) => e.data['reason'])).toEqual(['bad_signature', 'unknown_merchant'])
    expect(typesOf(store, unmatchedCallbacksStream(MERCHANT_ID))).toEqual([])
  })
})

describe('callbacks carrying text no field may hold (issue 11)', () => {
  it('a verified notification with NUL, a control character or a lone surrogate is quarantined: one CallbackQuarantined naming the fields, stored with escapes, no state change', async () => {
    const { store, recording } = await withCheckout()
    const before = await statusOf(recording)
    const n = signedByGateway({ ...paymentNotification('PS'), order_desc: 'Lamp\u0000', product_code: 'P\ud800', 'extra\u0001': 'x\u0085' })
    const r = await recording.callbacks.notification(n, ctx(40))
    expect(r).toMatchObject({ _tag: 'Rejected', reason: 'undecodable' })
    expect(typesOf(store, STREAM)).toHaveLength(3)
    expect(typesOf(store, QUARANTINE)).toEqual(['CallbackQuarantined'])
    const data = eventsOf(store, QUARANTINE)[0]?.data
    expect(data).toMatchObject({ reason: 'undecodable', signatureVerified: true })
    expect(data?.['violations']).toEqual(
      expect.arrayContaining([
        { path: 'order_desc', rule: 'must not contain NUL or other control characters (tab, line feed and carriage return are allowed)' },
        { path: 'product_code', rule: 'must be well-formed Unicode (no lone surrogates such as \\ud800)' },
        { path: 'extra\\u0001', rule: 'field name must not contain NUL or other control characters (tab, line feed and carriage return are allowed)' },
        { path: 'extra\\u0001', rule: 'must not contain NUL or other control characters (tab, line feed and carriage return are allowed)' },
      ]),
    )
    expect(JSON.parse(String(data?.['bodyHead']))).toMatchObject({ order_desc: 'Lamp\\u0000', product_code: 'P\\ud800', 'extra\\u0001': 'x\\u0085', merchant_order_id: 'ORD-9' })
    expect(await statusOf(recording)).toEqual(before)
  })

  it('a subscription callback naming its subscription with a NUL is quarantined, not kept under a stream of that name', async () => {
    const store = makeMemoryEventStore()
    const recording = makeRecording(testDeps(store, makeFakeGateway()))
    const n = signedByGateway({ notify_type: 'SUBSCRIPTION', merchant_id: MERCHANT_ID, merchant_subscribe_id: 'S\u00001', recurring_bill_id: '1', status: 'SUCCESS' })
    const r = await recording.callbacks.notification(n, ctx(41))
    expect(r).toMatchObject({ _tag: 'Rejected', reason: 'undecodable' })
    expect(store.all().map((e) => [e.streamName, e.type])).toEqual([[QUARANTINE, 'CallbackQuarantined']])
  })
})

describe('checkout redirects', () => {
  it('a verified redirect is recorded as evidence and sends the payer on to the merchant page', async () => {
    const { store, recording } = await withCheckout()
    const form = signedByGateway({ merchant_id: MERCHANT_ID, merchant_order_id: 'ORD-9', order_id: ORDER_ID, order_amount: '500.00', order_status: 'PS', order_currency: 'THB' })
    const r = await recording.callbacks.checkoutRedirect(form, ctx(11))
    expect(r).toEqual({ _tag: 'Recorded', redirectTo: 'https://shop.example/thanks?o=9', status: 'PI' })
    expect(typesOf(store, STREAM).slice(3)).toEqual(['RedirectReceived'])
    // evidence only: the status stays what the authority said
    expect(await statusOf(recording)).toMatchObject({ code: 'PI' })
  })

  it('a forged redirect is refused and quarantined with the redirects of its day', async () => {
    const { store, recording } = await withCheckout()
    const form = { ...signedByGateway({ merchant_id: MERCHANT_ID, merchant_order_id: 'ORD-9', order_id: ORDER_ID, order_amount: '500.00', order_status: 'WP', order_currency: 'THB' }), order_status: 'PS' }
    expect(await recording.callbacks.checkoutRedirect(form, ctx(12))).toMatchObject({ _tag: 'Rejected', reason: 'bad_signature' })
    expect(typesOf(store, STREAM)).toHaveLength(3)
    expect(typesOf(store, REDIRECT_QUARANTINE)).toEqual(['CallbackQuarantined'])
    expect(eventsOf(store, REDIRECT_QUARANTINE)[0]?.metadata).toMatchObject({ source: 'redirect' })
  })
})

describe('refund notifications', () => {
  it('a tracked refund of a paid order is recorded from its notification', async () => {
    const { store, recording } = await withCheckout()
    await recording.callbacks.notification(paymentNotification('PS'), ctx(13))
    const tracked = await recording.refunds.track({ merchant_refund_id: 'RF-1', merchant_order_id: 'ORD-9' }, cause)
    expect(tracked).toMatchObject({ _tag: 'Ok', status: 'created' })
    const n = signedByGateway({
      notify_type: 'REFUND',
      merchant_id: MERCHANT_ID,
      merchant_refund_id: 'RF-1',
      merchant_order_id: 'ORD-9',
      order_id: ORDER_ID,
      refund_order_id: '261121000000000077',
      refund_amount: '200.00',
      refund_currency: 'THB',
      refund_status: 'RS',
      create_time: '2026-11-21 10:10:00',
    })
    expect(await recording.callbacks.notification(n, ctx(14))).toMatchObject({ _tag: 'Recorded', status: 'RS' })
    expect(typesOf(store, `refund-${MERCHANT_ID}-RF-1`)).toEqual(['RefundTracked', 'NotificationReceived', 'RefundStatusObserved', 'RefundRecorded'])
    const view = await recording.refunds.get('RF-1', false, cause)
    expect(view).toMatchObject({ _tag: 'Ok', body: { recorded: { refund_amount: '200.00' }, status: { code: 'RS', final: true } } })
    expect(await recording.refunds.track({ merchant_refund_id: 'RF-1', merchant_order_id: 'OTHER' }, cause)).toMatchObject({ _tag: 'NotFound' })
    expect(await recording.refunds.track({ merchant_refund_id: 'RF-1', merchant_order_id: 'ORD-9', extra: 1 }, cause)).toMatchObject({ _tag: 'InvalidRequest', violations: [{ path: 'extra' }] })
  })
})

describe('the quarantine budget (issue 22)', () => {
  const budgeted = (eventsPerDay: number, bytesPerDay = 10_000_000, bodyBytes = 2048) => {
    const store = makeMemoryEventStore()
    const recording = makeRecording(testDeps(store, makeFakeGateway(), { quarantine: { eventsPerDay, bytesPerDay, bodyBytes } }))
    return { store, recording }
  }
  const forged = (i: number, notifyType = 'PAYMENT') => ({ ...paymentNotification('PS', { merchant_order_id: `F-${String(i)}`, notify_type: notifyType }), sign: 'AAAA' })

  it('keeps at most the day budget of unverified callbacks of one kind; past it they are answered the same, counted (overBudget), not kept; other kinds have their own budget', async () => {
    const { store, recording } = budgeted(3)
    const answers = []
    for (let i = 0; i < 10; i++) answers.push(await recording.callbacks.notification(forged(i), ctx(500 + i)))
    expect(answers.slice(0, 3).every((r) => r._tag === 'Rejected' && r.reason === 'bad_signature' && r.overBudget === undefined)).toBe(true)
    expect(answers.slice(3).map((r) => (r._tag === 'Rejected' ? r.overBudget : r._tag))).toEqual(Array.from({ length: 7 }, () => 'payment_notification'))
    expect(typesOf(store, QUARANTINE)).toHaveLength(3)
    expect(eventsOf(store, QUARANTINE).map((e) => e.data['dayTotals'])).toEqual([
      [{ callback: 'payment_notification', events: 1, bytes: expect.any(Number) }],
      [{ callback: 'payment_notification', events: 2, bytes: expect.any(Number) }],
      [{ callback: 'payment_notification', events: 3, bytes: expect.any(Number) }],
    ])
    // A refund notification is another kind: its own budget, and the stream's totals carry both.
    expect(await recording.callbacks.notification(forged(99, 'REFUND'), ctx(600))).toMatchObject({ _tag: 'Rejected', reason: 'bad_signature' })
    expect(typesOf(store, QUARANTINE)).toHaveLength(4)
    expect(eventsOf(store, QUARANTINE)[3]?.data['dayTotals']).toEqual([
      { callback: 'payment_notification', events: 3, bytes: expect.any(Number) },
      { callback: 'refund_notification', events: 1, bytes: expect.any(Number) },
    ])
    // The next day has its budget again.
    expect(await recording.callbacks.notification(forged(100), { callbackId: 'cb-next-day', receivedAt: new Date('2026-11-22T03:05:00.000Z') })).not.toHaveProperty('overBudget')
    expect(typesOf(store, 'quarantine-notification-2026-11-22')).toEqual(['CallbackQuarantined'])
  })

  it('a new process on the same store (a restart, another api process) reads the day totals from the stream: the budget holds', async () => {
    const { store, recording } = budgeted(2)
    for (let i = 0; i < 2; i++) await recording.callbacks.notification(forged(i), ctx(700 + i))
    const other = makeRecording(testDeps(store, makeFakeGateway(), { quarantine: { eventsPerDay: 2, bytesPerDay: 10_000_000, bodyBytes: 2048 } }))
    expect(await other.callbacks.notification(forged(50), ctx(750))).toMatchObject({ _tag: 'Rejected', overBudget: 'payment_notification' })
    expect(typesOf(store, QUARANTINE)).toHaveLength(2)
  })

  it('says once per kind and day in the log that the budget is spent, not once per callback', async () => {
    let out = ''
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString('utf8')
        cb()
      },
    })
    const store = makeMemoryEventStore()
    const recording = makeRecording(testDeps(store, makeFakeGateway(), { quarantine: { eventsPerDay: 2, bytesPerDay: 10_000_000, bodyBytes: 2048 }, log: makeLogger({ level: 'info' }, stream) }))
    for (let i = 0; i < 30; i++) await recording.callbacks.notification(forged(i, i % 2 === 0 ? 'PAYMENT' : 'REFUND'), ctx(1000 + i))
    const lines = out
      .split('\n')
      .filter((l) => l.includes('quarantine budget'))
      .map((l) => JSON.parse(l) as { level: number; callback: string; stream: string; msg: string })
    expect(lines.map((l) => [l.level, l.callback, l.stream])).toEqual([
      [40, 'payment_notification', QUARANTINE],
      [40, 'refund_notification', QUARANTINE],
    ])
    expect(lines[0]?.msg).toContain('SATANG_QUARANTINE_DAY_EVENTS')
    expect(typesOf(store, QUARANTINE)).toHaveLength(4)
  })

  it('the bytes budget stops keeping once the bytes of event data kept would pass it', async () => {
    const { store, recording } = budgeted(1000, 3000, 512)
    for (let i = 0; i < 20; i++) await recording.callbacks.notification({ ...forged(i), order_desc: 'd'.repeat(600) }, ctx(800 + i))
    const kept = eventsOf(store, QUARANTINE)
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.length).toBeLessThan(20)
    const sizes = kept.map((e) => Buffer.byteLength(JSON.stringify(e.data)))
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3000 + 64 * kept.length)
    expect(kept.at(-1)?.data['dayTotals']).toEqual([{ callback: 'payment_notification', events: kept.length, bytes: expect.any(Number) }])
  })

  it('a callback whose signature verified is kept whatever the budget (only the gateway can send it)', async () => {
    const { store, recording } = budgeted(1)
    await recording.callbacks.notification(forged(1), ctx(900))
    expect(await recording.callbacks.notification(forged(2), ctx(901))).toMatchObject({ overBudget: 'payment_notification' })
    const other = signedByGateway({ notify_type: 'PAYMENT', merchant_id: '140000000000000002', merchant_order_id: 'X-1', order_id: '1', order_status: 'PS', order_amount: '1.00', order_currency: 'THB' })
    const verified = await recording.callbacks.notification(other, ctx(902))
    expect(verified).toMatchObject({ _tag: 'Rejected', reason: 'undecodable' })
    expect(verified).not.toHaveProperty('overBudget')
    expect(eventsOf(store, QUARANTINE).map((e) => [e.data['reason'], e.data['signatureVerified']])).toEqual([
      ['bad_signature', false],
      ['unknown_merchant', true],
    ])
  })

  it('keeps the hash and size of the whole body and only its first SATANG_QUARANTINE_BODY_BYTES bytes', async () => {
    const { store, recording } = budgeted(10, 10_000_000, 100)
    const body = Buffer.from(`{"notify_type":"PAYMENT","x":"${'ก'.repeat(300)}"`, 'utf8')
    await recording.callbacks.unreadable('notification', { violations: [{ path: '', rule: 'body must be valid JSON' }], fields: null }, { ...ctx(950), body })
    const data = eventsOf(store, QUARANTINE)[0]?.data
    expect(data).toMatchObject({ bodySha256: createHash('sha256').update(body).digest('hex'), bodyBytes: body.byteLength, violations: [{ path: '', rule: 'body must be valid JSON' }] })
    const head = String(data?.['bodyHead'])
    expect(Buffer.byteLength(head)).toBeLessThanOrEqual(100)
    expect(Buffer.byteLength(head)).toBeGreaterThan(90)
    expect(body.toString('utf8').startsWith(head)).toBe(true)
  })
})
