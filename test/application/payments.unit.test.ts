import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { makeRecording } from '../../src/application/index.ts'
import type { UseCaseResult } from '../../src/application/results.ts'
import { makeMemoryEventStore } from './memory-event-store.ts'
import { CALLBACKS, cause, eventsOf, makeClock, makeFakeGateway, makeMemoryStreamLocks, MERCHANT_ID, refused, rejected, testDeps, timedOut, typesOf } from './support.ts'

const STREAM = `order-${MERCHANT_ID}-ORD-1`

const checkoutInput = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  merchant_order_id: 'ORD-1',
  order_amount: '1250.5',
  order_currency: 'THB',
  order_desc: 'Bicycle helmet',
  customer: { merchant_user_id: 'u-7', full_name: 'Anong Rakdee', phone: '0812345678' },
  notify_url: 'https://shop.example/notify',
  redirect_url: 'https://shop.example/return',
  cancel_url: 'https://shop.example/cancel',
  ...over,
})

const applyAnswer = (status = 'PI') =>
  E.right({
    merchant_id: MERCHANT_ID,
    merchant_order_id: 'ORD-1',
    order_id: '261121000000000001',
    order_status: status,
    order_amount: '1250.50',
    order_currency: 'THB',
    create_time: '2026-11-21 10:00:00',
    link_url: 'https://gw.example/checkout/261121000000000001',
  })

const queryAnswer = (status: string) =>
  E.right({
    merchant_id: MERCHANT_ID,
    merchant_order_id: 'ORD-1',
    order_id: '261121000000000001',
    order_status: status,
    order_amount: '1250.50',
    order_currency: 'THB',
    order_desc: 'Bicycle helmet',
    create_time: '2026-11-21 10:00:00',
  })

const body = (r: UseCaseResult): Record<string, unknown> => {
  if (r._tag !== 'Ok') throw new Error(`expected Ok, got ${JSON.stringify(r)}`)
  return r.body
}

describe('creating a checkout', () => {
  it('records OrderCreated and PaymentRequested before sending, the answer after; the gateway gets satang\'s callback URLs', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('applyCheckout', applyAnswer())
    const seenWhileSending: string[][] = []
    gateway.onCall(() => {
      seenWhileSending.push([...typesOf(store, STREAM)])
    })
    const deps = testDeps(store, gateway)
    const r = await makeRecording(deps).payments.create('checkout', checkoutInput(), cause)

    expect(r._tag === 'Ok' && r.status).toBe('created')
    expect(seenWhileSending).toEqual([['OrderCreated', 'PaymentRequested']])
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted'])
    expect(deps.crashes).toEqual(['PaymentRequested', 'GatewayAnswer'])
    const sent = gateway.calls[0]?.request ?? {}
    expect(sent).toMatchObject({ merchant_id: MERCHANT_ID, notify_url: CALLBACKS.notify, redirect_url: CALLBACKS.checkoutRedirect, cancel_url: 'https://shop.example/cancel' })
    expect(sent).not.toHaveProperty('version')
    expect(body(r)).toMatchObject({
      merchant_order_id: 'ORD-1',
      order_amount: '1250.50',
      request: { phase: 'accepted' },
      status: { code: 'PI', final: false, source: 'api_response' },
      link_url: 'https://gw.example/checkout/261121000000000001',
      merchant_urls: { notify_url: 'https://shop.example/notify', redirect_url: 'https://shop.example/return', cancel_url: 'https://shop.example/cancel' },
    })
    // PDPA: the payer's name and phone never reach the log
    const stored = JSON.stringify(eventsOf(store, STREAM).map((e) => e.data))
    expect(stored).not.toContain('Anong')
    expect(stored).not.toContain('0812345678')
    // metadata: source, correlation, causation (the outcome is caused by the request event), actor
    const [created, requested, accepted] = eventsOf(store, STREAM)
    expect(created?.metadata).toMatchObject({ source: 'api_request', correlationId: 'req-1', causationId: 'req-1', actor: 'shop' })
    expect(accepted?.metadata).toMatchObject({ source: 'api_response', correlationId: 'req-1', causationId: requested?.eventId, traceId: 'trace-1' })
  })

  it('an invalid request is refused with every violated rule, and nothing is recorded or sent', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    const r = await makeRecording(testDeps(store, gateway)).payments.create('checkout', checkoutInput({ merchant_id: '140000000000000009', order_amount: '1.005', order_currency: undefined, notify_url: 'ftp://x' }), cause)
    expect(r._tag === 'InvalidRequest' && r.violations.map((v) => v.path)).toEqual(['merchant_id', 'order_amount', 'order_currency', 'notify_url'])
    expect(store.all()).toHaveLength(0)
    expect(gateway.calls).toHaveLength(0)
  })

  it('the same create again is answered from the log and never sent twice; another order under the same id is a conflict', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('applyCheckout', applyAnswer())
    const payments = makeRecording(testDeps(store, gateway)).payments
    await payments.create('checkout', checkoutInput(), cause)
    const again = await payments.create('checkout', checkoutInput(), cause)
    expect(body(again)).toMatchObject({ replayed: true, request: { phase: 'accepted' } })
    const other = await payments.create('checkout', checkoutInput({ order_amount: '99' }), cause)
    expect(other).toMatchObject({ _tag: 'Conflict', details: { fields: ['order_amount'] } })
    expect(gateway.count('applyCheckout')).toBe(1)
  })

  it('a gateway rejection is recorded as PaymentRequestFailed and answered 422', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('applyCheckout', rejected(400002, 'duplicate id'))
    const r = await makeRecording(testDeps(store, gateway)).payments.create('checkout', checkoutInput(), cause)
    expect(r).toMatchObject({ _tag: 'GatewayRejected', code: 400002, message: 'duplicate id' })
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestFailed'])
    expect(eventsOf(store, STREAM)[2]?.data).toMatchObject({ reason: 'gateway_rejected', code: 400002 })
  })

  it('a create that never left (connection refused) is a definite failure', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('applyCheckout', refused())
    const r = await makeRecording(testDeps(store, gateway)).payments.create('checkout', checkoutInput(), cause)
    expect(r).toMatchObject({ _tag: 'GatewayUnavailable', retriable: true })
    expect(eventsOf(store, STREAM)[2]?.data).toMatchObject({ reason: 'not_sent' })
  })
})

describe('unknown outcomes', () => {
  it('a timed-out create is recorded as unknown (202) and resolved by a query, never by sending it again', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('applyCheckout', timedOut())
    gateway.answer('queryPayment', E.left({ _tag: 'TransportFailed', operation: 'q', reason: 'http_5xx', status: 503, sent: true, retriable: true }), queryAnswer('PI'))
    const recording = makeRecording(testDeps(store, gateway))
    const r = await recording.payments.create('checkout', checkoutInput(), cause)
    expect(r._tag === 'Ok' && r.status).toBe('accepted')
    expect(body(r)).toMatchObject({ request: { phase: 'outcome_unknown', reason: 'timeout' } })
    await recording.resolver.idle()
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown', 'StatusObserved'])
    expect(eventsOf(store, STREAM)[3]?.metadata).toMatchObject({ source: 'query' })
    expect(gateway.count('applyCheckout')).toBe(1)
    expect(gateway.count('queryPayment')).toBe(2)
    const now = await recording.payments.get('ORD-1', false, cause)
    expect(body(now)).toMatchObject({ request: { phase: 'resolved_by_observation' }, status: { code: 'PI', source: 'query' } })
  })

  it('"not found" is trusted only once the create can no longer be in flight; then the create failed', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('applyCheckout', timedOut())
    gateway.answer('queryPayment', rejected(404001, 'not found'))
    const clock = makeClock()
    const recording = makeRecording(testDeps(store, gateway, { now: clock.now, resolve: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, notFoundAfterMs: 15_000, notFoundCodes: [404001] } }))
    await recording.payments.create('checkout', checkoutInput(), cause)
    await recording.resolver.idle()
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown'])
    clock.advance(15_000)
    const refreshed = await recording.payments.get('ORD-1', true, cause)
    expect(body(refreshed)).toMatchObject({ request: { phase: 'failed', reason: 'not_found_by_query' } })
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown', 'PaymentRequestFailed'])
    expect(gateway.count('applyCheckout')).toBe(1)
  })

  it('at start-up, an order left as requested (satang stopped before the outcome) is marked interrupted and resolved by query', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('applyCheckout', applyAnswer())
    gateway.answer('queryPayment', queryAnswer('PS'))
    // the first process "dies" between the request and the outcome: the answer never gets recorded
    const dying = makeRecording(testDeps(store, gateway, { crashPoint: (p) => { if (p === 'GatewayAnswer') throw new Error('killed') } }))
    await expect(dying.payments.create('checkout', checkoutInput(), cause)).rejects.toThrow('killed')
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested'])

    const restarted = makeRecording(testDeps(store, gateway))
    expect(await restarted.resolver.recover({ correlationId: 'startup', causationId: 'startup' })).toBe(1)
    await restarted.resolver.idle()
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown', 'StatusObserved'])
    expect(eventsOf(store, STREAM)[2]?.data).toMatchObject({ reason: 'interrupted' })
    expect(gateway.count('applyCheckout')).toBe(1)
    // a second start finds nothing left to resolve
    expect(await makeRecording(testDeps(store, gateway)).resolver.recover({ correlationId: 's2', causationId: 's2' })).toBe(0)
  })
})

/**
 * A log, a gateway that accepts the checkout and answers a query PS, and the same gateway as `slow`,
 * whose checkout answers only once `release()` is called: a create held in flight.
 */
const heldCheckout = () => {
  const store = makeMemoryEventStore()
  const gateway = makeFakeGateway()
  gateway.answer('applyCheckout', applyAnswer())
  gateway.answer('queryPayment', queryAnswer('PS'))
  let release = (): void => undefined
  const released = new Promise<void>((r) => (release = r))
  const slow = {
    ...gateway,
    applyCheckout: (...args: Parameters<typeof gateway.applyCheckout>) => async () => {
      await released
      return gateway.applyCheckout(...args)()
    },
  }
  return { store, gateway, slow, release }
}

describe('a create in flight in another process', () => {
  it('is not taken for interrupted by a resolver that starts meanwhile: nothing is appended until a gateway timeout has passed, and the sender records its outcome', async () => {
    const { store, gateway, slow, release } = heldCheckout()
    const clock = makeClock()
    const sender = makeRecording(testDeps(store, slow, { now: clock.now }))
    const sending = sender.payments.create('checkout', checkoutInput(), cause)
    for (let i = 0; i < 20 && typesOf(store, STREAM).length < 2; i++) await new Promise((r) => setTimeout(r, 1))
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested'])

    // Another satang starts now, on the same log, with the same clock: its start-up recovery finds the create.
    const other = makeRecording(testDeps(store, gateway, { now: clock.now, resolve: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, notFoundAfterMs: 15_000, notFoundCodes: [404001] }, stopping: AbortSignal.abort() }))
    expect(await other.resolver.resolveOnce(STREAM, cause)).toMatchObject({ _tag: 'Pending', inFlightForMs: 15_000 })
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested'])

    release()
    const answered = await sending
    expect(answered).toMatchObject({ _tag: 'Ok', status: 'created' })
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted'])
    expect(gateway.count('queryPayment')).toBe(0)
  })
})

describe('the stream lock of a create in flight (shared by every process on the database)', () => {
  it('keeps a resolver of another process off the order even past a gateway timeout, until the sender has recorded the outcome', async () => {
    const { store, gateway, slow, release } = heldCheckout()
    const clock = makeClock()
    const database = makeMemoryStreamLocks()
    const sender = makeRecording(testDeps(store, slow, { now: clock.now, streamLocks: database }))
    const sending = sender.payments.create('checkout', checkoutInput(), cause)
    for (let i = 0; i < 20 && !database.held.has(STREAM); i++) await new Promise((r) => setTimeout(r, 1))
    expect(database.held.has(STREAM)).toBe(true)

    // The sender's gateway call outlives the timeout the time guard trusts: the lock still stops the other process.
    clock.advance(60_000)
    const other = makeRecording(testDeps(store, gateway, { now: clock.now, streamLocks: database, stopping: AbortSignal.abort() }))
    expect(await other.resolver.resolveOnce(STREAM, cause)).toMatchObject({ _tag: 'Pending', why: expect.stringContaining('in flight, or being resolved') })
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested'])

    release()
    expect(await sending).toMatchObject({ _tag: 'Ok', status: 'created' })
    expect(database.held.size).toBe(0)
    expect(typesOf(store, STREAM)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted'])
    expect(gateway.count('queryPayment')).toBe(0)
    expect(await other.resolver.resolveOnce(STREAM, cause)).toEqual({ _tag: 'Resolved' })
  })
})

describe('direct payments and reads', () => {
  it('a direct payment returns the channel data; GET ?refresh=true records a query observation', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer(
      'createDirectPayment',
      E.right({ merchant_id: MERCHANT_ID, merchant_order_id: 'QR-1', order_id: '261121000000000002', order_status: 'WP', order_amount: '80.00', order_currency: 'THB', create_time: '2026-11-21 10:00:00', qr_code: '000201…', qr_code_expire_sec: '900' }),
    )
    gateway.answer('queryPayment', E.right({ merchant_id: MERCHANT_ID, merchant_order_id: 'QR-1', order_id: '261121000000000002', order_status: 'PS', order_amount: '80.00', order_currency: 'THB', order_desc: 'Noodles', create_time: '2026-11-21 10:00:00' }))
    const recording = makeRecording(testDeps(store, gateway))
    const r = await recording.payments.create('direct', { service: 'svc.thaiqr.pay', payment_method: 'THAI_QR', merchant_order_id: 'QR-1', order_amount: '80', order_currency: 'THB', order_desc: 'Noodles', customer: { merchant_user_id: 'u-5' } }, cause)
    expect(body(r)).toMatchObject({ operation: 'direct', service: 'svc.thaiqr.pay', gateway_response: { qr_code: '000201…' }, status: { code: 'WP' } })
    expect(await recording.payments.get('nope', false, cause)).toMatchObject({ _tag: 'NotFound' })
    expect(await recording.payments.get('bad id!', false, cause)).toMatchObject({ _tag: 'InvalidRequest' })
    const refreshed = await recording.payments.get('QR-1', true, cause)
    expect(body(refreshed)).toMatchObject({ paid: true, status: { code: 'PS', final: true, source: 'query' } })
  })
})
