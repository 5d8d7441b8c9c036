import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { control, GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, startMerchantServer, startSandbox, type MerchantServer } from '../sandbox/support.ts'
import { consumeTopic, kafkaSkipReason, startTestBroker, type TestBroker } from '../support/kafka.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'
import { hasPromtool, promtoolFindings } from './promtool.ts'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.ts'

/*
 * Issue 25, items 1-3, against `satang up` as a real process (a real sandbox gateway over HTTP, a real
 * PostgreSQL, a real Kafka broker, a real OTLP/HTTP receiver): a payment created through /v1 with the
 * merchant's own traceparent, paid by the gateway's notification and refunded. Its spans share the
 * merchant's trace id from the /v1 request to the append; the projector's and the relay's spans link to
 * it; its Kafka messages carry it as ce_traceparent. Then /metrics passes promtool with its histograms
 * and counters moved, and the access log has one line per request.
 */

const skipReason = await kafkaSkipReason()
if (skipReason !== undefined) console.info(`observability test skipped: ${skipReason}`)
const promtool = hasPromtool()
if (!promtool) console.info('promtool is not installed (apt-get install prometheus): the promtool checks are skipped')

const TOKEN = `obs-token-${randomBytes(12).toString('hex')}`
const PAYER_NAME = 'Malee Sukjai'
const PAYER_PHONE = '0812345678'

/** The value of one sample line of a /metrics text (`name{labels}` exactly as written, or a prefix match when `labels` is a RegExp). */
const sampleSum = (text: string, name: string, labels?: RegExp): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => labels === undefined || labels.test(l))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)

const waitUntil = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> => {
  const until = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe.skipIf(skipReason !== undefined).each(['http/protobuf', 'http/json'] as const)('satang up traced over OTLP %s', (protocol) => {
  const topic = `satang.test.obs.${randomUUID().slice(0, 8)}`
  const traceId = randomBytes(16).toString('hex')
  const clientSpanId = randomBytes(8).toString('hex')
  const traceparent = `00-${traceId}-${clientSpanId}-01`
  const orderId = `OBS-${randomUUID().slice(0, 8)}`
  let broker: TestBroker
  let receiver: OtlpReceiver
  let sandbox: Sandbox
  let merchant: MerchantServer
  let db: Awaited<ReturnType<typeof freshDatabase>>
  let dir: string
  let satang: SatangProcess
  let httpUrl: string
  const answered: Array<{ path: string; requestId: string }> = []
  let metricsBefore = ''
  let metricsAfter = ''
  let exitCode: number | null = null

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await fetch(`${httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    answered.push({ path, requestId: res.headers.get('x-request-id') ?? '' })
    return { status: res.status, json: (await res.json()) as Record<string, unknown> }
  }

  beforeAll(async () => {
    broker = await startTestBroker()
    receiver = await startOtlpReceiver()
    sandbox = await startSandbox()
    merchant = await startMerchantServer()
    db = await freshDatabase('obs')
    dir = mkdtempSync(join(tmpdir(), 'satang-obs-'))
    writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
    writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
    const port = await freePort()
    httpUrl = `http://127.0.0.1:${String(port)}`
    satang = startSatangProcess(['up'], {
      cwd: dir,
      env: envWithoutSatangSettings({
        SATANG_DATABASE_URL: db.url,
        SATANG_GATEWAY_BASE_URL: sandbox.url,
        SATANG_MERCHANT_ID: MERCHANT_ID,
        SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
        SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
        SATANG_HTTP_PORT: String(port),
        SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read+audit`,
        SATANG_DATA_DIR: dir,
        SATANG_LOG_LEVEL: 'info',
        SATANG_KAFKA_BROKERS: broker.brokers.join(','),
        SATANG_KAFKA_TOPIC: topic,
        SATANG_KAFKA_TOPIC_PARTITIONS: '1',
        SATANG_RECONCILE_SCHEDULER: 'off',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
        OTEL_BSP_SCHEDULE_DELAY: '200',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      }),
    })
    await satang.waitFor(/satang: up\./, 120_000)
    metricsBefore = await (await fetch(`${httpUrl}/metrics`)).text()
    expect((await fetch(`${httpUrl}/healthz`)).status).toBe(200)

    // Created with the merchant's traceparent, paid by the gateway's notification, refunded (same traceparent).
    const created = await api(
      'POST',
      '/v1/checkouts',
      {
        merchant_order_id: orderId,
        order_amount: '420',
        order_currency: 'THB',
        order_desc: 'Rice cooker',
        customer: { merchant_user_id: 'u-42', full_name: PAYER_NAME, phone: PAYER_PHONE },
        notify_url: `${merchant.url}/notify`,
        redirect_url: `${merchant.url}/return`,
      },
      { traceparent },
    )
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const gatewayOrderId = String(created.json['gateway_order_id'])
    expect((await control(sandbox, 'POST', `/orders/${gatewayOrderId}/pay`)).status).toBe(200)
    await waitUntil('the payment to be paid', async () => {
      const r = await api('GET', `/v1/payments/${orderId}`, undefined, { traceparent })
      return JSON.stringify(r.json).includes('"paid"') || JSON.stringify(r.json).includes('"success"') ? true : undefined
    })
    const refunded = await api('POST', '/v1/refunds', { merchant_refund_id: `${orderId}-R`, merchant_order_id: orderId }, { traceparent })
    expect(refunded.status, JSON.stringify(refunded.json)).toBe(201)
    expect((await control(sandbox, 'POST', '/refunds', { order_id: gatewayOrderId, merchant_refund_id: `${orderId}-R`, refund_amount: '5.00' })).status).toBeLessThan(300)
    // The relay and the projector have their spans once the messages are on the topic and the metrics moved.
    await waitUntil('the relay to publish the order', async () => {
      const m = await (await fetch(`${httpUrl}/metrics`)).text()
      return sampleSum(m, 'satang_relay_events_published_total') >= 3 && sampleSum(m, 'satang_relay_lag_events') === 0 ? true : undefined
    })
    metricsAfter = await (await fetch(`${httpUrl}/metrics`)).text()
    exitCode = await satang.stop('SIGTERM')
  }, 300_000)

  afterAll(async () => {
    if (exitCode === null) await satang?.stop('SIGKILL')
    await Promise.all([receiver?.close(), sandbox?.close(), merchant?.close(), broker?.stop()])
    await db?.drop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  const spans = (): ReadonlyArray<ReceivedSpan> => receiver.spans()
  const ofTrace = (id: string): ReadonlyArray<ReceivedSpan> => spans().filter((s) => s.traceId === id)

  it('stops cleanly and sends its spans in the configured encoding, named satang-all', () => {
    expect(exitCode).toBe(0)
    expect(receiver.contentTypes().length).toBeGreaterThan(0)
    for (const t of receiver.contentTypes()) expect(t).toContain(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf')
    expect(new Set(spans().map((s) => s.service))).toEqual(new Set(['satang-all']))
  })

  it('continues the merchant trace from each /v1 request to the use case, the gateway call and the append', () => {
    const mine = ofTrace(traceId)
    const names = mine.map((s) => s.name)
    expect(names).toEqual(expect.arrayContaining(['POST /v1/checkouts', 'usecase payments.create', 'gateway apply_checkout', 'append order', 'POST /v1/refunds', 'usecase refunds.track', 'GET /v1/payments/:merchant_order_id']))
    // One tree: every span's parent is the merchant's span or another span of the trace.
    const ids = new Set(mine.map((s) => s.spanId))
    for (const s of mine) expect(s.parentSpanId === clientSpanId || ids.has(s.parentSpanId), `${s.name} has a parent in the trace`).toBe(true)
    const server = mine.find((s) => s.name === 'POST /v1/checkouts')
    expect(server?.parentSpanId).toBe(clientSpanId)
    expect(server?.attributes).toMatchObject({ 'http.route': '/v1/checkouts', 'http.response.status_code': 201 })
    const gateway = mine.find((s) => s.name === 'gateway apply_checkout')
    expect(gateway?.attributes).toMatchObject({ 'satang.gateway.operation': 'apply_checkout', 'satang.gateway.outcome': 'success' })
    expect(String(gateway?.attributes['satang.gateway.trace_id'] ?? '')).not.toBe('')
    const append = mine.find((s) => s.name === 'append order')
    expect(append?.attributes['satang.stream.category']).toBe('order')
    expect(Number(append?.attributes['satang.event.count'])).toBeGreaterThan(0)
  })

  it("links the projector's batches and the relay's publishes to the merchant's trace", () => {
    const projected = spans().filter((s) => s.name.startsWith('project ') && s.links.some((l) => l.traceId === traceId))
    expect(projected.map((s) => s.name)).toEqual(expect.arrayContaining(['project orders', 'project ledger']))
    for (const s of projected) expect(s.traceId).not.toBe(traceId)
    const published = spans().filter((s) => s.name === `publish ${topic}` && s.links.some((l) => l.traceId === traceId))
    expect(published.length).toBeGreaterThan(0)
    // The links name spans that were sent: the append of the request.
    const sent = new Set(spans().map((s) => `${s.traceId}/${s.spanId}`))
    for (const l of [...projected, ...published].flatMap((s) => s.links)) expect(sent.has(`${l.traceId}/${l.spanId}`)).toBe(true)
  })

  it('puts ce_traceparent on every Kafka message of the payment: the trace of the request that caused each event', async () => {
    const messages = (await consumeTopic(broker.brokers, topic, 30_000)).filter((m) => m.key.startsWith(`order-${MERCHANT_ID}-${orderId}`))
    expect(messages.length).toBeGreaterThanOrEqual(3)
    const traces = messages.map((m) => /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/.exec(m.headers['ce_traceparent'] ?? '')?.[1])
    expect(traces.every((t) => t !== undefined)).toBe(true)
    // The create's events carry the merchant's trace; the notification's carry the trace of its callback request.
    expect(traces[0]).toBe(traceId)
    for (const t of traces) expect(ofTrace(t ?? '').some((s) => s.name === 'POST /v1/checkouts' || s.name === 'POST /callbacks/notifications' || s.name === 'POST /v1/refunds' || s.name.startsWith('GET /v1/payments'))).toBe(true)
  })

  it.skipIf(!promtool)('serves /metrics that promtool accepts, with the histograms and _total counters moving', () => {
    expect(promtoolFindings(metricsBefore)).toBe('')
    expect(promtoolFindings(metricsAfter)).toBe('')
    expect(metricsAfter).not.toMatch(/^satang_(process|nodejs)_/m)
    expect(metricsAfter).not.toMatch(/_total gauge$/m)
    expect(metricsAfter).toMatch(/^# TYPE process_cpu_seconds_total counter$/m)
    for (const [name, labels] of [
      ['satang_http_request_duration_seconds_count', /route="\/v1\/checkouts",status_class="2xx"/],
      ['satang_gateway_call_duration_seconds_count', /operation="apply_checkout",outcome="success"/],
      ['satang_eventstore_append_duration_seconds_count', /category="order",outcome="ok"/],
      ['satang_projector_batch_duration_seconds_count', /projection="orders"/],
      ['satang_relay_publish_duration_seconds_count', /outcome="ok"/],
      ['satang_relay_events_published_total', undefined],
      ['satang_projection_events_applied_total', /projection="orders"/],
      ['satang_callbacks_total', undefined],
    ] as const) {
      expect(sampleSum(metricsAfter, name, labels), name).toBeGreaterThan(sampleSum(metricsBefore, name, labels))
    }
    expect(metricsAfter).not.toContain('satang_relay_publish_rate')
  })

  it('writes one access-log line per request, none for /healthz and /metrics, and nothing secret or personal', () => {
    const lines = satang
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"component":"access"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    for (const { requestId, path } of answered) {
      const mine = lines.filter((l) => l['requestId'] === requestId)
      expect(mine.length, `${path} ${requestId}`).toBe(1)
      expect(mine[0]).toMatchObject({ level: 30, method: expect.any(String), route: expect.stringMatching(/^\/v1\//), status: expect.any(Number), durationMs: expect.any(Number), bytes: expect.any(Number) })
    }
    expect(lines.some((l) => l['route'] === '/callbacks/notifications')).toBe(true)
    expect(lines.filter((l) => l['route'] === '/healthz' || l['route'] === '/metrics')).toEqual([])
    const all = satang.stderr()
    for (const secret of [TOKEN, PAYER_NAME, PAYER_PHONE]) expect(all).not.toContain(secret)
  })
})
