import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeSigner, signedForm } from '../../../src/domain/gateway/signing.ts'
import type { Sandbox } from '../../../src/sandbox/sandbox.ts'
import { satangCanonicalV1 } from '../../../src/domain/gateway/canonical.ts'
import type { Running } from '../../../src/main.ts'
import { control, gatewayPrivateKey, MERCHANT_ID, merchantPrivateKey, startMerchantServer, startSandbox, type MerchantServer } from '../../sandbox/support.ts'
import { runCli } from '../../support/cli.ts'
import { envWithoutSatangSettings } from '../../support/process.ts'
import { readmeExampleBodies } from '../../support/readme-examples.ts'
import { freshDatabase } from './database.ts'
import { startTestSatang } from './satang.ts'

/**
 * satang in this process on a real PostgreSQL database, with the sandbox (also in this process) as its
 * gateway over real HTTP: what the gateway sends back is recorded, verified, deduplicated and never
 * regressed (issue 5, acceptance 2).
 */

const TOKEN = 'recording-int-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'satang-rec-'))
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox
let merchant: MerchantServer
let satang: Running

const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${satang.httpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

type AuditEvent = { type: string; source: string; signature: { verified: boolean; reason?: string } | null; stream_revision: number; data: Record<string, unknown> }
const auditOf = async (id: string): Promise<ReadonlyArray<AuditEvent>> => {
  const r = await api('GET', `/v1/audit/order/${id}`)
  expect(r.status).toBe(200)
  return r.json['events'] as ReadonlyArray<AuditEvent>
}

const checkout = async (id: string): Promise<Record<string, unknown>> => {
  const r = await api('POST', '/v1/checkouts', {
    merchant_order_id: id,
    order_amount: '420',
    order_currency: 'THB',
    order_desc: 'Rice cooker',
    customer: { merchant_user_id: 'u-42', full_name: 'Malee Sukjai' },
    notify_url: `${merchant.url}/notify`,
    redirect_url: `${merchant.url}/return`,
  })
  expect(r.status).toBe(201)
  return r.json
}

beforeAll(async () => {
  db = await freshDatabase('rec')
  sandbox = await startSandbox()
  merchant = await startMerchantServer()
  satang = await startTestSatang({ databaseUrl: db.url, gatewayUrl: sandbox.url, dir, token: TOKEN })
})

afterAll(async () => {
  await satang.stop()
  await sandbox.close()
  await merchant.close()
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('recording against the sandbox', () => {
  it('a paid checkout: the notification is recorded once although the gateway delivered it twice', async () => {
    const created = await checkout('INT-1')
    sandbox.notifier.setFaults({ duplicate: 1 })
    const paid = await control(sandbox, 'POST', `/orders/${String(created['gateway_order_id'])}/pay`)
    expect(paid.status).toBe(200)
    await sandbox.notifier.idle()
    const deliveries = sandbox.notifier.list({ kind: 'PAYMENT' }).flatMap((n) => n.attempts).filter((a) => a.acknowledged)
    expect(deliveries.length).toBe(2)

    const events = await auditOf('INT-1')
    expect(events.map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted', 'NotificationReceived', 'StatusObserved'])
    expect(events.map((e) => e.stream_revision)).toEqual([0, 1, 2, 3, 4])
    expect(events[4]).toMatchObject({ source: 'notification', signature: { verified: true }, data: { statusCode: 'PS' } })
    // the merchant's own notify_url was not given to the gateway
    expect(merchant.at('/notify')).toHaveLength(0)
    const payment = await api('GET', '/v1/payments/INT-1')
    expect(payment.json).toMatchObject({ paid: true, status: { code: 'PS', source: 'notification' }, merchant_urls: { notify_url: `${merchant.url}/notify` } })
  })

  it('a forged notification is refused (401), changes nothing, is quarantined and not on the order it names', async () => {
    const created = await checkout('INT-2')
    // signed, but with the merchant's key instead of the gateway's
    const forged = signedForm(makeSigner(satangCanonicalV1, merchantPrivateKey), {
      notify_type: 'PAYMENT',
      merchant_id: MERCHANT_ID,
      merchant_order_id: 'INT-2',
      order_id: String(created['gateway_order_id']),
      order_status: 'PS',
      order_amount: '420.00',
      order_currency: 'THB',
    })
    const res = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(forged) })
    expect(res.status).toBe(401)
    expect(await res.text()).not.toBe('SUCCESS')
    const payment = await api('GET', '/v1/payments/INT-2')
    expect(payment.json).toMatchObject({ paid: false, status: { code: 'PI' } })
    const events = await auditOf('INT-2')
    expect(events.map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted'])
    const metrics = await (await fetch(`${satang.httpUrl}/metrics`)).text()
    expect(metrics).toContain('satang_callbacks_total{kind="notification",outcome="rejected_bad_signature"} 1')
  })

  it('a WP observed after PS does not regress the order; a query refresh agrees', async () => {
    const created = await checkout('INT-3')
    await control(sandbox, 'POST', `/orders/${String(created['gateway_order_id'])}/pay`)
    await sandbox.notifier.idle()
    const late = signedForm(makeSigner(satangCanonicalV1, gatewayPrivateKey), {
      notify_type: 'PAYMENT',
      merchant_id: MERCHANT_ID,
      merchant_order_id: 'INT-3',
      order_id: String(created['gateway_order_id']),
      order_status: 'WP',
      order_amount: '420.00',
      order_currency: 'THB',
    })
    const res = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(late) })
    expect([res.status, await res.text()]).toEqual([200, 'SUCCESS'])
    expect((await api('GET', '/v1/payments/INT-3')).json).toMatchObject({ status: { code: 'PS', final: true } })
    const refreshed = await api('GET', '/v1/payments/INT-3?refresh=true')
    expect(refreshed.json).toMatchObject({ status: { code: 'PS', final: true, source: 'notification' } })
    const types = (await auditOf('INT-3')).map((e) => e.type)
    expect(types.filter((t) => t === 'StatusObserved')).toHaveLength(2) // the notification's and the query's PS
    // the late WP notification is kept for audit, after the PS, without a status change
    const lateIndex = types.lastIndexOf('NotificationReceived')
    expect(types.slice(lateIndex)).toEqual(['NotificationReceived', 'StatusObserved'])
    expect(types.filter((t) => t === 'NotificationReceived')).toHaveLength(2)
  })

  it('satang audit prints the same trail from the event store; exit 1 when there is none, 2 on bad input', async () => {
    const env = envWithoutSatangSettings({ SATANG_DATABASE_URL: db.url, SATANG_MERCHANT_ID: MERCHANT_ID, SATANG_LOG_LEVEL: 'warn' })
    const json = await runCli(['audit', 'INT-1', '--json'], { env, cwd: dir })
    expect(json.code).toBe(0)
    const trail = JSON.parse(json.stdout) as { stream: string; events: ReadonlyArray<AuditEvent> }
    expect(trail.events.map((e) => e.type)).toEqual((await auditOf('INT-1')).map((e) => e.type))
    const byStream = await runCli(['audit', `order-${MERCHANT_ID}-INT-2`], { env, cwd: dir })
    expect(byStream.code).toBe(0)
    expect(byStream.stdout).toContain(`quarantined callbacks naming order-${MERCHANT_ID}-INT-2 (1; UNVERIFIED, not part of its history)`)
    expect(byStream.stdout).toMatch(/UNVERIFIED bad_signature {2}signature REJECTED \(.+\) {2}in quarantine-notification-\d{4}-\d{2}-\d{2}/)
    const quarantinedJson = await runCli(['audit', 'INT-2', '--json'], { env, cwd: dir })
    const withAside = JSON.parse(quarantinedJson.stdout) as { events: ReadonlyArray<AuditEvent>; quarantined: ReadonlyArray<AuditEvent> }
    expect(withAside.events.map((e) => e.type)).not.toContain('CallbackQuarantined')
    expect(withAside.quarantined).toMatchObject([{ type: 'CallbackQuarantined', signature: { verified: false }, data: { reason: 'bad_signature', claimed: { merchantOrderId: 'INT-2' } } }])
    const none = await runCli(['audit', 'NOPE', '--kind', 'refund'], { env, cwd: dir })
    expect([none.code, none.stderr]).toEqual([1, `satang: no events in stream refund-${MERCHANT_ID}-NOPE\n`])
    const bad = await runCli(['audit', 'INT-1', '--kind', 'invoice'], { env, cwd: dir })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--kind must be order, refund or subscription')
  })
})

describe('the merchant API over real HTTP: docs/merchant-api.md examples, create rules, routing (issue 11)', () => {
  it('the docs/merchant-api.md example bodies of POST /v1/payments, POST /v1/checkouts and POST /v1/subscriptions create them at the gateway as they stand', async () => {
    const bodies = readmeExampleBodies()
    for (const route of ['POST /v1/payments', 'POST /v1/checkouts']) {
      const body = bodies.get(route)
      expect(body, route).toBeDefined()
      const r = await api('POST', route.split(' ')[1] ?? '', body)
      expect([route, r.status]).toEqual([route, 201])
      expect(r.json).toMatchObject({ merchant_order_id: body?.['merchant_order_id'], request: { phase: 'accepted' } })
    }
    // The subscription's body: created at the gateway, with the link where the payer authorises it.
    const subscription = bodies.get('POST /v1/subscriptions')
    expect(subscription).toBeDefined()
    const created = await api('POST', '/v1/subscriptions', subscription)
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    expect(created.json).toMatchObject({ merchant_subscribe_id: subscription?.['merchant_subscribe_id'], status: 'CREATED', plan: { billing_amount: '299.00', total_terms: 12 } })
    expect(String(created.json['link_url'])).toContain(String(created.json['recurring_bill_id']))
  })

  it('a create in USD or of 0.00 is refused with 400 naming the field; nothing is recorded', async () => {
    const body = { ...readmeExampleBodies().get('POST /v1/payments'), merchant_order_id: 'INT-USD' }
    const usd = await api('POST', '/v1/payments', { ...body, order_currency: 'USD' })
    expect([usd.status, usd.json]).toEqual([400, { error: 'invalid_request', violations: [{ path: 'order_currency', rule: 'must be THB (the only currency the gateway uses)' }] }])
    const zero = await api('POST', '/v1/payments', { ...body, order_amount: '0.00' })
    expect([zero.status, zero.json]).toEqual([400, { error: 'invalid_request', violations: [{ path: 'order_amount', rule: 'must be more than 0' }] }])
    expect((await api('GET', '/v1/audit/order/INT-USD')).status).toBe(404)
  })

  it('a 5,000-character id is a 400 in satang\'s shape; a wrong method is 405 with Allow', async () => {
    const long = await api('GET', `/v1/payments/${'Z'.repeat(5000)}`)
    expect([long.status, long.json]).toEqual([400, { error: 'invalid_request', violations: [{ path: 'merchant_order_id', rule: 'must be at most 64 digits, letters, dash and underline' }] }])
    const wrong = await fetch(`${satang.httpUrl}/healthz`, { method: 'POST' })
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
    expect(await wrong.json()).toMatchObject({ error: 'method_not_allowed' })
  })

  it('satang audit: an id that cannot be a merchant_order_id is bad input (2); as a merchant_refund_id it is merely unknown (1)', async () => {
    const env = envWithoutSatangSettings({ SATANG_DATABASE_URL: db.url, SATANG_MERCHANT_ID: MERCHANT_ID, SATANG_LOG_LEVEL: 'warn' })
    const bad = await runCli(['audit', 'bad id/../x'], { env, cwd: dir })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^satang: <id> "bad id\/\.\.\/x" is not a merchant_order_id: it must contain only digits, letters, dash and underline; /)
    const refund = await runCli(['audit', 'bad id/../x', '--kind', 'refund'], { env, cwd: dir })
    expect([refund.code, refund.stderr]).toEqual([1, `satang: no events in stream refund-${MERCHANT_ID}-bad id/../x\n`])
  })
})
