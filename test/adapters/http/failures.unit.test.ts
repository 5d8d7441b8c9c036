import { Writable } from 'node:stream'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { afterEach, describe, expect, it } from 'vitest'
import type { AppendError, EventStore } from '../../../src/application/ports/event-store.ts'
import { makeLogger } from '../../../src/logger.ts'
import { makeMemoryEventStore } from '../../application/memory-event-store.ts'
import { refused } from '../../application/support.ts'
import { bearer, makeTestApi, type TestApi } from './support.ts'

/**
 * Issue 11, defect 4: a store that refuses an append as malformed is the request's doing (400 naming
 * the problem, never a retriable 503), and every 5xx the API answers is logged with its cause, without
 * payer data.
 */

const checkout = {
  merchant_order_id: 'FAIL-1',
  order_amount: '100',
  order_currency: 'THB',
  order_desc: 'Tea',
  customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee', phone: '0812345678' },
}

/** A logger whose lines the test reads (the product's logger: same redaction). */
const capture = () => {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        const parsed: unknown = line === '' ? undefined : JSON.parse(line)
        if (t.UnknownRecord.is(parsed)) lines.push(parsed)
      }
      done()
    },
  })
  return { log: makeLogger({ level: 'info' }, sink), lines, text: () => JSON.stringify(lines) }
}

/** A memory store whose appends all fail with `error`. */
const failingStore = (error: AppendError): EventStore => ({ ...makeMemoryEventStore(), append: () => () => Promise.resolve(E.left(error)) })

let api: TestApi
afterEach(async () => {
  await api.app.close()
})

describe('store failures and 5xx answers', () => {
  it('an append the store refuses as malformed (InvalidAppend, e.g. NUL for jsonb) → 400 naming the problem, not 503', async () => {
    const logs = capture()
    api = makeTestApi({ store: failingStore({ _tag: 'InvalidAppend', stream: 'order-x', reason: 'data or metadata contains text PostgreSQL jsonb cannot store (\\u0000 or a lone surrogate)' }) }, logs.log)
    const r = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('writer'), payload: checkout })
    expect(r.statusCode).toBe(400)
    expect(r.json()).toEqual({ error: 'invalid_request', violations: [{ path: '', rule: 'cannot be recorded: data or metadata contains text PostgreSQL jsonb cannot store (\\u0000 or a lone surrogate)' }] })
    expect(api.gateway.calls).toHaveLength(0)
  })

  it('the event store down → 503, logged once at error level with its cause and the route, never with payer data', async () => {
    const logs = capture()
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
    api = makeTestApi({ store: failingStore({ _tag: 'EventStoreFailure', operation: 'append', retriable: true, cause: down }), log: logs.log }, logs.log)
    const r = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('writer'), payload: checkout })
    expect(r.statusCode).toBe(503)
    expect(r.json()).toMatchObject({ error: 'unavailable', retriable: true })
    // The client's answer does not carry the cause; the log does.
    expect(r.body).not.toContain('ECONNREFUSED')
    const answered = logs.lines.filter((l) => l['msg'] !== undefined && String(l['msg']).startsWith('answered 503'))
    expect(answered).toHaveLength(1)
    expect(answered[0]).toMatchObject({ level: 50, status: 503, error: 'Unavailable', cause: 'ECONNREFUSED connect ECONNREFUSED 127.0.0.1:5432', method: 'POST', route: '/v1/checkouts', reqId: r.headers['x-request-id'] })
    expect(logs.text()).not.toContain('Somchai')
    expect(logs.text()).not.toContain('0812345678')
  })

  it('the gateway unreachable → 503 gateway_unavailable, logged with the transport failure as cause', async () => {
    const logs = capture()
    api = makeTestApi({}, logs.log)
    api.gateway.answer('applyCheckout', refused())
    const r = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('writer'), payload: checkout })
    expect(r.statusCode).toBe(503)
    expect(r.json()).toMatchObject({ error: 'gateway_unavailable', retriable: true })
    const answered = logs.lines.find((l) => String(l['msg']).startsWith('answered 503'))
    expect(answered).toMatchObject({ level: 50, error: 'GatewayUnavailable', route: '/v1/checkouts' })
    expect(String(answered?.['cause'])).toContain('refused')
    expect(logs.text()).not.toContain('Somchai')
  })

  it('a read of the store failing → 503 logged with its cause', async () => {
    const logs = capture()
    const broken: EventStore = { ...makeMemoryEventStore(), readStream: () => () => Promise.resolve(E.left({ _tag: 'EventStoreFailure', operation: 'readStream', retriable: true, cause: new Error('timeout exceeded when trying to connect') })) }
    api = makeTestApi({ store: broken }, logs.log)
    const r = await api.app.inject({ method: 'GET', url: '/v1/refunds/R-1?refresh=true', headers: bearer('reader') })
    expect(r.statusCode).toBe(503)
    expect(logs.lines.find((l) => String(l['msg']).startsWith('answered 503'))).toMatchObject({ cause: 'event store readStream failed: timeout exceeded when trying to connect', route: '/v1/refunds/:merchant_refund_id' })
  })
})
