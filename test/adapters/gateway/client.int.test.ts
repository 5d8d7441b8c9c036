import { Writable } from 'node:stream'
import { setTimeout as sleepMs } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeGatewayClient, type GatewayClient, type GatewayClientDeps } from '../../../src/adapters/gateway/client.ts'
import type { GatewayError } from '../../../src/application/ports/gateway.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier, signedForm, type Signer, type Verifier } from '../../../src/domain/gateway/signing.ts'
import { satangCanonicalV1 } from '../../../src/domain/gateway/canonical.ts'
import { DirectPaymentRequest } from '../../../src/domain/gateway/direct-payment.ts'
import type { GatewayOperation } from '../../../src/domain/gateway/operation.ts'
import { Amount, AmountText } from '../../../src/domain/money.ts'
import { makeLogger, silentLogger } from '../../../src/logger.ts'
import { loadSigningVectors } from '../../support/vectors.ts'
import { closedPort, envelope, ok, startFakeGateway, type FakeGatewayServer } from '../../support/fake-gateway-server.ts'

// ---- keys: the signing vectors (test/fixtures/signing.json) ----

const vectors = loadSigningVectors()
const keys = vectors.keys

const orThrow = <A>(e: E.Either<unknown, A>): A => {
  if (E.isLeft(e)) throw new Error('test setup: could not load a key')
  return e.right
}

// ---- test-local operations (small io-ts codecs; the real ones live in src/domain/gateway) ----

const pattern = (name: string, re: RegExp, rule: string) =>
  new t.Type<string, string, unknown>(
    name,
    (u): u is string => typeof u === 'string' && re.test(u),
    (u, c) => (typeof u === 'string' && re.test(u) ? t.success(u) : t.failure(u, c, rule)),
    t.identity,
  )
const MerchantId = pattern('MerchantId', /^14\d{16}$/, 'must be 18 digits starting with 14')
const MerchantOrderId = pattern('MerchantOrderId', /^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, - or _')

const ThaiQrCreate = t.intersection([
  t.type({
    service: t.literal('svc.thaiqr.pay'),
    merchant_id: MerchantId,
    merchant_order_id: MerchantOrderId,
    order_amount: AmountText,
    order_currency: t.literal('THB'),
    order_desc: t.string,
    payment_method: t.literal('THAI_QR'),
    customer: t.type({ merchant_user_id: t.string, full_name: t.string }),
  }),
  t.partial({
    products: t.array(t.type({ name: t.string, unit_price: t.string, quantity: t.string })),
    notify_url: t.string,
  }),
])
type ThaiQrCreate = t.TypeOf<typeof ThaiQrCreate>
const ThaiQrCreated = t.type({ order_id: t.string, order_status: t.string, order_amount: Amount, qr_code: t.string })
type ThaiQrCreated = t.TypeOf<typeof ThaiQrCreated>

const thaiQrCreate: GatewayOperation<ThaiQrCreate, ThaiQrCreated> = {
  name: 'test.thaiqr.create',
  httpMethod: 'POST',
  retry: 'create',
  request: ThaiQrCreate,
  response: ThaiQrCreated,
}

// No `service` in this codec: the client adds it from the call options.
const PaymentQuery = t.type({ merchant_id: MerchantId, merchant_order_id: MerchantOrderId })
type PaymentQuery = t.TypeOf<typeof PaymentQuery>
const PaymentRecord = t.type({ merchant_order_id: t.string, order_status: t.string, order_amount: Amount })
type PaymentRecord = t.TypeOf<typeof PaymentRecord>
const paymentQuery: GatewayOperation<PaymentQuery, PaymentRecord> = {
  name: 'test.payment.query',
  httpMethod: 'GET',
  retry: 'query',
  request: PaymentQuery,
  response: PaymentRecord,
}

const SubscriptionCancel = t.type({
  service: t.literal('svc.recurring.cancel'),
  merchant_id: MerchantId,
  merchant_subscribe_id: MerchantOrderId,
})
type SubscriptionCancel = t.TypeOf<typeof SubscriptionCancel>
const subscriptionCancel: GatewayOperation<SubscriptionCancel, null> = {
  name: 'test.subscription.cancel',
  httpMethod: 'POST',
  retry: 'command',
  request: SubscriptionCancel,
  response: null,
}

const MERCHANT = '140000000000000001'
const aThaiQr = (over: Partial<ThaiQrCreate> = {}): ThaiQrCreate => ({
  service: 'svc.thaiqr.pay',
  merchant_id: MERCHANT,
  merchant_order_id: 'ORD-1',
  order_amount: '100',
  order_currency: 'THB',
  order_desc: 'Coffee beans 1kg',
  payment_method: 'THAI_QR',
  customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
  ...over,
})
const created = { order_id: '260000000000000001', order_status: 'WP', order_amount: '100.00', order_currency: 'THB', qr_code: '00020101021230', create_time: '2026-01-02 10:00:00' }
const paid = { merchant_order_id: 'ORD-1', order_status: 'PS', order_amount: '100.00' }
const aQuery: PaymentQuery = { merchant_id: MERCHANT, merchant_order_id: 'ORD-1' }
const QUERY = { service: 'svc.payment.query' }

const serviceOf = (body: string): unknown => {
  const parsed: unknown = JSON.parse(body)
  return t.UnknownRecord.is(parsed) ? parsed['service'] : undefined
}

const expectLeft = (r: E.Either<GatewayError, unknown>): GatewayError => {
  if (E.isRight(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.right)}`)
  return r.left
}
const expectRight = <A>(r: E.Either<GatewayError, A>): A => {
  if (E.isLeft(r)) throw new Error(`expected success, got ${JSON.stringify(r.left, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`)
  return r.right
}

describe('gateway client over real HTTP', () => {
  const merchantSigner: Signer = makeSigner(satangCanonicalV1, orThrow(loadPrivateKey(keys.merchant.private_key_pem)))
  const merchantVerifier: Verifier = makeVerifier(satangCanonicalV1, orThrow(loadPublicKey(keys.merchant.public_key_pem)))
  const gatewaySigner: Signer = makeSigner(satangCanonicalV1, orThrow(loadPrivateKey(keys.gateway.private_key_pem)))
  const gatewayVerifier: Verifier = makeVerifier(satangCanonicalV1, orThrow(loadPublicKey(keys.gateway.public_key_pem)))

  let server: FakeGatewayServer
  let clients: GatewayClient[]
  let slept: number[]

  const clientFor = (over: Partial<GatewayClientDeps> = {}): GatewayClient => {
    const client = makeGatewayClient({
      baseUrl: server.baseUrl,
      merchantSigner,
      log: silentLogger(),
      timeouts: { connectMs: 200, requestMs: 200 },
      retry: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 100 },
      random: () => 0.5,
      sleep: (ms) => {
        slept.push(ms)
        return Promise.resolve()
      },
      ...over,
    })
    clients.push(client)
    return client
  }

  beforeEach(async () => {
    server = await startFakeGateway()
    clients = []
    slept = []
  })
  afterEach(async () => {
    clients.forEach((c) => c.close())
    await server.close()
  })

  describe('signing and the wire', () => {
    it('POSTs the JSON body to /gateway with version added, signed over exactly the body that arrived', async () => {
      server.reply(ok(created, 'trace-create-1'))
      const result = expectRight(await clientFor().call(thaiQrCreate, aThaiQr())())

      expect(server.requests).toHaveLength(1)
      const [req] = server.requests
      if (req === undefined) throw new Error('no request')
      expect(req.method).toBe('POST')
      expect(req.path).toBe('/gateway')
      expect(req.headers['content-type']).toBe('application/json')
      expect(req.headers['sign-type']).toBe('RSA')
      const arrived: unknown = JSON.parse(req.body)
      if (typeof arrived !== 'object' || arrived === null) throw new Error('body is not an object')
      expect(arrived).toMatchObject({ version: 'v1', service: 'svc.thaiqr.pay', merchant_order_id: 'ORD-1' })
      expect(merchantVerifier.verify({ ...arrived }, String(req.headers['sign']))).toEqual({ valid: true })
      // A changed amount no longer verifies: the signature covers the body.
      expect(merchantVerifier.verify({ ...arrived, order_amount: '101' }, String(req.headers['sign'])).valid).toBe(false)

      expect(result.request).toEqual(arrived)
      expect(result.data).toMatchObject({ order_id: '260000000000000001', order_status: 'WP', order_amount: 10000n, qr_code: '00020101021230' })
      expect(result.traceId).toBe('trace-create-1')
      expect(result.timing.attempts).toBe(1)
      expect(result.timing.durationMs).toBeGreaterThanOrEqual(0)
    })

    it('sends the signing vector fields with exactly the vector signature', async () => {
      const vector = vectors.cases.find((c) => c.name === 'direct payment request body (thai qr)')
      if (vector === undefined) throw new Error('vector "direct payment request body (thai qr)" is missing')
      const request = ThaiQrCreate.decode(vector.fields)
      if (E.isLeft(request)) throw new Error('vector fields do not fit the test codec')
      server.reply(ok(created))
      expectRight(await clientFor().call(thaiQrCreate, request.right)())
      expect(server.requests[0]?.headers['sign']).toBe(vector.signature)
    })

    it('GETs a query with the fields as query parameters, service added, signed over those parameters', async () => {
      server.reply(ok(paid, 'trace-q'))
      const result = expectRight(await clientFor().call(paymentQuery, aQuery, QUERY)())

      const [req] = server.requests
      if (req === undefined) throw new Error('no request')
      expect(req.method).toBe('GET')
      expect(req.path).toBe('/gateway')
      expect(req.body).toBe('')
      expect(req.query).toEqual({ version: 'v1', service: 'svc.payment.query', merchant_id: MERCHANT, merchant_order_id: 'ORD-1' })
      expect(merchantVerifier.verify(req.query, String(req.headers['sign']))).toEqual({ valid: true })
      expect(result.request).toEqual(req.query)
      expect(result.data.order_amount).toBe(10000n)
    })

    it('reuses one keep-alive connection for consecutive calls', async () => {
      server.reply(ok(paid))
      const client = clientFor()
      for (let i = 0; i < 3; i++) expectRight(await client.call(paymentQuery, aQuery, QUERY)())
      expect(server.requests).toHaveLength(3)
      expect(server.connections()).toBe(1)
    })
  })

  describe('validation', () => {
    it('never sends an invalid request and reports every violation', async () => {
      const bad = aThaiQr({ merchant_id: '99', merchant_order_id: 'has space', order_amount: '1.234' })
      const error = expectLeft(await clientFor().call(thaiQrCreate, bad)())
      expect(error._tag).toBe('ValidationFailed')
      if (error._tag !== 'ValidationFailed') return
      expect(error.violations.map((v) => v.path)).toEqual(['merchant_id', 'merchant_order_id', 'order_amount'])
      expect(error.retriable).toBe(false)
      await sleepMs(50)
      expect(server.requests).toHaveLength(0)
    })

    it('refuses an operation that has no service from its codec or the call', async () => {
      const error = expectLeft(await clientFor().call(paymentQuery, aQuery)())
      expect(error).toMatchObject({ _tag: 'ValidationFailed', violations: [{ path: 'service' }] })
      expect(server.requests).toHaveLength(0)
    })
    it('refuses a GET whose fields are not text (a query string cannot carry objects)', async () => {
      const nestedQuery: GatewayOperation<{ service: string; filter: { status: string } }, null> = {
        name: 'test.nested.query',
        httpMethod: 'GET',
        retry: 'query',
        request: t.type({ service: t.string, filter: t.type({ status: t.string }) }),
        response: null,
      }
      const error = expectLeft(await clientFor().call(nestedQuery, { service: 'svc.payment.query', filter: { status: 'PS' } })())
      expect(error).toMatchObject({ _tag: 'ValidationFailed', violations: [{ path: 'filter' }] })
      expect(server.requests).toHaveLength(0)
    })

    it('throws at construction on unusable configuration (a defect, not a runtime failure)', () => {
      expect(() => clientFor({ baseUrl: 'ftp://gateway.example' })).toThrow(/baseUrl/)
      expect(() => clientFor({ retry: { maxAttempts: 0, baseDelayMs: 1, maxDelayMs: 1 } })).toThrow(/maxAttempts/)
      expect(() => clientFor({ timeouts: { connectMs: 0, requestMs: 100 } })).toThrow(/connectMs/)
    })
  })

  describe('queries are retried', () => {
    it('503, 503, then success: succeeds on the third request with backoff between', async () => {
      server.reply({ kind: 'raw', status: 503, body: 'busy' }, { kind: 'raw', status: 503, body: 'busy' }, ok(paid))
      const result = expectRight(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(result.timing.attempts).toBe(3)
      expect(server.requests).toHaveLength(3)
      // random() = 0.5 with base 20: full jitter over [0, 20] then [0, 40]
      expect(slept).toEqual([10, 20])
    })

    it('fails always: TransportFailed http_5xx after maxAttempts requests', async () => {
      server.reply({ kind: 'raw', status: 503, body: 'busy' })
      const error = expectLeft(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(error).toMatchObject({ _tag: 'TransportFailed', reason: 'http_5xx', status: 503, retriable: true })
      expect(server.requests).toHaveLength(3)
    })

    it('a real timeout, then success', async () => {
      server.reply({ kind: 'hang' }, ok(paid))
      const started = performance.now()
      const result = expectRight(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(result.timing.attempts).toBe(2)
      expect(performance.now() - started).toBeGreaterThanOrEqual(190)
      expect(server.requests).toHaveLength(2)
    })

    it('a reset connection, then success', async () => {
      server.reply({ kind: 'reset' }, ok(paid))
      expectRight(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(server.requests).toHaveLength(2)
    })

    it('does not retry a business error', async () => {
      server.reply({ kind: 'json', body: envelope({ code: 400004, message: 'Order not found', traceId: 'trace-nf' }) })
      const error = expectLeft(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(error).toMatchObject({ _tag: 'GatewayRejected', code: 400004, message: 'Order not found', traceId: 'trace-nf', retriable: false })
      expect(server.requests).toHaveLength(1)
    })

    it('retries a gateway code configured as retriable (rate limited)', async () => {
      server.reply({ kind: 'json', body: envelope({ code: 429001, message: 'Rate limited' }) }, ok(paid))
      const client = clientFor({ retry: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 100, retriableCodes: [429001] } })
      expectRight(await client.call(paymentQuery, aQuery, QUERY)())
      expect(server.requests).toHaveLength(2)
    })

    it('a 429 with Retry-After: the retry waits for it (rate limited by the gateway)', async () => {
      server.reply({ kind: 'json', status: 429, headers: { 'retry-after': '1' }, body: envelope({ code: 429001, message: 'Rate limited' }) }, ok(paid))
      const client = clientFor({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, retriableCodes: [429001] } })
      const result = expectRight(await client.call(paymentQuery, aQuery, QUERY)())
      expect(result.timing.attempts).toBe(2)
      // Retry-After: 1 (s) plus the jittered backoff (random 0.5 of a 1 ms ceiling)
      expect(slept.at(-1)).toBe(1001)
      expect(server.requests).toHaveLength(2)
    })

    it('does not retry a malformed envelope: DecodeFailed with the violations and the body', async () => {
      server.reply({ kind: 'json', body: { code: '200000', msg: 'Success' } })
      const error = expectLeft(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(error._tag).toBe('DecodeFailed')
      if (error._tag !== 'DecodeFailed') return
      expect(error.violations.map((v) => v.path)).toEqual(['code', 'message', 'trace_id'])
      expect(error.body).toContain('"msg"')
      expect(server.requests).toHaveLength(1)
    })

    it('a body that is not JSON is DecodeFailed', async () => {
      server.reply({ kind: 'raw', body: '<html>gateway</html>' })
      const error = expectLeft(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(error).toMatchObject({ _tag: 'DecodeFailed', httpStatus: 200 })
    })

    it('data that breaks the response codec is DecodeFailed with data.* paths and the trace_id', async () => {
      server.reply(ok({ ...paid, order_amount: '1.005' }, 'trace-bad-data'))
      const error = expectLeft(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(error).toMatchObject({ _tag: 'DecodeFailed', traceId: 'trace-bad-data', violations: [{ path: 'data.order_amount' }] })
    })

    it('a 4xx without an envelope is TransportFailed http_status, not retried', async () => {
      server.reply({ kind: 'raw', status: 404, body: 'no such path' })
      const error = expectLeft(await clientFor().call(paymentQuery, aQuery, QUERY)())
      expect(error).toMatchObject({ _tag: 'TransportFailed', reason: 'http_status', status: 404, retriable: false })
      expect(server.requests).toHaveLength(1)
    })
  })

  describe('creates are never re-sent', () => {
    const expectOneRequestAfterAWhile = async (): Promise<void> => {
      await sleepMs(300)
      expect(server.requests).toHaveLength(1)
    }

    it('a timeout after the request was sent is OutcomeUnknown, with the ids and the request', async () => {
      server.reply({ kind: 'hang' })
      const error = expectLeft(await clientFor().call(thaiQrCreate, aThaiQr())())
      expect(error).toMatchObject({
        _tag: 'OutcomeUnknown',
        reason: 'timeout',
        operation: 'test.thaiqr.create',
        service: 'svc.thaiqr.pay',
        merchantId: MERCHANT,
        merchantOrderId: 'ORD-1',
        retriable: false,
        request: { merchant_order_id: 'ORD-1', version: 'v1' },
        cause: { _tag: 'TransportFailed', reason: 'timeout', sent: true },
      })
      await expectOneRequestAfterAWhile()
      expect(slept).toEqual([])
    })

    it('a 502 is OutcomeUnknown', async () => {
      server.reply({ kind: 'raw', status: 502, body: 'bad gateway' })
      const error = expectLeft(await clientFor().call(thaiQrCreate, aThaiQr())())
      expect(error).toMatchObject({ _tag: 'OutcomeUnknown', reason: 'http_5xx', status: 502 })
      await expectOneRequestAfterAWhile()
    })

    it('a connection reset after the request was read is OutcomeUnknown', async () => {
      server.reply({ kind: 'reset' })
      const error = expectLeft(await clientFor().call(thaiQrCreate, aThaiQr())())
      expect(error).toMatchObject({ _tag: 'OutcomeUnknown', reason: 'reset' })
      await expectOneRequestAfterAWhile()
    })

    it('a response cut halfway is OutcomeUnknown', async () => {
      server.reply({ kind: 'truncated', body: JSON.stringify(envelope({ data: created })) })
      const error = expectLeft(await clientFor().call(thaiQrCreate, aThaiQr())())
      expect(error).toMatchObject({ _tag: 'OutcomeUnknown', reason: 'reset' })
      await expectOneRequestAfterAWhile()
    })

    it('a success whose data cannot be read is OutcomeUnknown (bad_response): the order may exist', async () => {
      server.reply(ok({ ...created, order_amount: 'lots' }))
      const error = expectLeft(await clientFor().call(thaiQrCreate, aThaiQr())())
      expect(error).toMatchObject({ _tag: 'OutcomeUnknown', reason: 'bad_response', cause: { _tag: 'DecodeFailed' } })
    })

    it('connection refused is a definite TransportFailed: nothing was sent', async () => {
      const client = clientFor({ baseUrl: `http://127.0.0.1:${await closedPort()}` })
      const error = expectLeft(await client.call(thaiQrCreate, aThaiQr())())
      expect(error).toMatchObject({ _tag: 'TransportFailed', reason: 'refused', sent: false })
      expect(slept).toEqual([])
    })

    it('a business error is GatewayRejected with code, message and trace_id', async () => {
      server.reply({ kind: 'json', body: envelope({ code: 400002, message: 'Duplicate merchant_order_id', traceId: 'trace-dup' }) })
      const error = expectLeft(await clientFor().call(thaiQrCreate, aThaiQr())())
      expect(error).toEqual({
        _tag: 'GatewayRejected',
        operation: 'test.thaiqr.create',
        code: 400002,
        message: 'Duplicate merchant_order_id',
        traceId: 'trace-dup',
        httpStatus: 200,
        retriable: false,
      })
    })
  })

  describe('commands', () => {
    it('a cancel succeeds with an envelope that has no data', async () => {
      server.reply({ kind: 'json', body: envelope({ traceId: 'trace-cancel' }) })
      const result = expectRight(
        await clientFor().call(subscriptionCancel, { service: 'svc.recurring.cancel', merchant_id: MERCHANT, merchant_subscribe_id: 'SUB-1' })(),
      )
      expect(result.data).toBeNull()
      expect(result.traceId).toBe('trace-cancel')
    })

    it('a command is not retried on 503', async () => {
      server.reply({ kind: 'raw', status: 503, body: 'busy' })
      const error = expectLeft(
        await clientFor().call(subscriptionCancel, { service: 'svc.recurring.cancel', merchant_id: MERCHANT, merchant_subscribe_id: 'SUB-1' })(),
      )
      expect(error).toMatchObject({ _tag: 'TransportFailed', reason: 'http_5xx', sent: true })
      expect(server.requests).toHaveLength(1)
    })
  })

  describe('other transport failures', () => {
    it('an unknown host is TransportFailed dns', async () => {
      const client = clientFor({ baseUrl: 'http://satang-test.invalid', timeouts: { connectMs: 2000, requestMs: 2000 } })
      const error = expectLeft(await client.call(paymentQuery, aQuery, QUERY)())
      expect(error).toMatchObject({ _tag: 'TransportFailed', reason: 'dns', sent: false })
    })

    it('a body larger than maxResponseBytes is DecodeFailed', async () => {
      server.reply(ok({ ...paid, filler: 'x'.repeat(10_000) }))
      const error = expectLeft(await clientFor({ maxResponseBytes: 1000 }).call(paymentQuery, aQuery, QUERY)())
      expect(error).toMatchObject({ _tag: 'DecodeFailed', httpStatus: 200 })
    })
  })

  describe('response signature hook', () => {
    it('accepts an envelope signed by the gateway key', async () => {
      const body = envelope({ data: paid, traceId: 'trace-signed' })
      server.reply({ kind: 'json', body, headers: { sign: signedForm(gatewaySigner, body).sign, 'sign-type': 'RSA' } })
      expectRight(await clientFor({ gatewayVerifier }).call(paymentQuery, aQuery, QUERY)())
    })

    it('rejects an unsigned or tampered envelope as DecodeFailed', async () => {
      const body = envelope({ data: paid })
      const sign = signedForm(gatewaySigner, body).sign
      server.reply({ kind: 'json', body: { ...body, data: { ...paid, order_status: 'XX' } }, headers: { sign } }, { kind: 'json', body })
      const client = clientFor({ gatewayVerifier, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } })
      expect(expectLeft(await client.call(paymentQuery, aQuery, QUERY)())).toMatchObject({ _tag: 'DecodeFailed', violations: [{ path: 'sign' }] })
      expect(expectLeft(await client.call(paymentQuery, aQuery, QUERY)())).toMatchObject({ _tag: 'DecodeFailed', violations: [{ path: 'sign' }] })
    })
  })

  describe('with the spec operations (src/domain/gateway/operations.ts)', () => {
    const NOW = '2026-01-01 10:00:00'
    const thaiQrVector = () => {
      const vector = vectors.cases.find((c) => c.name === 'direct payment request body (thai qr)')
      if (vector === undefined) throw new Error('vector "direct payment request body (thai qr)" is missing')
      const decoded = DirectPaymentRequest.decode(vector.fields)
      if (E.isLeft(decoded)) throw new Error('the vector is not a valid direct payment request')
      const { version: _version, ...request } = decoded.right
      return { vector, request }
    }
    const thaiQrCreated = {
      merchant_id: MERCHANT,
      merchant_order_id: 'ORD-2026-0001',
      order_id: '202601010000000001',
      order_status: 'WP',
      order_amount: '100.00',
      order_currency: 'THB',
      create_time: NOW,
      qr_code: '00020101021230570016A000000677010112',
      qr_code_expire_sec: '600',
    }
    const subscription = {
      merchant_id: MERCHANT,
      merchant_subscribe_id: 'SUB-2026-0001',
      plan_name: 'Coffee club',
      interval_type: 'MONTHLY',
      interval: '1',
      total_terms: '12',
      billing_amount: '299',
      billing_currency: 'THB',
      retry: 'Y',
    } as const

    it('creates a direct THAI_QR payment: version added, the vector body arrives with the vector signature', async () => {
      const { vector, request } = thaiQrVector()
      server.reply(ok(thaiQrCreated, 'trace-qr'))
      const result = expectRight(await clientFor().createDirectPayment(request)())

      const [req] = server.requests
      expect(req?.method).toBe('POST')
      expect(JSON.parse(req?.body ?? '')).toEqual(vector.fields)
      expect(req?.headers['sign']).toBe(vector.signature)
      expect(result.data).toMatchObject({ order_status: 'WP', qr_code: thaiQrCreated.qr_code, qr_code_expire_sec: '600' })
      expect(result.traceId).toBe('trace-qr')
    })

    it('queries a payment: GET with exactly the four parameters, signed; the record decoded', async () => {
      const record = { ...thaiQrCreated, order_status: 'PS', order_desc: 'Coffee beans 1kg', complete_time: '2026-01-01 10:02:00' }
      server.reply(ok(record, 'trace-pq'))
      const result = expectRight(await clientFor().queryPayment({ merchant_id: MERCHANT, merchant_order_id: 'ORD-2026-0001' })())

      const [req] = server.requests
      if (req === undefined) throw new Error('no request')
      expect(req.method).toBe('GET')
      expect(req.query).toEqual({ version: 'v1', service: 'svc.payment.query', merchant_id: MERCHANT, merchant_order_id: 'ORD-2026-0001' })
      expect(merchantVerifier.verify(req.query, String(req.headers['sign']))).toEqual({ valid: true })
      expect(result.data).toMatchObject({ order_status: 'PS', complete_time: '2026-01-01 10:02:00' })
    })

    it('an invalid direct payment reports every violation of the real codec and is never sent', async () => {
      const { request } = thaiQrVector()
      const error = expectLeft(await clientFor().createDirectPayment({ ...request, merchant_id: '99', order_amount: '1.234', payment_method: 'DEEPLINK' })())
      expect(error._tag).toBe('ValidationFailed')
      if (error._tag !== 'ValidationFailed') return
      expect(error.violations.map((v) => v.path)).toEqual(expect.arrayContaining(['merchant_id', 'order_amount', 'payment_method']))
      await sleepMs(50)
      expect(server.requests).toHaveLength(0)
    })

    it('a THAI_QR create that times out is OutcomeUnknown with its merchant_order_id, sent once', async () => {
      const { request } = thaiQrVector()
      server.reply({ kind: 'hang' })
      const error = expectLeft(await clientFor().createDirectPayment(request)())
      expect(error).toMatchObject({ _tag: 'OutcomeUnknown', operation: 'directPayment', service: 'svc.thaiqr.pay', merchantOrderId: 'ORD-2026-0001', reason: 'timeout' })
      await sleepMs(300)
      expect(server.requests).toHaveLength(1)
    })

    it('a subscription create that gets 502 is OutcomeUnknown with its merchant_subscribe_id', async () => {
      server.reply({ kind: 'raw', status: 502, body: 'bad gateway' })
      const error = expectLeft(
        await clientFor().createSubscription({ ...subscription, customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' } })(),
      )
      expect(error).toMatchObject({ _tag: 'OutcomeUnknown', service: 'svc.recurring.create', merchantSubscribeId: 'SUB-2026-0001', reason: 'http_5xx' })
      expect(server.requests).toHaveLength(1)
    })

    it('applies a checkout and returns the link_url', async () => {
      server.reply(ok({ ...thaiQrCreated, order_status: 'PI', link_url: 'https://pay.example/checkout/abc', qr_code: undefined, qr_code_expire_sec: undefined }))
      const result = expectRight(
        await clientFor().applyCheckout({
          merchant_id: MERCHANT,
          merchant_order_id: 'ORD-2026-0002',
          order_amount: '250.50',
          order_currency: 'THB',
          order_desc: 'Tea',
          customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
        })(),
      )
      expect(result.data.link_url).toBe('https://pay.example/checkout/abc')
      expect(JSON.parse(server.requests[0]?.body ?? '')).toMatchObject({ version: 'v1', service: 'svc.checkout.apply' })
    })

    it('updates and cancels a subscription (commands); cancel has no data', async () => {
      server.reply(
        ok({ merchant_id: MERCHANT, merchant_subscribe_id: 'SUB-2026-0001', recurring_bill_id: 'RB01', recurring_bill_status: 'ACTIVE', link_url: 'https://pay.example/s' }),
        { kind: 'json', body: envelope({ traceId: 'trace-cancel' }) },
      )
      const client = clientFor()
      expect(expectRight(await client.updateSubscription(subscription)()).data.recurring_bill_status).toBe('ACTIVE')
      const cancelled = expectRight(await client.cancelSubscription({ merchant_id: MERCHANT, merchant_subscribe_id: 'SUB-2026-0001' })())
      expect(cancelled.data).toBeNull()
      expect(server.requests.map((r) => serviceOf(r.body))).toEqual(['svc.recurring.update', 'svc.recurring.cancel'])
    })

    it('a refund query answered with a business error is GatewayRejected, not retried', async () => {
      server.reply({ kind: 'json', body: envelope({ code: 404001, message: 'Refund not found', traceId: 'trace-rnf' }) })
      const error = expectLeft(await clientFor().queryRefund({ merchant_id: MERCHANT, merchant_refund_id: 'RF-1' })())
      expect(error).toMatchObject({ _tag: 'GatewayRejected', code: 404001, message: 'Refund not found', traceId: 'trace-rnf' })
      expect(server.requests).toHaveLength(1)
      expect(server.requests[0]?.query).toEqual({ version: 'v1', service: 'svc.refund.query', merchant_id: MERCHANT, merchant_refund_id: 'RF-1' })
    })
  })

  describe('logging', () => {
    it('logs service, ids, trace_id, attempts, duration and outcome, never the signature or payer data', async () => {
      const lines: string[] = []
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''))
          done()
        },
      })
      const log = makeLogger({ level: 'debug' }, sink)
      server.reply({ kind: 'raw', status: 503, body: 'busy' }, ok(created, 'trace-logged'))
      const client = clientFor({ log })
      expect(expectLeft(await client.call(thaiQrCreate, aThaiQr())())._tag).toBe('OutcomeUnknown')
      expectRight(await client.call(thaiQrCreate, aThaiQr({ merchant_order_id: 'ORD-2' }))())

      const text = lines.join('\n')
      expect(text).not.toContain('Somchai')
      const signs = server.requests.map((r) => String(r.headers['sign']))
      for (const s of signs) expect(text).not.toContain(s.slice(0, 40))

      const records = lines.map((l): unknown => JSON.parse(l))
      expect(records).toContainEqual(
        expect.objectContaining({
          component: 'gateway-client',
          service: 'svc.thaiqr.pay',
          merchantId: MERCHANT,
          merchantOrderId: 'ORD-2',
          traceId: 'trace-logged',
          attempts: 1,
          outcome: 'success',
          durationMs: expect.any(Number),
        }),
      )
      expect(records).toContainEqual(expect.objectContaining({ merchantOrderId: 'ORD-1', outcome: 'OutcomeUnknown', reason: 'http_5xx' }))
    })
  })
})
