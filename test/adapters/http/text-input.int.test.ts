import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import * as t from 'io-ts'
import { Client, Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeSigner, signedForm } from '../../../src/domain/gateway/signing.ts'
import type { Sandbox } from '../../../src/sandbox/sandbox.ts'
import { TrackRefundRequest } from '../../../src/application/refunds.ts'
import { satangCanonicalV1 } from '../../../src/domain/gateway/canonical.ts'
import { CheckoutApplyRequest } from '../../../src/domain/gateway/checkout.ts'
import { DIRECT_PAYMENT_METHODS } from '../../../src/domain/gateway/direct-payment-methods.ts'
import { DIRECT_CONDITIONAL_FIELDS, DirectPaymentRequest } from '../../../src/domain/gateway/direct-payment.ts'
import { PaymentNotification, RefundNotification, SubscriptionNotification } from '../../../src/domain/gateway/notification.ts'
import { CheckoutRedirectForm, SubscriptionRedirectForm } from '../../../src/domain/gateway/redirect-forms.ts'
import type { DirectService } from '../../../src/domain/gateway/services.ts'
import { SubscriptionCreateRequest, SubscriptionUpdateRequest } from '../../../src/domain/gateway/subscription.ts'
import { escapeRefusedCharacters, isCleanText } from '../../../src/domain/gateway/text-rules.ts'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import { AckBody } from '../../../src/adapters/http/reconciliation-routes.ts'
import type { EventStore } from '../../../src/application/ports/event-store.ts'
import { breakStreamName } from '../../../src/domain/reconciliation/stream.ts'
import { silentLogger } from '../../../src/logger.ts'
import { EVENT_STORE_SCHEMA, READ_MODEL_SCHEMA, type Running } from '../../../src/main.ts'
import { projectionCaughtUp } from '../../../src/projections/catch-up.ts'
import { appendOpenBreaks } from '../../support/open-breaks.ts'
import { aDirectPayment } from '../../domain/gateway/builders.ts'
import { anyKey, anyText, dotted, HOSTILE_CHARACTERS, nearly, textFieldsOf, valueAt, withValueAt, type TextField } from '../../support/text-fields.ts'
import { gatewayPrivateKey, MERCHANT_ID, startSandbox } from '../../sandbox/support.ts'
import { freshDatabase } from './database.ts'
import { startTestSatang } from './satang.ts'

/**
 * Issue 11, defect 4: every text field of every request and callback codec, through the real HTTP API
 * on real PostgreSQL, with the sandbox as the gateway behind a proxy that keeps every request it
 * forwards. Arbitrary strings (NUL, lone surrogates, other control characters frequent) are either
 * accepted — then the gateway got them and the log holds them byte for byte (or redacted, for payer
 * data) — or refused with 400 naming the field, with nothing appended and nothing sent. No 5xx, ever.
 * A callback carrying one is quarantined: one CallbackQuarantined naming the field, in the quarantine
 * stream of its source and day and nowhere else, and an
 * answer that stops the gateway's retries. The fields are read from the codecs, not listed here.
 */

const TOKEN = 'text-input-int-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'satang-text-'))
const gatewaySigner = makeSigner(satangCanonicalV1, gatewayPrivateKey)
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox
let proxy: RecordingProxy
let satang: Running
/** Reads the event table (one connection, ended before the database is dropped). */
let reader: Client

type Fields = Record<string, unknown>
type Answer = { readonly status: number; readonly text: string; readonly headers: Headers }
type StoredEvent = { readonly position: string; readonly stream: string; readonly type: string; readonly data: Fields }

/** An HTTP proxy in front of the sandbox that keeps the body of every request it forwards. */
type RecordingProxy = { readonly url: string; readonly bodies: string[]; readonly close: () => Promise<void> }

const startRecordingProxy = async (target: string): Promise<RecordingProxy> => {
  const bodies: string[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      bodies.push(body.toString('utf8'))
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v
      fetch(`${target}${req.url ?? ''}`, { method: req.method ?? 'GET', headers, ...(body.length > 0 ? { body } : {}) })
        .then(async (r) => {
          const answer = Buffer.from(await r.arrayBuffer())
          const out: Record<string, string> = {}
          r.headers.forEach((v, k) => {
            if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) out[k] = v
          })
          res.writeHead(r.status, out).end(answer)
        })
        .catch(() => res.destroy())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('proxy: no port')
  return { url: `http://127.0.0.1:${String(address.port)}`, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

const send = async (method: string, path: string, body?: { readonly json: unknown } | { readonly form: string }): Promise<Answer> => {
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }
  let payload: string | undefined
  if (body !== undefined && 'json' in body) {
    headers['content-type'] = 'application/json'
    payload = JSON.stringify(body.json)
  } else if (body !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    payload = body.form
  }
  const res = await fetch(`${satang.httpUrl}${path}`, { method, headers, redirect: 'manual', ...(payload === undefined ? {} : { body: payload }) })
  return { status: res.status, text: await res.text(), headers: res.headers }
}

const jsonOf = (a: Answer): Fields => {
  const parsed: unknown = JSON.parse(a.text)
  if (!t.UnknownRecord.is(parsed)) throw new Error(`not a JSON object: ${a.text}`)
  return parsed
}

const created = async (path: string, body: Fields): Promise<Fields> => {
  for (const idField of ['merchant_order_id', 'merchant_subscribe_id']) if (typeof body[idField] === 'string') usedIds(idField).add(body[idField])
  const a = await send('POST', path, { json: body })
  expect(a.status, a.text).toBe(201)
  return jsonOf(a)
}

const lastPosition = async (): Promise<string> => {
  const r = await reader.query<{ p: string }>(`select coalesce(max(position), 0)::text as p from "${EVENT_STORE_SCHEMA}".events`)
  return r.rows[0]?.p ?? '0'
}

const eventsAfter = async (position: string): Promise<ReadonlyArray<StoredEvent>> => {
  const r = await reader.query<StoredEvent>(
    `select position::text as position, stream_name as stream, type, data from "${EVENT_STORE_SCHEMA}".events where position > $1::bigint order by position`,
    [position],
  )
  return r.rows
}

const isMarker = (v: unknown): boolean => t.UnknownRecord.is(v) && v['redacted'] === true

/** What a redacted payload keeps at `path`: the value, or `redacted` when a marker stands on the way. */
const keptAt = (payload: unknown, path: ReadonlyArray<string>): { readonly redacted: true } | { readonly value: unknown } => {
  let v = payload
  for (const key of path) {
    if (isMarker(v)) return { redacted: true }
    v = valueAt(v, [key])
  }
  return isMarker(v) ? { redacted: true } : { value: v }
}

const expectKept = (payload: unknown, path: ReadonlyArray<string>, value: string, what: string): void => {
  const kept = keptAt(payload, path)
  if ('value' in kept) expect(kept.value, `${what} keeps ${dotted(path)} byte for byte`).toBe(value)
}

const violationsOf = (a: Answer): ReadonlyArray<{ readonly path: string; readonly rule: string }> => {
  const v = jsonOf(a)['violations']
  return t.array(t.type({ path: t.string, rule: t.string })).is(v) ? v : []
}

/** Near-valid values of fields the baselines leave out, so that some of those are accepted too. */
const SAMPLES: Readonly<Record<string, string>> = {
  store_id: '140000000000000777',
  unit_price: '10.00',
  quantity: '2',
  start_date: '2031-01-31',
  create_time: '2026-01-01 10:00:00',
  complete_time: '2026-01-01 10:05:00',
  order_create_time: '2026-01-01 10:00:00',
  due_date: '2026-01-02 10:00:00',
  remote_ip: '203.0.113.7',
  email: 'somchai@example.com',
  billing_amount: '99.00',
  billing_currency: 'THB',
  type: 'Created',
}

const valueFor = (baseline: Fields, path: ReadonlyArray<string>): fc.Arbitrary<string> => {
  const current = valueAt(baseline, path)
  const sample = typeof current === 'string' ? current : SAMPLES[path[path.length - 1] ?? '']
  return sample === undefined ? anyText : fc.oneof(anyText, nearly(sample))
}

type Run = { readonly path: ReadonlyArray<string>; readonly value: string }

/**
 * The runs of one codec: each field once with a hostile character, then the `also` runs (fast-check
 * examples, so each runs every time), then `numRuns` random fields and strings.
 */
const property = async (codec: t.Decoder<unknown, unknown>, baseline: (field: TextField) => Fields, check: (run: Run) => Promise<void>, numRuns: number, also: ReadonlyArray<Run> = []): Promise<void> => {
  const fields = textFieldsOf(codec)
  const pathOf = (field: TextField, key: string): ReadonlyArray<string> => (field.kind === 'declared' ? field.path : [...field.path, key])
  const runs = fc
    .constantFrom(...fields)
    .chain((field) => fc.tuple(anyKey, fc.constant(field)))
    .chain(([key, field]) => valueFor(baseline(field), pathOf(field, key)).map((value): Run => ({ path: pathOf(field, key), value })))
  const hostile = fields.map((field, i): Run => ({ path: pathOf(field, `extra_${String(i)}`), value: `a${HOSTILE_CHARACTERS[i % HOSTILE_CHARACTERS.length] ?? ''}b` }))
  const examples = [...hostile, ...also].map((run): [Run] => [run])
  // The examples count as runs: every field once, then `numRuns` random ones.
  await fc.assert(fc.asyncProperty(runs, check), { numRuns: examples.length + numRuns, examples, endOnFailure: true })
}

let sequence = 0
const nextId = (prefix: string): string => `${prefix}-${String(++sequence)}`

// ---- requests ---------------------------------------------------------------------------------

/** Where an accepted request keeps each field: the request event's wire payload, the merchant's own URLs aside. */
type RequestRoute = {
  readonly method: string
  readonly path: string
  readonly body: (field: TextField) => Fields
  /** The field that names the resource: a value used before may be answered as a replay (200) or a conflict (409). */
  readonly idField: string
  /** Whether an accepted request is sent to the gateway. */
  readonly sent: boolean
  readonly expectStored: (events: ReadonlyArray<StoredEvent>, run: Run) => void
}

const WIRE_REPLACED: Readonly<Record<string, string>> = { notify_url: 'notifyUrl', redirect_url: 'redirectUrl' }

const storedInRequest = (requestType: string, urlsFrom: string) => (events: ReadonlyArray<StoredEvent>, run: Run) => {
  const requested = events.filter((e) => e.type === requestType).at(-1)
  expect(requested, `${requestType} appended`).toBeDefined()
  const top = run.path[0] ?? ''
  const merchantUrl = WIRE_REPLACED[top]
  if (merchantUrl !== undefined && run.path.length === 1) {
    const urls = events.find((e) => e.type === urlsFrom)?.data['merchantUrls']
    expect(valueAt(urls, [merchantUrl]), `${urlsFrom} keeps ${top}`).toBe(run.value)
    return
  }
  expectKept(requested?.data['request'], run.path, run.value, requestType)
}

/**
 * Ids already used, by the field that holds them: payments and checkouts share merchant_order_id, so a
 * checkout whose id was changed into one a payment used is a replay or conflict too. Resources the test
 * creates itself (`created`) are in it as well.
 */
const used = new Map<string, Set<string>>()
const usedIds = (idField: string): Set<string> => {
  const found = used.get(idField)
  if (found !== undefined) return found
  const fresh = new Set<string>()
  used.set(idField, fresh)
  return fresh
}

const checkRequest = (route: RequestRoute) => async (run: Run) => {
  const body = withValueAt(route.body({ path: run.path, kind: 'declared' }), run.path, run.value)
  const before = await lastPosition()
  const sentBefore = proxy.bodies.length
  const answer = await send(route.method, route.path, { json: body })
  await sandbox.notifier.idle()
  const events = await eventsAfter(before)
  const forwarded = proxy.bodies.slice(sentBefore)
  const label = `${route.method} ${route.path} ${dotted(run.path)}=${JSON.stringify(run.value)} → ${String(answer.status)} ${answer.text.slice(0, 300)}`
  expect(answer.status, label).toBeLessThan(500)

  if (answer.status === 400) {
    expect(violationsOf(answer).map((v) => v.path), label).toContain(dotted(run.path))
    expect(events, `${label}: nothing appended`).toEqual([])
    expect(forwarded, `${label}: nothing sent`).toEqual([])
    return
  }
  const id = String(valueAt(body, [route.idField]))
  const seen = usedIds(route.idField)
  const again = seen.has(id)
  seen.add(id)
  if (again && (answer.status === 409 || (answer.status === 200 && jsonOf(answer)['replayed'] === true))) return
  // A refund tracked for an order that does not exist.
  if (answer.status === 404 && route.path === '/v1/refunds' && dotted(run.path) === 'merchant_order_id') {
    expect(events).toEqual([])
    return
  }
  // Accepted: recorded (201/200/202), or sent and refused by the gateway (422, recorded too).
  expect([200, 201, 202, 422], label).toContain(answer.status)
  route.expectStored(events, run)
  if (!route.sent) return
  const wire = forwarded.map((b): unknown => JSON.parse(b)).at(0)
  expect(wire, `${label}: sent to the gateway`).toBeDefined()
  if (WIRE_REPLACED[run.path[0] ?? ''] === undefined || run.path.length > 1) expect(valueAt(wire, run.path), `${label}: the gateway got it byte for byte`).toBe(run.value)
}

/** A direct payment that the field belongs to: conditional fields get the service and method they are allowed with. */
const directBody = (field: TextField): Fields => {
  const top = field.path[0] ?? ''
  const conditional = DIRECT_CONDITIONAL_FIELDS.find((c) => c.field === top)
  const service: DirectService = conditional?.service ?? (top === 'payment_type' || top === 'user_id' ? 'svc.wallet_a.offline.pay' : 'svc.thaiqr.pay')
  const listed: ReadonlyArray<string> = DIRECT_PAYMENT_METHODS[service]
  const method = conditional?.methods?.[0] ?? listed[0] ?? 'DEBIT_ACCOUNT'
  return aDirectPayment(service, method, { version: undefined, merchant_id: undefined, merchant_order_id: nextId('TXT-D') })
}

const checkoutBody = (): Fields => ({
  merchant_order_id: nextId('TXT-C'),
  order_amount: '420',
  order_currency: 'THB',
  order_desc: 'Rice cooker',
  customer: { merchant_user_id: 'u-42', full_name: 'Malee Sukjai' },
  notify_url: 'https://merchant.example/notify',
  redirect_url: 'https://merchant.example/return',
})

const plan = (): Fields => ({
  plan_name: 'Coffee club',
  interval_type: 'MONTHLY',
  interval: '1',
  total_terms: '12',
  billing_amount: '99.00',
  billing_currency: 'THB',
  retry: 'Y',
  plan_desc: 'One bag a month',
})

const subscriptionBody = (): Fields => ({
  ...plan(),
  merchant_subscribe_id: nextId('TXT-S'),
  customer: { merchant_user_id: 'u-7', full_name: 'Somchai Jaidee' },
  notify_url: 'https://merchant.example/sub-notify',
  redirect_url: 'https://merchant.example/sub-return',
})

let paidOrder: { readonly merchantOrderId: string; readonly gatewayOrderId: string }
let updatable: string

beforeAll(async () => {
  db = await freshDatabase('text')
  reader = new Client({ connectionString: db.url })
  await reader.connect()
  sandbox = await startSandbox()
  proxy = await startRecordingProxy(sandbox.url)
  satang = await startTestSatang({ databaseUrl: db.url, gatewayUrl: proxy.url, dir, token: TOKEN, settings: { SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read+audit+reconcile:write` } })
  const order = await created('/v1/checkouts', checkoutBody())
  paidOrder = { merchantOrderId: String(order['merchant_order_id']), gatewayOrderId: String(order['gateway_order_id']) }
  const sub = await created('/v1/subscriptions', subscriptionBody())
  updatable = String(sub['merchant_subscribe_id'])
}, 60_000)

afterAll(async () => {
  await satang.stop()
  await proxy.close()
  await sandbox.close()
  await reader.end()
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('every text field of every /v1 request body', () => {
  it('POST /v1/payments (every service and its conditional fields)', async () => {
    await property(DirectPaymentRequest, directBody, checkRequest({ method: 'POST', path: '/v1/payments', body: directBody, idField: 'merchant_order_id', sent: true, expectStored: storedInRequest('PaymentRequested', 'OrderCreated') }), 40)
  }, 120_000)

  it('POST /v1/checkouts', async () => {
    await property(CheckoutApplyRequest, checkoutBody, checkRequest({ method: 'POST', path: '/v1/checkouts', body: checkoutBody, idField: 'merchant_order_id', sent: true, expectStored: storedInRequest('PaymentRequested', 'OrderCreated') }), 30)
  }, 120_000)

  it('POST /v1/refunds', async () => {
    const body = (): Fields => ({ merchant_refund_id: nextId('TXT-R'), merchant_order_id: paidOrder.merchantOrderId })
    const expectStored = (events: ReadonlyArray<StoredEvent>, run: Run): void => {
      const tracked = events.find((e) => e.type === 'RefundTracked')
      const camel = (run.path[0] ?? '').replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())
      expect(tracked?.data[camel], `RefundTracked keeps ${dotted(run.path)}`).toBe(run.value)
    }
    await property(TrackRefundRequest, body, checkRequest({ method: 'POST', path: '/v1/refunds', body, idField: 'merchant_refund_id', sent: false, expectStored }), 15)
  }, 60_000)

  it('POST /v1/subscriptions', async () => {
    await property(
      SubscriptionCreateRequest,
      subscriptionBody,
      checkRequest({ method: 'POST', path: '/v1/subscriptions', body: subscriptionBody, idField: 'merchant_subscribe_id', sent: true, expectStored: storedInRequest('SubscriptionRequested', 'SubscriptionRequested') }),
      30,
    )
  }, 120_000)

  it('PUT /v1/subscriptions/{id}', async () => {
    const body = (): Fields => plan()
    await property(
      SubscriptionUpdateRequest,
      body,
      checkRequest({ method: 'PUT', path: `/v1/subscriptions/${updatable}`, body, idField: 'plan_name', sent: true, expectStored: storedInRequest('SubscriptionRequested', 'SubscriptionRequested') }),
      20,
    )
  }, 60_000)

  it('ids in paths and queries (payments, refunds, subscriptions, their cancel, audit, ledger): 400 naming the id or 404, never 5xx, nothing appended', async () => {
    const wellFormed = anyText.filter((s) => s !== '' && !/\p{Cs}/u.test(s))
    const routes = [
      { method: 'GET', path: (id: string) => `/v1/payments/${id}`, param: 'merchant_order_id' },
      { method: 'GET', path: (id: string) => `/v1/refunds/${id}`, param: 'merchant_refund_id' },
      { method: 'GET', path: (id: string) => `/v1/subscriptions/${id}`, param: 'merchant_subscribe_id' },
      { method: 'DELETE', path: (id: string) => `/v1/subscriptions/${id}`, param: 'merchant_subscribe_id' },
      { method: 'POST', path: (id: string) => `/v1/subscriptions/${id}/cancel`, param: 'merchant_subscribe_id' },
      { method: 'GET', path: (id: string) => `/v1/audit/order/${id}`, param: 'id' },
      { method: 'GET', path: (id: string) => `/v1/ledger/entries?merchant_order_id=${id}`, param: 'merchant_order_id' },
    ] as const
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), wellFormed, async (route, id) => {
        const before = await lastPosition()
        const answer = await send(route.method, route.path(encodeURIComponent(id)))
        const label = `${route.method} ${route.path(JSON.stringify(id))} → ${String(answer.status)} ${answer.text.slice(0, 200)}`
        expect(answer.status, label).toBeLessThan(500)
        if (answer.status === 400) expect(violationsOf(answer).map((v) => v.path), label).toContain(route.param)
        expect(await eventsAfter(before), label).toEqual([])
      }),
      { numRuns: routes.length + 40, examples: routes.map((r, i) => [r, `A${HOSTILE_CHARACTERS.filter((c) => !/\p{Cs}/u.test(c))[i] ?? ''}`]), endOnFailure: true },
    )
  }, 60_000)
})

// ---- callbacks --------------------------------------------------------------------------------

type CallbackRoute = {
  readonly path: string
  readonly form: boolean
  /** Fields of a valid callback about a fresh resource (created through the API), and the type of its evidence event. */
  readonly fresh: () => Promise<Fields>
  readonly evidence: 'NotificationReceived' | 'RedirectReceived'
  /** Fields whose change makes the callback name something satang does not know (answered 404). */
  readonly ids: ReadonlyArray<string>
  /**
   * Where a callback about something unknown is kept for reconciliation (a verified PAYMENT notification
   * about an order satang never created: the unmatched stream), or undefined when nothing is kept.
   */
  readonly unknownKeptIn?: string
}

const urlEncoded = (fields: Fields): string => new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])).toString()

const checkCallback = (route: CallbackRoute) => async (run: Run) => {
  let fields = withValueAt(await route.fresh(), run.path, run.value)
  // A form cannot carry a lone surrogate (it is sent as U+FFFD): sign and expect what the form carries.
  if (route.form) fields = Object.fromEntries(new URLSearchParams(urlEncoded(fields)))
  const field = dotted(run.path)
  const sentValue = route.form ? String(Object.entries(fields).find(([k]) => k === asFormCarriesIt(field))?.[1] ?? '') : run.value
  const signed: Fields = { ...signedForm(gatewaySigner, fields), ...(field === 'sign' || field === 'sign_type' ? { [field]: fields[field] } : {}) }
  const before = await lastPosition()
  const answer = await send('POST', route.path, route.form ? { form: urlEncoded(signed) } : { json: signed })
  await sandbox.notifier.idle()
  const events = await eventsAfter(before)
  const label = `${route.path} ${field}=${JSON.stringify(run.value)} → ${String(answer.status)} ${answer.text.slice(0, 200)} ${JSON.stringify(events.map((e) => e.type))}`
  expect(answer.status, label).toBeLessThan(500)

  const rejected = events.find((e) => e.type === 'CallbackQuarantined')
  if (rejected !== undefined) {
    // Quarantined: kept as the one CallbackQuarantined, no state change, answered so that retrying stops.
    expect(events.map((e) => e.type), label).toEqual(['CallbackQuarantined'])
    expect(rejected.stream, label).toMatch(/^quarantine-(notification|redirect)-\d{4}-\d{2}-\d{2}$/)
    const reason = rejected.data['reason']
    if (reason === 'bad_signature') expect(['sign', 'sign_type'], `${label}: only a changed sign or sign_type fails the signature`).toContain(field)
    else {
      expect(['undecodable', 'unknown_merchant'], label).toContain(reason)
      const violations = rejected.data['violations']
      const paths = t.array(t.type({ path: t.string })).is(violations) ? violations.map((v) => v.path) : []
      expect(paths, label).toContain(escapeRefusedCharacters(route.form ? asFormCarriesIt(field) : field))
    }
    if (route.form) expect(answer.status, label).toBe(400)
    else if (reason === 'bad_signature') expect(answer.status, label).toBe(401)
    else expect([answer.status, answer.text, answer.headers.get('x-satang-callback')], label).toEqual([200, 'SUCCESS', 'rejected'])
    return
  }
  if (answer.status === 404) {
    expect(route.ids, `${label}: only a changed id names something unknown`).toContain(field)
    if (route.unknownKeptIn === undefined) expect(events, label).toEqual([])
    else {
      // Still answered "not found" (the gateway delivers it again), and kept once, as it came, for reconciliation.
      expect(events.map((e) => [e.stream, e.type]), label).toEqual([[route.unknownKeptIn, route.evidence]])
      expectKept(events[0]?.data['payload'], run.path, sentValue, route.evidence)
    }
    return
  }
  // Recorded: the evidence keeps the field byte for byte (payer data redacted).
  if (route.form) expect([200, 303], label).toContain(answer.status)
  else expect([answer.status, answer.text], label).toEqual([200, 'SUCCESS'])
  const evidence = events.find((e) => e.type === route.evidence)
  expect(evidence, `${label}: ${route.evidence} appended`).toBeDefined()
  expectKept(evidence?.data['payload'], route.form ? [asFormCarriesIt(field)] : run.path, sentValue, route.evidence)
}

/** What a form does to a lone surrogate (URL encoding writes it as U+FFFD). */
const asFormCarriesIt = (s: string): string => s.replace(/\p{Cs}/gu, '\ufffd')

const freshCheckout = async (): Promise<Fields> => {
  const order = await created('/v1/checkouts', checkoutBody())
  return {
    merchant_id: MERCHANT_ID,
    merchant_order_id: order['merchant_order_id'],
    order_id: order['gateway_order_id'],
    order_status: 'PS',
    order_amount: '420.00',
    order_currency: 'THB',
    create_time: '2026-01-01 10:00:00',
  }
}

const freshSubscription = async (): Promise<Fields> => {
  const sub = await created('/v1/subscriptions', subscriptionBody())
  return {
    merchant_id: MERCHANT_ID,
    merchant_subscribe_id: sub['merchant_subscribe_id'],
    recurring_bill_id: sub['recurring_bill_id'],
    status: 'SUCCESS',
    type: 'Created',
    billing_amount: '99.00',
    billing_currency: 'THB',
  }
}

const freshRefund = async (): Promise<Fields> => ({
  notify_type: 'REFUND',
  merchant_id: MERCHANT_ID,
  merchant_refund_id: nextId('TXT-RN'),
  merchant_order_id: paidOrder.merchantOrderId,
  order_id: paidOrder.gatewayOrderId,
  // A bigint: 9e17 + n as a JS number rounds to a multiple of 128, which gave many refunds one gateway id.
  refund_order_id: (900000000000000000n + BigInt(sequence)).toString(),
  refund_amount: '0.01',
  refund_currency: 'THB',
  refund_status: 'RS',
  create_time: '2026-01-02 10:00:00',
})

describe('every text field of every callback', () => {
  // The fields' baselines come from fresh resources: fields the baseline lacks are simply added.
  const none = (): Fields => ({})

  it('payment notifications', async () => {
    const route: CallbackRoute = {
      path: '/callbacks/notifications',
      form: false,
      evidence: 'NotificationReceived',
      ids: ['merchant_order_id'],
      unknownKeptIn: `unmatched-callbacks-${MERCHANT_ID}`,
      fresh: async () => ({ notify_type: 'PAYMENT', ...(await freshCheckout()) }),
    }
    // A well-formed id of an order satang never created, every run (random ids are mostly refused as malformed).
    await property(PaymentNotification, none, checkCallback(route), 25, [{ path: ['merchant_order_id'], value: nextId('NEVER-CREATED') }])
  }, 120_000)

  it('refund notifications', async () => {
    const route: CallbackRoute = { path: '/callbacks/notifications', form: false, evidence: 'NotificationReceived', ids: [], fresh: freshRefund }
    // An id with a line break (text the gateway allows) once made every delivery of that refund a 503.
    await property(RefundNotification, none, checkCallback(route), 20, [{ path: ['merchant_refund_id'], value: nextId('RN\nline') }])
  }, 60_000)

  it('subscription notifications', async () => {
    const route: CallbackRoute = { path: '/callbacks/notifications', form: false, evidence: 'NotificationReceived', ids: ['merchant_subscribe_id'], fresh: async () => ({ notify_type: 'SUBSCRIPTION', ...(await freshSubscription()) }) }
    await property(SubscriptionNotification, none, checkCallback(route), 20)
  }, 60_000)

  it('checkout redirect forms', async () => {
    const route: CallbackRoute = { path: '/callbacks/checkout-redirect', form: true, evidence: 'RedirectReceived', ids: ['merchant_order_id'], fresh: freshCheckout }
    await property(CheckoutRedirectForm, none, checkCallback(route), 20)
  }, 60_000)

  it('subscription redirect forms', async () => {
    const route: CallbackRoute = { path: '/callbacks/subscription-redirect', form: true, evidence: 'RedirectReceived', ids: ['merchant_subscribe_id'], fresh: freshSubscription }
    await property(SubscriptionRedirectForm, none, checkCallback(route), 20)
  }, 60_000)
})

// ---- every other route that takes text ----------------------------------------------------------

/**
 * Issue 22, item 4: the same text rules beyond /v1 creates, on every route whose text reaches the log —
 * the acknowledgement of a break through the API and through the console's form (CLI: test/cli/
 * reconcile.int.test.ts) — and on every key of every JSON body. Each acknowledgement run takes an open
 * break of its own (seeded as a run detected them), so that an accepted one is seen stored.
 */
describe('every text field of every other route', () => {
  let pool: Pool
  let store: EventStore
  let openBreaks: string[] = []
  const nextBreak = (): string => {
    const id = openBreaks.shift()
    if (id === undefined) throw new Error('out of open breaks: seed more')
    return id
  }
  const REASON = 'fee agreed with the gateway'

  beforeAll(async () => {
    pool = new Pool({ connectionString: db.url, max: 2 })
    store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: EVENT_STORE_SCHEMA })
    openBreaks = [...(await appendOpenBreaks(store, MERCHANT_ID, 120))]
    expect(await projectionCaughtUp({ store, pool }, READ_MODEL_SCHEMA, 'reconciliation', 60_000)).toBe(true)
  }, 90_000)

  afterAll(async () => {
    await store.close()
    await pool.end()
  })

  /** The acknowledgement a run appended: one ReconciliationBreakAcknowledged on the break's own stream, or none. */
  const expectAcknowledged = (events: ReadonlyArray<StoredEvent>, breakId: string, reason: string, label: string): void => {
    expect(events.map((e) => [e.stream, e.type]), label).toEqual([[breakStreamName(MERCHANT_ID, breakId), 'ReconciliationBreakAcknowledged']])
    expect(events[0]?.data['reason'], `${label}: the reason stored byte for byte (trimmed)`).toBe(reason.trim())
  }

  // Every character the rules refuse once, U+009B (a C1 control terminals obey) among them.
  const hostileReasons: ReadonlyArray<Run> = [...HOSTILE_CHARACTERS, '\u009b'].map((c) => ({ path: ['reason'], value: `fee${c}agreed` }))

  it('POST /v1/reconciliation/breaks/{id}/acknowledge: 400 naming the field, or acknowledged with the reason as sent; never 5xx', async () => {
    const check = async (run: Run): Promise<void> => {
      const breakId = nextBreak()
      const body = withValueAt({ reason: REASON }, run.path, run.value)
      const before = await lastPosition()
      const answer = await send('POST', `/v1/reconciliation/breaks/${breakId}/acknowledge`, { json: body })
      const events = await eventsAfter(before)
      const label = `ack ${dotted(run.path)}=${JSON.stringify(run.value)} → ${String(answer.status)} ${answer.text.slice(0, 300)}`
      expect(answer.status, label).toBeLessThan(500)
      if (answer.status === 400) {
        expect(violationsOf(answer).map((v) => v.path), label).toContain(dotted(run.path))
        expect(events, `${label}: nothing appended`).toEqual([])
        openBreaks.push(breakId)
        return
      }
      expect(answer.status, label).toBe(200)
      expectAcknowledged(events, breakId, String(body['reason']), label)
    }
    // A key holding NUL (or another refused character) is refused wherever it is, like a value.
    const keys: ReadonlyArray<Run> = ['\u0000', '\ud800', '\u0001', '\u009b'].map((c) => ({ path: [`note${c}`], value: 'x' }))
    await property(AckBody, () => ({ reason: REASON }), check, 25, [...hostileReasons, ...keys])
  }, 120_000)

  it("the console's acknowledge form: a 400 page naming the field, or acknowledged with the reason as sent; never 5xx", async () => {
    const signIn = await fetch(`${satang.httpUrl}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: satang.httpUrl }, body: new URLSearchParams({ token: TOKEN }).toString() })
    expect(signIn.status).toBe(303)
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const page = await (await fetch(`${satang.httpUrl}/console/breaks?status=open`, { headers: { cookie } })).text()
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ''
    expect(csrf).not.toBe('')
    const check = async (run: Run): Promise<void> => {
      const breakId = nextBreak()
      const fields = withValueAt({ reason: REASON }, run.path, run.value)
      const form = new URLSearchParams([['csrf', csrf], ...Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])])
      // What the form carries (a lone surrogate is sent as U+FFFD).
      const sent = new URLSearchParams(form.toString()).get('reason') ?? ''
      const before = await lastPosition()
      const res = await fetch(`${satang.httpUrl}/console/breaks/${breakId}/acknowledge`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: satang.httpUrl, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() })
      const text = await res.text()
      const events = await eventsAfter(before)
      const label = `console ack ${dotted(run.path)}=${JSON.stringify(run.value)} → ${String(res.status)} ${text.slice(-400)}`
      expect(res.status, label).toBeLessThan(500)
      if (res.status === 400) {
        expect(text, label).toMatch(/<li>reason: /)
        expect(events, `${label}: nothing appended`).toEqual([])
        openBreaks.push(breakId)
        return
      }
      expect(res.status, label).toBe(303)
      expectAcknowledged(events, breakId, sent, label)
    }
    await property(AckBody, () => ({ reason: REASON }), check, 25, hostileReasons)
    // The break pages take the same ids and filters: never a 5xx either.
    const page404 = await fetch(`${satang.httpUrl}/console/breaks/${encodeURIComponent('A\u0000B')}`, { headers: { cookie } })
    expect(page404.status).toBe(404)
    const filtered = await fetch(`${satang.httpUrl}/console/breaks?item_id=${encodeURIComponent('A\u0000B')}`, { headers: { cookie } })
    expect(filtered.status).toBe(400)
    expect(await filtered.text()).toMatch(/<li>item_id: must not contain NUL/)
  }, 120_000)

  it('a key breaking the text rules, at any depth of any JSON body on any route: 400 naming it, nothing appended, nothing sent', async () => {
    const routes = [
      { method: 'POST', path: () => '/v1/payments', body: (): Fields => directBody({ path: [], kind: 'undeclared' }) },
      { method: 'POST', path: () => '/v1/checkouts', body: checkoutBody },
      { method: 'POST', path: () => '/v1/refunds', body: (): Fields => ({ merchant_refund_id: nextId('TXT-RK'), merchant_order_id: paidOrder.merchantOrderId }) },
      { method: 'POST', path: () => '/v1/subscriptions', body: subscriptionBody },
      { method: 'PUT', path: () => `/v1/subscriptions/${updatable}`, body: plan },
      { method: 'POST', path: () => `/v1/reconciliation/breaks/${openBreaks[0] ?? ''}/acknowledge`, body: (): Fields => ({ reason: REASON }) },
    ] as const
    const refused = fc.constantFrom('\u0000', '\ud800', '\udfff', '\u0001', '\u001b', '\u007f', '\u009b', '\u009f')
    // A lone surrogate inserted next to its other half makes a well-formed pair: those keys are left out.
    const key = fc
      .tuple(anyKey, refused, fc.nat({ max: 10 }))
      .map(([k, c, at]) => `${k.slice(0, at)}${c}${k.slice(at)}`)
      .filter((k) => !isCleanText(k))
    // Top level, inside an object the message has (customer), or inside one it does not.
    const where = fc.constantFrom<ReadonlyArray<string>>([], ['customer'], ['extra'])
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), where, key, async (route, parent, k) => {
        const path = [...parent, k]
        const body = withValueAt(route.body(), path, 'value')
        const before = await lastPosition()
        const sentBefore = proxy.bodies.length
        const answer = await send(route.method, route.path(), { json: body })
        const label = `${route.method} ${route.path()} key ${JSON.stringify(dotted(path))} → ${String(answer.status)} ${answer.text.slice(0, 300)}`
        expect(answer.status, label).toBe(400)
        expect(violationsOf(answer).map((v) => v.path), label).toContain(dotted(path))
        expect(await eventsAfter(before), label).toEqual([])
        expect(proxy.bodies.slice(sentBefore), label).toEqual([])
      }),
      { numRuns: 40, examples: routes.map((r): [(typeof routes)[number], ReadonlyArray<string>, string] => [r, [], 'a\u0000b']), endOnFailure: true },
    )
  }, 120_000)

  it('ids and filters of the reconciliation reads: 400 naming them or 404, never 5xx', async () => {
    const wellFormed = anyText.filter((s) => s !== '' && !/\p{Cs}/u.test(s))
    const routes = [
      { path: (id: string) => `/v1/reconciliation/runs/${id}`, param: 'id' },
      { path: (id: string) => `/v1/reconciliation/breaks/${id}`, param: 'id' },
      { path: (id: string) => `/v1/reconciliation/breaks?item_id=${id}`, param: 'item_id' },
      { path: (id: string) => `/v1/reconciliation/breaks/${id}/acknowledge`, param: 'break_id', method: 'POST' },
    ] as const
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), wellFormed, async (route, id) => {
        const before = await lastPosition()
        const method = 'method' in route ? route.method : 'GET'
        const answer = await send(method, route.path(encodeURIComponent(id)), method === 'POST' ? { json: { reason: REASON } } : undefined)
        const label = `${method} ${route.path(JSON.stringify(id))} → ${String(answer.status)} ${answer.text.slice(0, 200)}`
        expect(answer.status, label).toBeLessThan(500)
        if (answer.status === 400) expect(violationsOf(answer).map((v) => v.path), label).toContain(route.param)
        expect(await eventsAfter(before), label).toEqual([])
      }),
      { numRuns: routes.length + 30, examples: routes.map((r) => [r, `A\u0000B`]), endOnFailure: true },
    )
  }, 60_000)
})

describe('as_of refuses impossible calendar days with the message `satang reconcile --date` gives, and a text that is no position naming what is accepted', () => {
  it.each([
    ['2026-02-30', 'day must be 01 to 28 in 2026-02'],
    ['2026-11-31', 'day must be 01 to 30 in 2026-11'],
    ['2026-02-30T00:00:00+07:00', 'day must be 01 to 28 in 2026-02'],
    ['2026-13-01T00:00:00Z', 'month must be 01 to 12'],
    ['2026-02-28T24:00:00Z', 'hour must be 00 to 23'],
    // Shaped like a position, but not one this store makes: the rule says what is accepted, not only what this is not.
    ['yesterday', 'must be an ISO-8601 instant with its offset (2026-11-20T17:00:00+07:00) or a global log position as satang prints it ("yesterday" is neither: not a position of this event log)'],
  ])('as_of=%s → 400 "%s" on the trial balance and on a payment', async (asOf, rule) => {
    for (const path of [`/v1/ledger/balances?as_of=${encodeURIComponent(asOf)}`, `/v1/payments/${paidOrder.merchantOrderId}?as_of=${encodeURIComponent(asOf)}`]) {
      const answer = await send('GET', path)
      expect(answer.status, `${path}: ${answer.text}`).toBe(400)
      expect(violationsOf(answer), path).toContainEqual({ path: 'as_of', rule })
    }
  })
})
