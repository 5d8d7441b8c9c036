import { performance } from 'node:perf_hooks'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandboxClock } from '../../src/sandbox/clock.ts'
import { backoffDelayMs, makeNotifier, type NotificationKind, type Notifier, type NotifierConfig } from '../../src/sandbox/notifier.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier } from '../../src/domain/gateway/signing.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { Notification } from '../../src/domain/gateway/notification.ts'
import { decodeAll } from '../../src/domain/violations.ts'
import { silentLogger } from '../../src/logger.ts'
import { closedPort, startFakeGateway, type FakeGatewayServer, type Reply } from '../support/fake-gateway-server.ts'
import { loadSigningVectors } from '../support/vectors.ts'

// The gateway signs notifications: its key pair from the shared vectors.
const vectors = loadSigningVectors()
const orThrow = <A>(e: E.Either<{ message: string }, A>): A => {
  if (E.isLeft(e)) throw new Error(e.left.message)
  return e.right
}
const signer = makeSigner(satangCanonicalV1, orThrow(loadPrivateKey(vectors.keys.gateway.private_key_pem)))
const verifier = makeVerifier(satangCanonicalV1, orThrow(loadPublicKey(vectors.keys.gateway.public_key_pem)))

const CONFIG: NotifierConfig = { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 60, timeoutMs: 300 }
const SUCCESS: Reply = { kind: 'raw', body: 'SUCCESS' }
const FAIL: Reply = { kind: 'raw', body: 'FAIL' }

const paymentFields = (merchantOrderId: string): Record<string, string | undefined> => ({
  merchant_id: '140000000000000001',
  merchant_order_id: merchantOrderId,
  order_id: '202601310000000001',
  order_status: 'PS',
  order_amount: '1234.50',
  order_currency: 'THB',
  create_time: '2026-01-31 10:00:00',
  complete_time: '2026-01-31 10:01:02',
  order_desc: '',
  product_code: undefined,
})
const FIELDS: Record<NotificationKind, Record<string, string | undefined>> = {
  PAYMENT: paymentFields('order-1'),
  REFUND: {
    merchant_id: '140000000000000001',
    merchant_refund_id: 'refund-1',
    merchant_order_id: 'order-1',
    order_id: '202601310000000001',
    refund_order_id: '202602010000000007',
    refund_amount: '100.00',
    refund_currency: 'THB',
    refund_status: 'RS',
    create_time: '2026-02-01 09:00:00',
  },
  SUBSCRIPTION: {
    merchant_id: '140000000000000001',
    merchant_subscribe_id: 'sub-1',
    recurring_bill_id: '30000000000000000001',
    status: 'SUCCESS',
    type: 'Deducted',
    billing_amount: '299.00',
    billing_currency: 'THB',
  },
}

let receiver: FakeGatewayServer
let notifier: Notifier
/** performance.now() of each request's arrival at the receiver. */
let arrivals: number[]

const startNotifier = (config: NotifierConfig = CONFIG): Notifier =>
  makeNotifier({ signer, log: silentLogger(), now: makeSandboxClock({ start: new Date('2026-01-31T03:00:00.000Z') }).now }, config)

/** Answers the next requests with these replies in order (the last one repeats), noting arrival times. */
const script = (...replies: Reply[]): void => {
  const offset = receiver.requests.length
  receiver.respond((_req, index) => {
    arrivals.push(performance.now())
    const reply = replies[Math.min(index - offset, replies.length - 1)]
    if (reply === undefined) throw new Error('script() needs at least one reply')
    return reply
  })
}
const url = (path = '/notify'): string => `${receiver.baseUrl}${path}`
const bodies = (): Array<Record<string, unknown>> =>
  receiver.requests.map((r) => {
    const body: unknown = JSON.parse(r.body)
    if (!t.UnknownRecord.is(body)) throw new Error(`the receiver got a body that is not a JSON object: ${r.body}`)
    return body
  })

beforeEach(async () => {
  receiver = await startFakeGateway()
  notifier = startNotifier()
  arrivals = []
})
afterEach(async () => {
  await notifier.close()
  await receiver.close()
})

describe('notifications: the signed JSON POST (ARCHITECTURE.md defaults)', () => {
  it.each(['PAYMENT', 'REFUND'] as const)('%s: decodes with the Notification codec and verifies with the gateway public key', async (kind) => {
    script(SUCCESS)
    const sent = notifier.send({ kind, url: url(), fields: FIELDS[kind] })
    expect(sent.state).toBe('pending')
    await notifier.idle()

    const [request] = receiver.requests
    expect(receiver.requests).toHaveLength(1)
    expect(request).toMatchObject({ method: 'POST', path: '/notify' })
    expect(request?.headers['content-type']).toBe('application/json')
    const received: unknown = JSON.parse(request?.body ?? '')
    const decoded = decodeAll(Notification, received)
    expect(decoded).toEqual(E.right(expect.objectContaining({ notify_type: kind, sign_type: 'RSA' })))
    if (E.isLeft(decoded)) return
    expect(verifier.verify(decoded.right)).toEqual({ valid: true })
    expect(received).toEqual(notifier.get(sent.id)?.fields)
  })

  it('SUBSCRIPTION: verifies and decodes', async () => {
    script(SUCCESS)
    notifier.send({ kind: 'SUBSCRIPTION', url: url(), fields: FIELDS.SUBSCRIPTION })
    await notifier.idle()
    const received = bodies()[0] ?? {}
    expect(verifier.verify(received)).toEqual({ valid: true })
    expect(decodeAll(Notification, received)).toEqual(E.right(expect.objectContaining({ notify_type: 'SUBSCRIPTION', sign_type: 'RSA' })))
  })

  it('drops undefined and empty fields before signing, and the kind wins over a notify_type field', async () => {
    script(SUCCESS)
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: { ...FIELDS.PAYMENT, notify_type: 'REFUND', sign: 'forged' } })
    await notifier.idle()
    expect(Object.keys(sent.fields)).not.toContain('order_desc')
    expect(Object.keys(sent.fields)).not.toContain('product_code')
    expect(sent.fields['notify_type']).toBe('PAYMENT')
    expect(verifier.verify(sent.fields)).toEqual({ valid: true })
  })

  it('records a delivered notification with its acknowledged attempt, in sandbox time', async () => {
    script(SUCCESS)
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    const record = notifier.get(sent.id)
    expect(record).toMatchObject({ state: 'delivered', kind: 'PAYMENT', url: url() })
    expect(record?.createdAt).toMatch(/^2026-01-31T03:00:00\.\d{3}Z$/)
    expect(record?.attempts).toEqual([
      { at: expect.stringMatching(/^2026-01-31T03:00:0\d\.\d{3}Z$/), status: 200, body: 'SUCCESS', error: null, acknowledged: true, durationMs: expect.any(Number), duplicate: false, dropped: false },
    ])
  })
})

describe('acknowledgement and retries', () => {
  it('FAIL, FAIL, SUCCESS: delivered after 3 attempts, all recorded, waiting base × 2^n between them', async () => {
    script(FAIL, FAIL, SUCCESS)
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    const record = notifier.get(sent.id)
    expect(record?.state).toBe('delivered')
    expect(record?.attempts.map((a) => [a.status, a.body, a.acknowledged])).toEqual([
      [200, 'FAIL', false],
      [200, 'FAIL', false],
      [200, 'SUCCESS', true],
    ])
    expect(record?.attempts[0]?.error).toBe('not acknowledged: expected HTTP 200 with body SUCCESS')
    expect(new Set(bodies().map((b) => JSON.stringify(b))).size).toBe(1)
    const [a0 = 0, a1 = 0, a2 = 0] = arrivals
    // Timers never fire early; allow 2 ms for clock granularity.
    expect(a1 - a0).toBeGreaterThanOrEqual(backoffDelayMs(CONFIG, 1) - 2)
    expect(a2 - a1).toBeGreaterThanOrEqual(backoffDelayMs(CONFIG, 2) - 2)
  })

  it('the backoff doubles and is capped', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(CONFIG, n))).toEqual([20, 40, 60, 60, 60])
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs({ ...CONFIG, baseDelayMs: 1000, maxDelayMs: 30_000 }, n))).toEqual([1000, 2000, 4000, 8000, 16000, 30000])
  })

  it('a receiver that always fails: failed after maxAttempts, no further attempt', async () => {
    script({ kind: 'raw', status: 500, body: 'internal error' })
    const sent = notifier.send({ kind: 'REFUND', url: url(), fields: FIELDS.REFUND })
    await notifier.idle()
    expect(notifier.get(sent.id)?.state).toBe('failed')
    expect(notifier.get(sent.id)?.attempts.map((a) => a.status)).toEqual([500, 500, 500, 500])
    await new Promise((r) => setTimeout(r, CONFIG.maxDelayMs * 2))
    expect(receiver.requests).toHaveLength(CONFIG.maxAttempts)
  })

  it.each([
    ['HTTP 200 with another body', { kind: 'raw', body: 'OK' }],
    ['HTTP 200 with SUCCESS and a newline', { kind: 'raw', body: 'SUCCESS\n' }],
    ['HTTP 201 with SUCCESS', { kind: 'raw', status: 201, body: 'SUCCESS' }],
    ['a redirect', { kind: 'raw', status: 302, body: 'SUCCESS' }],
  ] satisfies Array<[string, Reply]>)('%s is not an acknowledgement', async (_name, reply) => {
    notifier = startNotifier({ ...CONFIG, maxAttempts: 1 })
    script(reply)
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    expect(notifier.get(sent.id)).toMatchObject({ state: 'failed', attempts: [{ acknowledged: false }] })
  })

  it('a timeout is a failed attempt, and the retry delivers', async () => {
    script({ kind: 'hang' }, SUCCESS)
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    const [first, second] = notifier.get(sent.id)?.attempts ?? []
    expect(first).toMatchObject({ status: null, body: null, acknowledged: false, error: `timeout: no complete answer within ${String(CONFIG.timeoutMs)} ms` })
    expect(first?.durationMs).toBeGreaterThanOrEqual(CONFIG.timeoutMs - 2)
    expect(second).toMatchObject({ status: 200, acknowledged: true })
    expect(notifier.get(sent.id)?.state).toBe('delivered')
  })

  it('a refused connection is a failed attempt, named as such', async () => {
    notifier = startNotifier({ ...CONFIG, maxAttempts: 2 })
    const sent = notifier.send({ kind: 'PAYMENT', url: `http://127.0.0.1:${String(await closedPort())}/notify`, fields: FIELDS.PAYMENT })
    await notifier.idle()
    expect(notifier.get(sent.id)?.state).toBe('failed')
    expect(notifier.get(sent.id)?.attempts.map((a) => a.error)).toEqual([expect.stringContaining('connection error: ECONNREFUSED'), expect.stringContaining('ECONNREFUSED')])
  })

  it('a notify_url that is not http(s) fails at once, with one recorded attempt', () => {
    const sent = notifier.send({ kind: 'PAYMENT', url: 'ftp://example.test/notify', fields: FIELDS.PAYMENT })
    expect(sent).toMatchObject({ state: 'failed', attempts: [{ error: 'notify_url is not an absolute http or https URL' }] })
  })
})

describe('fault injection (issue 3, point 9)', () => {
  it('drop = 1: the first attempt is lost and recorded as dropped; the retry delivers', async () => {
    script(SUCCESS)
    notifier.setFaults({ drop: 1 })
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    const record = notifier.get(sent.id)
    expect(record?.state).toBe('delivered')
    expect(record?.attempts.map((a) => [a.dropped, a.status, a.acknowledged])).toEqual([
      [true, null, false],
      [false, 200, true],
    ])
    expect(record?.attempts[0]?.error).toBe('dropped by fault injection: not sent')
    expect(receiver.requests).toHaveLength(1)
    expect(notifier.faults().drop).toBe(0)
  })

  it('every attempt dropped: the state is dropped, and the receiver never saw it', async () => {
    notifier.setFaults({ drop: CONFIG.maxAttempts })
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    expect(notifier.get(sent.id)?.state).toBe('dropped')
    expect(notifier.get(sent.id)?.attempts).toHaveLength(CONFIG.maxAttempts)
    expect(receiver.requests).toHaveLength(0)
  })

  it('duplicate = 1: the notification arrives twice with identical bodies; the next one once', async () => {
    script(SUCCESS)
    notifier.setFaults({ duplicate: 1 })
    const sent = notifier.send({ kind: 'SUBSCRIPTION', url: url('/dup'), fields: FIELDS.SUBSCRIPTION })
    await notifier.idle()
    expect(receiver.requests).toHaveLength(2)
    expect(receiver.requests[0]?.body).toBe(receiver.requests[1]?.body)
    expect(notifier.get(sent.id)?.attempts.map((a) => [a.acknowledged, a.duplicate])).toEqual([
      [true, false],
      [true, true],
    ])
    notifier.send({ kind: 'SUBSCRIPTION', url: url('/dup'), fields: FIELDS.SUBSCRIPTION })
    await notifier.idle()
    expect(receiver.requests).toHaveLength(3)
  })

  it('reorder: the held notification arrives after the one that follows it', async () => {
    script(SUCCESS)
    notifier.setFaults({ reorder: true })
    const first = notifier.send({ kind: 'PAYMENT', url: url(), fields: paymentFields('first') })
    const second = notifier.send({ kind: 'PAYMENT', url: url(), fields: paymentFields('second') })
    await notifier.idle()
    expect(bodies().map((b) => b['merchant_order_id'])).toEqual(['second', 'first'])
    expect(notifier.list().map((r) => [r.id, r.state])).toEqual([
      [first.id, 'delivered'],
      [second.id, 'delivered'],
    ])
    expect(notifier.faults().reorder).toBe(false)
  })

  it('reorder with no follower: the held notification still goes out, after maxDelayMs', async () => {
    script(SUCCESS)
    notifier.setFaults({ reorder: true })
    const started = performance.now()
    const held = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    expect(notifier.get(held.id)?.state).toBe('delivered')
    expect((arrivals[0] ?? 0) - started).toBeGreaterThanOrEqual(CONFIG.maxDelayMs - 2)
  })

  it('delayMs adds latency before each attempt until set back to 0', async () => {
    script(SUCCESS)
    notifier.setFaults({ delayMs: 80 })
    const started = performance.now()
    notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await notifier.idle()
    expect((arrivals[0] ?? 0) - started).toBeGreaterThanOrEqual(78)
    notifier.setFaults({ delayMs: 0 })
    expect(notifier.faults()).toEqual({ drop: 0, duplicate: 0, reorder: false, delayMs: 0 })
  })

  it('rejects a fault count that is not a whole number of at least 0', () => {
    expect(() => notifier.setFaults({ drop: -1 })).toThrow('faults.drop must be a whole number of at least 0, got -1')
    expect(() => notifier.setFaults({ duplicate: 1.5 })).toThrow('faults.duplicate must be a whole number')
  })
})

describe('listing, reset and close', () => {
  it('lists in sending order, filtered by url and kind', async () => {
    script(SUCCESS)
    const a = notifier.send({ kind: 'PAYMENT', url: url('/a'), fields: FIELDS.PAYMENT })
    const b = notifier.send({ kind: 'REFUND', url: url('/b'), fields: FIELDS.REFUND })
    const c = notifier.send({ kind: 'PAYMENT', url: url('/b'), fields: FIELDS.PAYMENT })
    await notifier.idle()
    expect(notifier.list().map((r) => r.id)).toEqual([a.id, b.id, c.id])
    expect(notifier.list({ url: url('/b') }).map((r) => r.id)).toEqual([b.id, c.id])
    expect(notifier.list({ kind: 'PAYMENT' }).map((r) => r.id)).toEqual([a.id, c.id])
    expect(notifier.list({ url: url('/b'), kind: 'REFUND' }).map((r) => r.id)).toEqual([b.id])
    expect(notifier.get('no-such-id')).toBeUndefined()
  })

  it('reset forgets notifications and faults and abandons deliveries in flight', async () => {
    script({ kind: 'hang' })
    notifier.setFaults({ duplicate: 3, reorder: true })
    notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    notifier.reset()
    await notifier.idle()
    expect(notifier.list()).toEqual([])
    expect(notifier.faults()).toEqual({ drop: 0, duplicate: 0, reorder: false, delayMs: 0 })
  })

  it('close abandons deliveries in flight and refuses new notifications', async () => {
    script({ kind: 'hang' })
    const sent = notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })
    await new Promise((r) => setTimeout(r, 20))
    await notifier.close()
    expect(notifier.get(sent.id)?.state).toBe('pending')
    expect(() => notifier.send({ kind: 'PAYMENT', url: url(), fields: FIELDS.PAYMENT })).toThrow('notifier is closed')
  })

  it('refuses a configuration that cannot work', () => {
    expect(() => startNotifier({ ...CONFIG, maxAttempts: 0 })).toThrow('maxAttempts must be a whole number of at least 1, got 0')
    expect(() => startNotifier({ ...CONFIG, maxDelayMs: 5 })).toThrow('maxDelayMs (5) must be at least baseDelayMs (20)')
  })
})
