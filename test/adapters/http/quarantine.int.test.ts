import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { satangCanonicalV1 } from '../../../src/domain/gateway/canonical.ts'
import { makeSigner, signedForm } from '../../../src/domain/gateway/signing.ts'
import { EVENT_STORE_SCHEMA, type Running } from '../../../src/main.ts'
import type { Sandbox } from '../../../src/sandbox/sandbox.ts'
import { control, gatewayPrivateKey, MERCHANT_ID, merchantPrivateKey, startSandbox } from '../../sandbox/support.ts'
import { freshDatabase } from './database.ts'
import { startTestSatang } from './satang.ts'

/**
 * Issue 17, part 1: callbacks satang cannot trust are quarantined, never written to the order they
 * name. Real PostgreSQL, satang and the sandbox over real HTTP, several concurrent clients.
 */

const TOKEN = 'quarantine-int-token-0123456789'
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox
let reader: Client
const dirs: string[] = []

const startSatang = (settings: Readonly<Record<string, string>>, databaseUrl: string = db.url): Promise<Running> => {
  const dir = mkdtempSync(join(tmpdir(), 'satang-quarantine-'))
  dirs.push(dir)
  return startTestSatang({ databaseUrl, gatewayUrl: sandbox.url, dir, token: TOKEN, settings })
}

const checkout = async (satang: Running, id: string): Promise<string> => {
  const res = await fetch(`${satang.httpUrl}/v1/checkouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ merchant_order_id: id, order_amount: '420', order_currency: 'THB', order_desc: 'Rice cooker', customer: { merchant_user_id: 'u-42' } }),
  })
  expect(res.status).toBe(201)
  const body = (await res.json()) as Record<string, unknown>
  return String(body['gateway_order_id'])
}

type Row = { readonly stream_name: string; readonly type: string }
const eventsOf = async (where: string, params: ReadonlyArray<unknown> = [], client: Client = reader): Promise<ReadonlyArray<Row>> =>
  (await client.query<Row>(`select stream_name, type from "${EVENT_STORE_SCHEMA}".events where ${where} order by position`, [...params])).rows

/** A handful of distinct forgeries of the order's PS notification: tampered fields, the merchant's key, another merchant, not JSON. */
const forgeries = (orderId: string, gatewayOrderId: string): ReadonlyArray<string> => {
  const fields = { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: orderId, order_id: gatewayOrderId, order_status: 'PS', order_amount: '420.00', order_currency: 'THB' }
  const byGateway = signedForm(makeSigner(satangCanonicalV1, gatewayPrivateKey), fields)
  return [
    JSON.stringify({ ...byGateway, order_amount: '1.00' }),
    JSON.stringify(signedForm(makeSigner(satangCanonicalV1, merchantPrivateKey), fields)),
    JSON.stringify({ ...byGateway, sign: 'AAAA' }),
    JSON.stringify(signedForm(makeSigner(satangCanonicalV1, gatewayPrivateKey), { ...fields, merchant_id: '140000000000000099' })),
    `{"notify_type":"PAYMENT","merchant_order_id":"${orderId}",`,
  ]
}

/** `total` POSTs of the bodies in turn, from `clients` concurrent clients; the statuses answered, counted. */
const flood = async (url: string, bodies: ReadonlyArray<string>, total: number, clients: number, during?: (sent: number) => Promise<void>): Promise<Map<number, number>> => {
  const statuses = new Map<number, number>()
  let next = 0
  let hook = during
  const client = async (): Promise<void> => {
    for (;;) {
      const i = next++
      if (i >= total) return
      if (hook !== undefined && i >= total / 5) {
        const h = hook
        hook = undefined
        await h(i)
      }
      const res = await fetch(`${url}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[i % bodies.length] })
      await res.arrayBuffer()
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    }
  }
  await Promise.all(Array.from({ length: clients }, client))
  return statuses
}

beforeAll(async () => {
  db = await freshDatabase('quarantine')
  sandbox = await startSandbox()
  reader = new Client({ connectionString: db.url })
  await reader.connect()
})

afterAll(async () => {
  await reader.end()
  await sandbox.close()
  await db.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('a flood of forged callbacks', () => {
  it('10,000 forgeries of one real order (5 distinct bodies, 8 concurrent clients, no rate limit): at most one quarantine event per body, nothing on the order, and its real notification is recorded during the flood', async () => {
    const satang = await startSatang({ SATANG_CALLBACK_RATE_LIMIT: '0' })
    try {
      const gatewayOrderId = await checkout(satang, 'FLOOD-1')
      const stream = `order-${MERCHANT_ID}-FLOOD-1`
      const before = await eventsOf('stream_name = $1', [stream])
      expect(before.map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted'])
      const bodies = forgeries('FLOOD-1', gatewayOrderId)
      let paidAt = -1
      const statuses = await flood(satang.httpUrl, bodies, 10_000, 8, async (sent) => {
        // The gateway's own PS notification, sent by the sandbox while the forgeries keep coming.
        paidAt = sent
        expect((await control(sandbox, 'POST', `/orders/${gatewayOrderId}/pay`)).status).toBe(200)
      })
      await sandbox.notifier.idle()
      expect(paidAt).toBeGreaterThan(0)
      // 401 for bad signatures, 200 (quarantined, acknowledged) for the other merchant, 400 for the body that is not JSON.
      expect([...statuses.keys()].sort()).toEqual([200, 400, 401])
      expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(10_000)

      const quarantined = await eventsOf(`stream_name like 'quarantine-%'`)
      expect(quarantined.length).toBeLessThanOrEqual(bodies.length)
      expect(quarantined.length).toBe(bodies.length)
      expect(new Set(quarantined.map((e) => e.type))).toEqual(new Set(['CallbackQuarantined']))
      expect(quarantined.every((e) => /^quarantine-notification-\d{4}-\d{2}-\d{2}$/.test(e.stream_name))).toBe(true)

      const after = await eventsOf('stream_name = $1', [stream])
      expect(after.map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted', 'NotificationReceived', 'StatusObserved'])
      expect(await eventsOf(`stream_name like 'order-%' and stream_name <> $1`, [stream])).toEqual([])
      const payment = await fetch(`${satang.httpUrl}/v1/payments/FLOOD-1`, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(await payment.json()).toMatchObject({ paid: true, status: { code: 'PS', source: 'notification' } })

      // The same forgeries again, another day's worth of requests later: still the same events.
      await flood(satang.httpUrl, bodies, 500, 4)
      expect(await eventsOf(`stream_name like 'quarantine-%'`)).toHaveLength(bodies.length)
    } finally {
      await satang.stop()
    }
  }, 300_000)

  it('over the rate limit unverified callbacks get 429 and are not recorded, while a verified notification from the same address is recorded', async () => {
    const satang = await startSatang({ SATANG_CALLBACK_RATE_LIMIT: '30' })
    try {
      const gatewayOrderId = await checkout(satang, 'LIMIT-1')
      const forged = JSON.stringify({ ...signedForm(makeSigner(satangCanonicalV1, merchantPrivateKey), { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: 'LIMIT-1', order_id: gatewayOrderId, order_status: 'PS', order_amount: '420.00', order_currency: 'THB' }) })
      const distinct = Array.from({ length: 200 }, (_, i) => forged.replace('"notify_type"', `"n${String(i)}":"x","notify_type"`))
      const quarantinedBefore = (await eventsOf(`stream_name like 'quarantine-%'`)).length
      const statuses = await flood(satang.httpUrl, distinct, 200, 4)
      expect(statuses.get(401)).toBeLessThanOrEqual(30)
      expect(statuses.get(429)).toBeGreaterThanOrEqual(170)
      const limited = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: forged })
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(await limited.json()).toMatchObject({ error: 'rate_limited', message: expect.stringContaining('SATANG_CALLBACK_RATE_LIMIT') })
      expect((await eventsOf(`stream_name like 'quarantine-%'`)).length - quarantinedBefore).toBeLessThanOrEqual(30)

      // The address is over its limit, yet the gateway's signed notification goes through and is recorded.
      const real = signedForm(makeSigner(satangCanonicalV1, gatewayPrivateKey), { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: 'LIMIT-1', order_id: gatewayOrderId, order_status: 'PS', order_amount: '420.00', order_currency: 'THB' })
      const res = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(real) })
      expect([res.status, await res.text()]).toEqual([200, 'SUCCESS'])
      expect((await eventsOf('stream_name = $1', [`order-${MERCHANT_ID}-LIMIT-1`])).map((e) => e.type)).toContain('StatusObserved')
    } finally {
      await satang.stop()
    }
  }, 120_000)
})

describe('limits on bodies and fields', () => {
  it('a body over SATANG_HTTP_BODY_LIMIT is 413 naming the limit; a field over SATANG_HTTP_MAX_FIELD_LENGTH is 400 naming the field and the limit; over-long callback fields are quarantined, keeping the first SATANG_QUARANTINE_BODY_BYTES of the body with its hash and size', async () => {
    const satang = await startSatang({ SATANG_HTTP_BODY_LIMIT: '4096', SATANG_HTTP_MAX_FIELD_LENGTH: '400', SATANG_QUARANTINE_BODY_BYTES: '256' })
    try {
      const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
      const big = await fetch(`${satang.httpUrl}/v1/checkouts`, { method: 'POST', headers, body: JSON.stringify({ order_desc: 'x'.repeat(5000) }) })
      expect(big.status).toBe(413)
      expect(await big.json()).toEqual({ error: 'payload_too_large', message: 'the body is larger than 4096 bytes (SATANG_HTTP_BODY_LIMIT)', limit_bytes: 4096 })
      const bigCallback = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x: 'y'.repeat(5000) }) })
      expect(bigCallback.status).toBe(413)

      const long = await fetch(`${satang.httpUrl}/v1/checkouts`, { method: 'POST', headers, body: JSON.stringify({ merchant_order_id: 'LONG-1', order_desc: 'x'.repeat(401), customer: { merchant_user_id: 'u'.repeat(450) } }) })
      expect(long.status).toBe(400)
      expect(await long.json()).toEqual({
        error: 'invalid_request',
        violations: [
          { path: 'order_desc', rule: 'must be at most 400 characters (SATANG_HTTP_MAX_FIELD_LENGTH)' },
          { path: 'customer.merchant_user_id', rule: 'must be at most 400 characters (SATANG_HTTP_MAX_FIELD_LENGTH)' },
        ],
      })
      const longQuery = await fetch(`${satang.httpUrl}/v1/ledger/entries?merchant_order_id=${'o'.repeat(420)}`, { headers })
      expect(longQuery.status).toBe(400)
      expect(await longQuery.json()).toMatchObject({ violations: [{ path: 'query.merchant_order_id', rule: 'must be at most 400 characters (SATANG_HTTP_MAX_FIELD_LENGTH)' }] })

      const before = (await eventsOf(`stream_name like 'quarantine-%'`)).length
      const real = signedForm(makeSigner(satangCanonicalV1, gatewayPrivateKey), { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: 'LONG-2', order_id: '1', order_status: 'PS', order_amount: '1.00', order_currency: 'THB', order_desc: 'd'.repeat(600) })
      const sent = JSON.stringify(real)
      const callback = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sent })
      expect(callback.status).toBe(400)
      expect(await callback.json()).toEqual({ error: 'invalid_request', violations: [{ path: 'order_desc', rule: 'must be at most 400 characters (SATANG_HTTP_MAX_FIELD_LENGTH)' }] })
      type Kept = { reason: string; bodySha256: string; bodyBytes: number; bodyHead: string; claimed: { merchantOrderId: string } }
      const kept = await reader.query<{ data: Kept }>(`select data from "${EVENT_STORE_SCHEMA}".events where stream_name like 'quarantine-%' order by position offset $1`, [before])
      expect(kept.rows).toHaveLength(1)
      expect(kept.rows[0]?.data).toMatchObject({ reason: 'undecodable', bodySha256: createHash('sha256').update(sent).digest('hex'), bodyBytes: Buffer.byteLength(sent), claimed: { merchantOrderId: 'LONG-2' } })
      const head = kept.rows[0]?.data.bodyHead ?? ''
      expect(Buffer.byteLength(head)).toBeLessThanOrEqual(256)
      expect(head).toMatch(/^\{"notify_type":"PAYMENT",.*"order_desc":"d+$/)
    } finally {
      await satang.stop()
    }
  }, 120_000)
})

/** `name{labels} value` of a Prometheus text exposition, summed over the series that carry `labels`. */
const metricOf = async (satang: Running, name: string, labels: string): Promise<number> => {
  const text = await (await fetch(`${satang.httpUrl}/metrics`)).text()
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)
}

describe('the quarantine budget (issue 22)', () => {
  it('a flood of distinct forgeries into two satang processes stops being kept at the day budget of its kind, counted instead; the real notification is recorded during it; a restarted satang keeps to the budget and the event table stops growing', async () => {
    // A database of its own: the day's budget is the day's, whatever other tests quarantined today.
    const own = await freshDatabase('quarantinebudget')
    const client = new Client({ connectionString: own.url })
    await client.connect()
    const settings = { SATANG_CALLBACK_RATE_LIMIT: '0', SATANG_QUARANTINE_DAY_EVENTS: '40' }
    const [a, b] = await Promise.all([startSatang(settings, own.url), startSatang(settings, own.url)])
    let stopped = false
    try {
      const gatewayOrderId = await checkout(a, 'BUDGET-1')
      const fields = { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: 'BUDGET-1', order_id: gatewayOrderId, order_status: 'PS', order_amount: '420.00', order_currency: 'THB' }
      // Signed with the merchant's key (not the gateway's), each with its own 3 KB description: 1,200 distinct bodies.
      const forged = (i: number): string => JSON.stringify(signedForm(makeSigner(satangCanonicalV1, merchantPrivateKey), { ...fields, order_desc: `forged ${String(i)} ${'x'.repeat(3000)}` }))
      const bodies = Array.from({ length: 1200 }, (_, i) => forged(i))
      let paidAt = -1
      const [toA, toB] = await Promise.all([
        flood(a.httpUrl, bodies.slice(0, 600), 600, 6, async (sent) => {
          paidAt = sent
          expect((await control(sandbox, 'POST', `/orders/${gatewayOrderId}/pay`)).status).toBe(200)
        }),
        flood(b.httpUrl, bodies.slice(600), 600, 6),
      ])
      await sandbox.notifier.idle()
      expect(paidAt).toBeGreaterThan(0)
      // Every forgery answered as a bad signature, kept or not.
      expect([[...toA], [...toB]]).toEqual([[[401, 600]], [[401, 600]]])

      type Kept = { stream_name: string; callback: string; events: number; bytes: number; size: number; head: number }
      const keptRows = async (): Promise<ReadonlyArray<Kept>> =>
        (
          await client.query<Kept>(
            `select stream_name, data->>'callback' as callback, (data->'dayTotals'->0->>'events')::int as events, (data->'dayTotals'->0->>'bytes')::int as bytes,
                    octet_length(data::text) as size, octet_length(data->>'bodyHead') as head
               from "${EVENT_STORE_SCHEMA}".events where stream_name like 'quarantine-%' order by position`,
          )
        ).rows
      const kept = await keptRows()
      expect(kept).toHaveLength(40)
      expect(new Set(kept.map((k) => k.callback))).toEqual(new Set(['payment_notification']))
      // The day totals count 1…40 across both processes, with no gap and no repeat.
      expect(kept.map((k) => k.events)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
      expect(kept.every((k) => k.head <= 2048 && k.size < 4096)).toBe(true)
      expect(await metricOf(a, 'satang_quarantine_refused_total', 'kind="payment_notification"') + (await metricOf(b, 'satang_quarantine_refused_total', 'kind="payment_notification"'))).toBe(1160)

      // The gateway's own notification went through during the flood.
      const order = await eventsOf('stream_name = $1', [`order-${MERCHANT_ID}-BUDGET-1`], client)
      expect(order.map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted', 'NotificationReceived', 'StatusObserved'])
      const payment = await fetch(`${a.httpUrl}/v1/payments/BUDGET-1`, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(await payment.json()).toMatchObject({ paid: true, status: { code: 'PS', source: 'notification' } })

      // A restart: the budget is read from what is stored, not from memory.
      await Promise.all([a.stop(), b.stop()])
      stopped = true
      const c = await startSatang(settings, own.url)
      try {
        const sizeOf = async (): Promise<number> => Number((await client.query<{ n: string }>(`select pg_relation_size('"${EVENT_STORE_SCHEMA}".events')::text as n`)).rows[0]?.n)
        const [countBefore, sizeBefore] = [(await eventsOf('true', [], client)).length, await sizeOf()]
        const more = Array.from({ length: 300 }, (_, i) => forged(5000 + i))
        expect([...(await flood(c.httpUrl, more, 300, 6))]).toEqual([[401, 300]])
        expect(await keptRows()).toHaveLength(40)
        expect((await eventsOf('true', [], client)).length).toBe(countBefore)
        expect(await sizeOf()).toBeLessThanOrEqual(sizeBefore)
        expect(await metricOf(c, 'satang_quarantine_refused_total', 'kind="payment_notification"')).toBe(300)
        // Another kind has its own budget: a forged refund notification is still kept.
        const refund = await fetch(`${c.httpUrl}/callbacks/notifications`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(signedForm(makeSigner(satangCanonicalV1, merchantPrivateKey), { notify_type: 'REFUND', merchant_id: MERCHANT_ID, merchant_refund_id: 'RF-FORGED', merchant_order_id: 'BUDGET-1' })),
        })
        expect(refund.status).toBe(401)
        expect((await keptRows()).map((k) => k.callback).filter((k) => k === 'refund_notification')).toHaveLength(1)
      } finally {
        await c.stop()
      }
    } finally {
      if (!stopped) await Promise.all([a.stop(), b.stop()])
      await client.end()
      await own.drop()
    }
  }, 300_000)
})
