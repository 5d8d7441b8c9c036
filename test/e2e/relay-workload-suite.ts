import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kafka as CloudEventsKafka } from 'cloudevents'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { decodeConfig } from '../../src/config.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { makeSigner, signedForm } from '../../src/domain/gateway/signing.ts'
import { readRelayStatus } from '../../src/jobs/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { startSatang, type Running } from '../../src/main.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { asCloudEventsMessage, committedValidators, schemaErrors } from '../adapters/kafka/schema-validator.ts'
import { control, GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, merchantPrivateKey, startMerchantServer, startSandbox, type MerchantServer } from '../sandbox/support.ts'
import { runCli } from '../support/cli.ts'
import { consumeTopic, kafkaSkipReason, kcatConsume, kcatSkipReason, secureListener, secureListenerSkipReason, secureRelaySettings, startTestBroker, type SecureListener, type TestBroker } from '../support/kafka.ts'
import { envWithoutSatangSettings } from '../support/process.ts'
import { checkDelivery, eventually, readWholeLog } from './relay-support.ts'

/**
 * Acceptance (issue 14): satang (in this process, relay on) on a real database, the sandbox as its
 * gateway over real HTTP, a real Kafka broker. After a workload of payments, refunds and subscriptions
 * through /v1 and the gateway's callbacks, a consumer reading the topic from the beginning receives
 * every event of the log exactly once per ce_id, in stream-revision order per key, with headers and
 * values that validate against schemas/.
 */

const log = silentLogger()

/**
 * The workload and its checks, over one listener: `plaintext` (the test broker's PLAINTEXT listener), or
 * `secure` (its SASL_SSL listener with SCRAM-SHA-512: the relay and the consumer both connect with the
 * CA file and the SCRAM password file). The checks are the same for both.
 */
export const describeRelayWorkload = async (listener: 'plaintext' | 'secure'): Promise<void> => {
  const skipReason = listener === 'secure' ? secureListenerSkipReason() : await kafkaSkipReason()
  if (skipReason !== undefined) console.info(`Kafka relay workload test${listener === 'secure' ? ' over SASL_SSL' : ''} skipped: ${skipReason}`)
  const secure: SecureListener | undefined = listener === 'secure' ? secureListener() : undefined

  const TOKEN = 'relay-workload-token-0123456789'
  const topic = `satang.test.workload.${randomUUID().slice(0, 8)}`
  let broker: TestBroker
  let dir: string
  let db: Awaited<ReturnType<typeof freshDatabase>>
  let sandbox: Sandbox
  let merchant: MerchantServer
  let satang: Running
  let pool: Pool
  let store: EventStore

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await fetch(`${satang.httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: res.status, json: (await res.json()) as Record<string, unknown> }
  }

  const checkout = async (id: string, amount: string): Promise<string> => {
    const r = await api('POST', '/v1/checkouts', {
      merchant_order_id: id,
      order_amount: amount,
      order_currency: 'THB',
      order_desc: 'Rice cooker',
      customer: { merchant_user_id: 'u-42', full_name: 'Malee Sukjai', phone: '0812345678' },
      notify_url: `${merchant.url}/notify`,
      redirect_url: `${merchant.url}/return`,
    })
    expect(r.status, JSON.stringify(r.json)).toBe(201)
    return String(r.json['gateway_order_id'])
  }

  /** The first value of `key` anywhere in a JSON answer. */
  const find = (u: unknown, key: string): unknown => {
    if (typeof u !== 'object' || u === null) return undefined
    if (key in u) return (u as Record<string, unknown>)[key]
    for (const v of Object.values(u)) {
      const found = find(v, key)
      if (found !== undefined) return found
    }
    return undefined
  }

  describe.skipIf(skipReason !== undefined)(`the Kafka relay inside satang up, after a workload through /v1 and callbacks${listener === 'secure' ? ' (SASL_SSL, SCRAM-SHA-512)' : ''}`, () => {
    beforeAll(async () => {
      broker = secure === undefined ? await startTestBroker() : { brokers: secure.brokers, stop: () => Promise.resolve() }
      dir = mkdtempSync(join(tmpdir(), 'satang-relay-'))
      db = await freshDatabase('relaywork')
      sandbox = await startSandbox()
      merchant = await startMerchantServer()
      writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
      writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
      const config = decodeConfig({
        SATANG_DATABASE_URL: db.url,
        SATANG_GATEWAY_BASE_URL: sandbox.url,
        SATANG_MERCHANT_ID: MERCHANT_ID,
        SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
        SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
        SATANG_HTTP_PORT: '0',
        SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read+audit`,
        SATANG_DATA_DIR: dir,
        SATANG_LOG_LEVEL: 'silent',
        SATANG_KAFKA_BROKERS: broker.brokers.join(','),
        ...(secure === undefined ? {} : secureRelaySettings(secure)),
        SATANG_KAFKA_TOPIC: topic,
        SATANG_KAFKA_TOPIC_PARTITIONS: '3',
      })
      if (E.isLeft(config)) throw new Error(JSON.stringify(config.left))
      satang = await startSatang(config.right, log, { allowSuperuser: true })
      pool = makePostgresPool({ url: db.url, poolMax: 4 }, log)
      store = makePostgresEventStore({ pool, log }, { schema: 'eventstore' })

      // Payments: paid (one notification delivered twice), failed, left open; a forged notification.
      const paid = [await checkout('KAFKA-1', '420'), await checkout('KAFKA-2', '99.50'), await checkout('KAFKA-3', '1200')]
      const failed = await checkout('KAFKA-4', '10')
      await checkout('KAFKA-5', '15')
      sandbox.notifier.setFaults({ duplicate: 1 })
      for (const id of paid) expect((await control(sandbox, 'POST', `/orders/${id}/pay`)).status).toBe(200)
      expect((await control(sandbox, 'POST', `/orders/${failed}/fail`)).status).toBe(200)
      const forged = signedForm(makeSigner(satangCanonicalV1, merchantPrivateKey), { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: 'KAFKA-5', order_id: 'nope', order_status: 'PS', order_amount: '15.00', order_currency: 'THB' })
      const rejected = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(forged) })
      expect(rejected.status).toBe(401)
      // Refunds: tracked through /v1, made at the gateway, notified.
      for (const [i, order] of [['KAFKA-1', paid[0]], ['KAFKA-3', paid[2]]] as const) {
        expect((await api('POST', '/v1/refunds', { merchant_refund_id: `KAFKA-R${String(i)}`, merchant_order_id: i })).status).toBe(201)
        expect((await control(sandbox, 'POST', '/refunds', { order_id: order, merchant_refund_id: `KAFKA-R${String(i)}`, refund_amount: '5.00' })).status).toBeLessThan(300)
      }
      // A subscription: created, authorised by the payer, charged a month later.
      const sub = await api('POST', '/v1/subscriptions', {
        merchant_subscribe_id: 'KAFKA-SUB-1',
        plan_name: 'Streaming',
        interval_type: 'MONTHLY',
        interval: '1',
        total_terms: '12',
        billing_amount: '149',
        billing_currency: 'THB',
        retry: 'Y',
        customer: { merchant_user_id: 'u-8' },
        notify_url: `${merchant.url}/notify`,
        redirect_url: `${merchant.url}/return`,
      })
      expect(sub.status, JSON.stringify(sub.json)).toBe(201)
      const bill = String(find(sub.json, 'recurring_bill_id'))
      expect((await control(sandbox, 'POST', `/subscriptions/${bill}/authorise`)).status).toBe(200)
      await sandbox.notifier.idle()
      await eventually('the subscription is active at satang', async () => find((await api('GET', '/v1/subscriptions/KAFKA-SUB-1')).json, 'status') === 'ACTIVE')
      expect((await control(sandbox, 'POST', '/clock/advance', { days: 32 })).status).toBe(200)
      await sandbox.notifier.idle()
      await eventually('the first monthly charge is recorded', async () => (await readWholeLog(store)).some((e) => e.type === 'SubscriptionCharged' && e.streamName.endsWith('KAFKA-SUB-1')))
    }, 180_000)

    afterAll(async () => {
      await satang.stop()
      await store.close()
      await pool.end()
      await sandbox.close()
      await merchant.close()
      await db.drop()
      await broker.stop()
      rmSync(dir, { recursive: true, force: true })
    })

    it('a consumer reading from the beginning gets every event exactly once per ce_id, in revision order per key, valid against schemas/', async () => {
      await eventually('the relay caught up with the log', async () => (await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)).eventsBehind === 0)
      const events = await readWholeLog(store)
      const streams = new Set(events.map((e) => e.streamName.split('-')[0]))
      // The workload's streams (the forged notification's quarantine, the refunded orders' refundable ledgers), and
      // the reconciliation runs of the scheduler inside satang up (when it has run the day before).
      expect([...streams].sort()).toEqual(expect.arrayContaining(['order', 'refund', 'subscription', 'quarantine', 'refundable']))
      expect([...streams].filter((s) => !['order', 'refund', 'subscription', 'reconciliation', 'quarantine', 'refundable'].includes(s ?? ''))).toEqual([])
      expect([...new Set(events.map((e) => e.type))]).toEqual(expect.arrayContaining(['OrderCreated', 'StatusObserved', 'NotificationReceived', 'CallbackQuarantined', 'RefundRecorded', 'SubscriptionCreated', 'SubscriptionCharged']))

      const messages = await consumeTopic(broker.brokers, topic, undefined, secure)
      const check = checkDelivery(events, messages)
      expect(check).toEqual({ eventsInLog: events.length, messages: events.length, redeliveries: 0, missing: [], outOfOrder: [], mismatched: [] })

      const validators = committedValidators()
      const byId = new Map(events.map((e) => [e.eventId, e]))
      for (const m of messages) {
        const e = byId.get(m.headers['ce_id'] ?? '')
        if (e === undefined) throw new Error(`unknown ce_id ${m.headers['ce_id'] ?? '(none)'}`)
        expect({ id: e.eventId, errors: schemaErrors(validators, 'headers.schema.json', m.headers) }).toEqual({ id: e.eventId, errors: [] })
        expect(Object.keys(m.headers).sort()).toEqual(['ce_causationid', 'ce_correlationid', 'ce_id', 'ce_satangposition', 'ce_source', 'ce_specversion', 'ce_streamrevision', 'ce_subject', 'ce_time', 'ce_type', 'content-type'])
        expect(m.headers).toMatchObject({ ce_type: `satang.${e.type}.v${String(e.schemaVersion)}`, ce_source: '/satang', ce_time: e.recordedAt.toISOString(), ce_correlationid: e.metadata.correlationId, ce_causationid: e.metadata.causationId })
        expect(m.timestamp).toBe(String(e.recordedAt.getTime()))
        const file = `${e.type}.v${String(e.schemaVersion)}.schema.json`
        expect({ id: e.eventId, type: e.type, errors: schemaErrors(validators, file, JSON.parse(m.value)) }).toEqual({ id: e.eventId, type: e.type, errors: [] })
        // A CloudEvents SDK reads the message back as the same event.
        const ce = CloudEventsKafka.toEvent(asCloudEventsMessage(m))
        expect(Array.isArray(ce)).toBe(false)
        if (!Array.isArray(ce)) expect({ id: ce.id, type: ce.type, subject: ce.subject, specversion: ce.specversion }).toEqual({ id: e.eventId, type: `satang.${e.type}.v${String(e.schemaVersion)}`, subject: e.streamName, specversion: '1.0' })
      }
      // Payer data never reaches the topic: it was redacted before it was stored.
      expect(messages.some((m) => m.value.includes('Malee') || m.value.includes('0812345678'))).toBe(false)
    })

    // A consumer of another family: kcat, on librdkafka as most clients outside the JVM are (Python's
    // confluent-kafka, Go's, PHP's, Ruby's), the tool an operator reaches for to look at the topic.
    // Over SASL_SSL it logs in with PLAIN (the relay and kafkajs with SCRAM-SHA-512): see kcatConsume.
    const kcatReason = skipReason === undefined ? kcatSkipReason() : skipReason
    if (skipReason === undefined && kcatReason !== undefined) console.info(`kcat consumer test skipped: ${kcatReason}`)
    it.skipIf(kcatReason !== undefined)(`kcat (librdkafka${listener === 'secure' ? ', SASL PLAIN over TLS' : ''}) reads the same messages as the kafkajs consumer: every ce_id once, keyed by stream, headers and values byte for byte`, async () => {
      await eventually('the relay caught up with the log', async () => (await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)).eventsBehind === 0)
      const events = await readWholeLog(store)
      const [viaKcat, viaKafkajs] = await Promise.all([kcatConsume(broker.brokers, topic, secure), consumeTopic(broker.brokers, topic, undefined, secure)])
      const headersOf = (h: ReadonlyArray<string> | undefined): Record<string, string> => Object.fromEntries(Array.from({ length: (h?.length ?? 0) / 2 }, (_, i) => [h?.[2 * i] ?? '', h?.[2 * i + 1] ?? '']))
      const asKcat = viaKcat.map((m) => ({ partition: m.partition, offset: String(m.offset), key: m.key ?? '', value: m.payload ?? '', headers: headersOf(m.headers) }))
      const asKafkajs = viaKafkajs.map((m) => ({ partition: m.partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers }))
      const order = (a: { partition: number; offset: string }, b: { partition: number; offset: string }): number => a.partition - b.partition || Number(a.offset) - Number(b.offset)
      expect(asKcat.length).toBe(events.length)
      expect([...asKcat].sort(order)).toEqual([...asKafkajs].sort(order))
      expect(new Set(asKcat.map((m) => m.headers['ce_id'])).size).toBe(events.length)
      const byId = new Map(events.map((e) => [e.eventId, e]))
      for (const m of asKcat) expect(m.key).toBe(byId.get(m.headers['ce_id'] ?? '')?.streamName)
    })

    it('/metrics and satang relay --status show the relay caught up and publishing', async () => {
      const metrics = await (await fetch(`${satang.httpUrl}/metrics`)).text()
      expect(metrics).toContain(`satang_relay_lag_events{topic="${topic}"} 0`)
      expect(metrics).toContain(`satang_relay_leader{topic="${topic}"} 1`)
      expect(metrics).toContain(`satang_relay_failing{topic="${topic}"} 0`)
      expect(metrics).toMatch(new RegExp(`satang_relay_events_published_total\\{topic="${topic.replaceAll('.', '\\.')}"\\} [1-9]`))
      const env = envWithoutSatangSettings({ SATANG_DATABASE_URL: db.url, SATANG_KAFKA_TOPIC: topic, SATANG_LOG_LEVEL: 'warn' })
      const status = await runCli(['relay', '--status', '--json'], { env })
      expect(status.code, status.stderr).toBe(0)
      expect(JSON.parse(status.stdout)).toMatchObject({ topic, state: 'publishing', events_behind: 0, seconds_behind: 0, last_error: null, standbys: 0 })
      const text = await runCli(['relay', '--status'], { env })
      expect(text.stdout).toContain('state           publishing')
      expect(text.stdout).toContain('lag             caught up')
    })
  })
}
