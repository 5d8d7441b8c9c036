import * as t from 'io-ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import { makeSigner } from '../../src/domain/gateway/signing.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import type { DirectPaymentRequest } from '../../src/domain/gateway/direct-payment.ts'
import { decoded } from '../domain/gateway/builders.ts'
import {
  clientFor,
  expectLeft,
  expectRight,
  gatewayPrivateKey,
  gatewayVerifier,
  MERCHANT_ID,
  merchantSigner,
  OTHER_MERCHANT_ID,
  rawGateway,
  startSandbox,
  type RawAnswer,
} from './support.ts'

/**
 * Acceptance: unknown merchant, bad signature, invalid fields (all violations), duplicate ids, not
 * found and rate limiting each return the documented envelope (code, message, trace_id), HTTP status
 * as documented, and every response a fresh trace_id.
 */

const aPayment = (merchantOrderId: string): Omit<DirectPaymentRequest, 'version'> => ({
  service: 'svc.thaiqr.pay',
  merchant_id: MERCHANT_ID,
  merchant_order_id: merchantOrderId,
  order_amount: '100',
  order_currency: 'THB',
  order_desc: 'Coffee',
  payment_method: 'THAI_QR',
  customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
})

const aSubscription = (merchantSubscribeId: string) => ({
  merchant_id: MERCHANT_ID,
  merchant_subscribe_id: merchantSubscribeId,
  plan_name: 'Gold',
  interval_type: 'MONTHLY' as const,
  interval: '1',
  total_terms: '12',
  billing_amount: '99',
  billing_currency: 'THB',
  retry: 'Y' as const,
  customer: { merchant_user_id: 'u-1' },
})

const traceIds: string[] = []

/** The documented error envelope: integer code, message, trace_id; verified signature header. */
const expectEnvelope = (a: RawAnswer, code: number, status: number, messageStart: string): void => {
  expect(a.status).toBe(status)
  expect(a.envelope['code']).toBe(code)
  expect(String(a.envelope['message'])).toMatch(new RegExp(`^${messageStart}`))
  const traceId = String(a.envelope['trace_id'])
  expect(traceId).toMatch(/^[0-9a-f]{32}$/)
  expect(a.headers.get('x-trace-id')).toBe(traceId)
  expect(gatewayVerifier.verify(a.envelope, a.headers.get('sign') ?? '')).toEqual({ valid: true })
  traceIds.push(traceId)
}

describe('gateway errors: the documented envelope table', () => {
  let sandbox: Sandbox
  let client: GatewayClient

  beforeAll(async () => {
    sandbox = await startSandbox()
    client = clientFor(sandbox)
  })
  afterAll(async () => {
    client.close()
    await sandbox.close()
  })

  it('401001 unknown merchant (HTTP 401)', async () => {
    const rejected = expectLeft(await client.queryPayment({ merchant_id: OTHER_MERCHANT_ID, merchant_order_id: 'X' })())
    expect(rejected).toMatchObject({ _tag: 'GatewayRejected', code: 401001, httpStatus: 401 })
    const raw = await rawGateway(sandbox, 'GET', { version: 'v1', service: 'svc.payment.query', merchant_id: OTHER_MERCHANT_ID, merchant_order_id: 'X' })
    expectEnvelope(raw, 401001, 401, 'unknown merchant_id')
    expect(raw.envelope).not.toHaveProperty('data')
  })

  it('401002 bad signature: signed with another key, tampered, missing (HTTP 401)', async () => {
    const wrongKey = clientFor(sandbox, { signer: makeSigner(satangCanonicalV1, gatewayPrivateKey) })
    expect(expectLeft(await wrongKey.createDirectPayment(aPayment('SIG-1'))())).toMatchObject({ _tag: 'GatewayRejected', code: 401002, httpStatus: 401 })
    wrongKey.close()

    const fields = { version: 'v1', service: 'svc.payment.query', merchant_id: MERCHANT_ID, merchant_order_id: 'SIG-2' }
    // The merchant's own signature, over other fields than those sent.
    const tampered = await rawGateway(sandbox, 'GET', { ...fields, merchant_order_id: 'SIG-3' }, { sign: merchantSigner.sign(fields) })
    expectEnvelope(tampered, 401002, 401, 'bad signature')
    const missing = await rawGateway(sandbox, 'POST', { ...aPayment('SIG-4'), version: 'v1' }, { sign: '' })
    expectEnvelope(missing, 401002, 401, 'bad signature: header sign is missing')
    const badType = await rawGateway(sandbox, 'GET', fields, { headers: { 'sign-type': 'MD5' } })
    expectEnvelope(badType, 401002, 401, 'bad signature: header sign-type must be RSA')
    // Nothing was created by a rejected request.
    expect(sandbox.state.orderOf(MERCHANT_ID, 'SIG-1')).toBeUndefined()
  })

  it('400001 invalid parameter lists every violation, in the message and as data.violations (HTTP 400)', async () => {
    const raw = await rawGateway(sandbox, 'POST', {
      version: 'v1',
      service: 'svc.thaiqr.pay',
      merchant_id: MERCHANT_ID,
      merchant_order_id: 'BAD ID!',
      order_amount: '1.234',
      order_desc: 'Coffee',
      payment_method: 'CARD',
      customer: { merchant_user_id: 'u-1' },
      colour: 'blue',
    })
    expectEnvelope(raw, 400001, 400, 'invalid parameter: ')
    const message = String(raw.envelope['message'])
    for (const part of ['merchant_order_id: must contain only digits', 'order_amount: must have at most two decimals', 'order_currency: is required', 'payment_method: must be THAI_QR', 'colour: is not a field']) {
      expect(message).toContain(part)
    }
    const data = raw.envelope['data']
    expect(data).toMatchObject({ violations: expect.arrayContaining([{ path: 'order_currency', rule: 'is required' }]) })
    const paths = decoded(t.type({ violations: t.array(t.type({ path: t.string, rule: t.string })) }), data).violations.map((v) => v.path)
    expect(new Set(paths)).toEqual(new Set(['merchant_order_id', 'order_amount', 'order_currency', 'payment_method', 'colour']))
  })

  it('400001 for an unknown service, a body that is not JSON, a repeated query parameter', async () => {
    const unknown = await rawGateway(sandbox, 'POST', { version: 'v1', service: 'svc.teleport.pay', merchant_id: MERCHANT_ID })
    expectEnvelope(unknown, 400001, 400, 'invalid parameter: service: must be svc.wallet_a.offline.pay')
    const form = await fetch(sandbox.gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'merchant_id=1' })
    expect(form.status).toBe(400)
    expect(await form.json()).toMatchObject({ code: 400001, message: 'invalid parameter: the body must be JSON (Content-Type: application/json)' })
    const broken = await fetch(sandbox.gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"merchant_id":' })
    expect(broken.status).toBe(400)
    expect(await broken.json()).toMatchObject({ code: 400001 })
    const url = `${sandbox.gatewayUrl}?version=v1&service=svc.payment.query&merchant_id=${MERCHANT_ID}&merchant_order_id=A&merchant_order_id=B`
    const repeated = await fetch(url)
    expect(repeated.status).toBe(401) // a list is not what was signed: authentication fails first
  })

  it('400002 duplicate merchant_order_id and merchant_subscribe_id (HTTP 409)', async () => {
    expectRight(await client.createDirectPayment(aPayment('DUP-1'))())
    expect(expectLeft(await client.createDirectPayment(aPayment('DUP-1'))())).toMatchObject({ _tag: 'GatewayRejected', code: 400002, httpStatus: 409 })
    const checkout = { merchant_id: MERCHANT_ID, merchant_order_id: 'DUP-1', order_amount: '100', order_currency: 'THB', order_desc: 'Coffee', customer: {} }
    expect(expectLeft(await client.applyCheckout(checkout)())).toMatchObject({ code: 400002 })
    const raw = await rawGateway(sandbox, 'POST', { ...aPayment('DUP-1'), version: 'v1' })
    expectEnvelope(raw, 400002, 409, 'duplicate id: merchant_order_id DUP-1 already exists')

    expectRight(await client.createSubscription(aSubscription('SUB-DUP'))())
    expect(expectLeft(await client.createSubscription(aSubscription('SUB-DUP'))())).toMatchObject({ code: 400002, httpStatus: 409 })
  })

  it('404001 not found: payment, refund, subscription (HTTP 404)', async () => {
    expect(expectLeft(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'NOPE' })())).toMatchObject({ code: 404001, httpStatus: 404 })
    expect(expectLeft(await client.queryRefund({ merchant_id: MERCHANT_ID, merchant_refund_id: 'NOPE' })())).toMatchObject({ code: 404001 })
    expect(expectLeft(await client.cancelSubscription({ merchant_id: MERCHANT_ID, merchant_subscribe_id: 'NOPE' })())).toMatchObject({ code: 404001 })
    const raw = await rawGateway(sandbox, 'GET', { version: 'v1', service: 'svc.payment.query', merchant_id: MERCHANT_ID, merchant_order_id: 'NOPE' })
    expectEnvelope(raw, 404001, 404, 'not found: no order with merchant_order_id NOPE')
  })

  it('429001 rate limited, with Retry-After (HTTP 429), per merchant_id', async () => {
    const limited = await startSandbox({ rateLimit: { perSecond: 1, burst: 2 } })
    try {
      const fields = { version: 'v1', service: 'svc.payment.query', merchant_id: MERCHANT_ID, merchant_order_id: 'RL' }
      const answers = [await rawGateway(limited, 'GET', fields), await rawGateway(limited, 'GET', fields), await rawGateway(limited, 'GET', fields)]
      expect(answers.map((a) => a.envelope['code'])).toEqual([404001, 404001, 429001])
      const third = answers[2]
      if (third === undefined) throw new Error('no third answer')
      expectEnvelope(third, 429001, 429, 'rate limited: try again in')
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      const viaClient = clientFor(limited)
      expect(expectLeft(await viaClient.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'RL' })())).toMatchObject({ code: 429001, httpStatus: 429 })
      viaClient.close()
    } finally {
      await limited.close()
    }
  })

  it('gives every response a fresh trace_id, successes included', async () => {
    const a = expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'DUP-1' })())
    const b = expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'DUP-1' })())
    traceIds.push(a.traceId, b.traceId)
    expect(traceIds.length).toBeGreaterThan(10)
    expect(new Set(traceIds).size).toBe(traceIds.length)
  })
})
