import * as t from 'io-ts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import type { DirectPaymentRequest } from '../../src/domain/gateway/direct-payment.ts'
import { decoded } from '../domain/gateway/builders.ts'
import { clientFor, control, expectLeft, expectRight, gatewayVerifier, MERCHANT_ID, startMerchantServer, startSandbox, type MerchantServer } from './support.ts'

/**
 * Acceptance: fault injection through the control API. A dropped notification is retried until it is
 * acknowledged; a duplicated one arrives twice; a reordered one arrives after the next; the gateway
 * answers 5xx, hangs or is slow on demand.
 */

let sandbox: Sandbox
let merchant: MerchantServer
let client: GatewayClient

beforeEach(async () => {
  sandbox = await startSandbox()
  merchant = await startMerchantServer()
  client = clientFor(sandbox, { requestMs: 1500 })
})
afterEach(async () => {
  client.close()
  await sandbox.close()
  await merchant.close()
})

const aPayment = (merchantOrderId: string): Omit<DirectPaymentRequest, 'version'> => ({
  service: 'svc.mobile.banking.pay',
  merchant_id: MERCHANT_ID,
  merchant_order_id: merchantOrderId,
  order_amount: '250.50',
  order_currency: 'THB',
  order_desc: 'Rice',
  payment_method: 'BANKAPP_A_NOTIFICATION',
  mobile_number: '0812345678',
  customer: { merchant_user_id: 'u-2' },
  notify_url: `${merchant.url}/notify`,
})

const createAndPay = async (merchantOrderId: string): Promise<string> => {
  const created = expectRight(await client.createDirectPayment(aPayment(merchantOrderId))())
  expect((await control(sandbox, 'POST', `/orders/${created.data.order_id}/pay`)).status).toBe(200)
  return created.data.order_id
}

const Listed = t.array(
  t.type({
    id: t.string,
    state: t.string,
    attempts: t.array(t.type({ dropped: t.boolean, duplicate: t.boolean, acknowledged: t.boolean, status: t.union([t.number, t.null]) })),
  }),
)

const listed = async (): Promise<t.TypeOf<typeof Listed>> => decoded(Listed, (await control(sandbox, 'GET', '/notifications')).json['notifications'])

const waitIdle = async (): Promise<void> => {
  expect((await control(sandbox, 'POST', '/notifications/wait', { timeoutMs: 10_000 })).status).toBe(200)
}

describe('notification faults', () => {
  it('a dropped notification is retried until acknowledged', async () => {
    expect((await control(sandbox, 'PUT', '/faults', { notifications: { drop: 2 } })).json).toMatchObject({ notifications: { drop: 2 } })
    const orderId = await createAndPay('DROP-1')
    await waitIdle()

    const received = merchant.at('/notify')
    expect(received).toHaveLength(1)
    expect(received[0]?.fields).toMatchObject({ order_id: orderId, order_status: 'PS', notify_type: 'PAYMENT' })
    const [n] = await listed()
    expect(n?.state).toBe('delivered')
    expect(n?.attempts.map((a) => [a.dropped, a.acknowledged])).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ])
    // The control API shows one notification with its attempts.
    expect((await control(sandbox, 'GET', `/notifications/${n?.id ?? ''}`)).json).toMatchObject({ id: n?.id, state: 'delivered' })
  })

  it('a receiver that fails is retried until it answers SUCCESS', async () => {
    merchant.acknowledge((i) => (i < 2 ? { status: 500, body: 'down' } : { status: 200, body: 'SUCCESS' }))
    await createAndPay('RETRY-1')
    await waitIdle()
    const received = merchant.at('/notify')
    expect(received).toHaveLength(3)
    // The same signed notification every time.
    expect(new Set(received.map((r) => r.fields['sign'])).size).toBe(1)
    const [n] = await listed()
    expect(n?.attempts.map((a) => a.status)).toEqual([500, 500, 200])
  })

  it('a duplicated notification arrives twice, identical', async () => {
    await control(sandbox, 'PUT', '/faults', { notifications: { duplicate: 1 } })
    const orderId = await createAndPay('DUP-N-1')
    await waitIdle()
    const received = merchant.at('/notify')
    expect(received).toHaveLength(2)
    expect(received[0]?.fields).toEqual(received[1]?.fields)
    expect(received[0]?.fields['order_id']).toBe(orderId)
    expect(gatewayVerifier.verify(received[1]?.fields ?? {})).toEqual({ valid: true })
    const [n] = await listed()
    expect(n?.attempts.map((a) => a.duplicate)).toEqual([false, true])
  })

  it('a reordered notification arrives after the one that follows it', async () => {
    // The held notification also goes out after maxDelayMs if none follows; the shared 100 ms is less
    // than a loaded machine can take for the next create-and-pay, and would send it first (a CI flake).
    client.close()
    await sandbox.close()
    sandbox = await startSandbox({ notifications: { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 20_000, timeoutMs: 2000 } })
    client = clientFor(sandbox, { requestMs: 1500 })
    await control(sandbox, 'PUT', '/faults', { notifications: { reorder: true } })
    const first = await createAndPay('ORDER-A')
    const second = await createAndPay('ORDER-B')
    await waitIdle()
    expect(merchant.at('/notify').map((r) => r.fields['order_id'])).toEqual([second, first])
  })

  it('DELETE /faults clears every fault', async () => {
    await control(sandbox, 'PUT', '/faults', { notifications: { drop: 5, duplicate: 5 }, gateway: { latencyMs: 10, http5xx: { count: 3 } } })
    const cleared = await control(sandbox, 'DELETE', '/faults')
    expect(cleared.json).toEqual({
      gateway: { latencyMs: 0, http5xx: { count: 0, status: 503, phase: 'before' }, hang: { count: 0, phase: 'before' }, services: [] },
      notifications: { drop: 0, duplicate: 0, reorder: false, delayMs: 0 },
    })
    expect((await control(sandbox, 'PUT', '/faults', { notifications: { drop: -1 } })).status).toBe(400)
  })
})

describe('gateway faults', () => {
  it('HTTP 5xx before processing: the client has an unknown outcome, and nothing was created', async () => {
    await control(sandbox, 'PUT', '/faults', { gateway: { http5xx: { count: 1, status: 502 } } })
    const failed = expectLeft(await client.createDirectPayment(aPayment('5XX-1'))())
    expect(failed).toMatchObject({ _tag: 'OutcomeUnknown', reason: 'http_5xx', status: 502 })
    expect(expectLeft(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: '5XX-1' })())).toMatchObject({ code: 404001 })
  })

  it('HTTP 5xx after processing: the order exists although the caller got a 5xx; a query resolves it', async () => {
    await control(sandbox, 'PUT', '/faults', { gateway: { http5xx: { count: 1, phase: 'after' }, services: ['svc.mobile.banking.pay'] } })
    expect(expectLeft(await client.createDirectPayment(aPayment('5XX-2'))())).toMatchObject({ _tag: 'OutcomeUnknown', status: 503 })
    expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: '5XX-2' })()).data.order_status).toBe('WP')
  })

  it('a hang (timeout) leaves the caller without an answer; the next request is served', async () => {
    await control(sandbox, 'PUT', '/faults', { gateway: { hang: { count: 1 } } })
    const started = Date.now()
    expect(expectLeft(await client.createDirectPayment(aPayment('HANG-1'))())).toMatchObject({ _tag: 'OutcomeUnknown', reason: 'timeout' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400)
    expectRight(await client.createDirectPayment(aPayment('HANG-2'))())
  })

  it('added latency delays every answer', async () => {
    await control(sandbox, 'PUT', '/faults', { gateway: { latencyMs: 250 } })
    const r = expectRight(await client.createDirectPayment(aPayment('SLOW-1'))())
    expect(r.timing.durationMs).toBeGreaterThanOrEqual(240)
  })
})
