import * as E from 'fp-ts/lib/Either.js'
import { afterEach, describe, expect, it } from 'vitest'
import { MERCHANT_ID, signedByGateway } from '../../application/support.ts'
import { bearer, makeTestApi, type TestApi } from './support.ts'

const checkout = {
  merchant_order_id: 'WEB-1',
  order_amount: '100',
  order_currency: 'THB',
  order_desc: 'Tea',
  customer: { merchant_user_id: 'u-1' },
  redirect_url: 'https://shop.example/return',
}

const applyAnswer = E.right({
  merchant_id: MERCHANT_ID,
  merchant_order_id: 'WEB-1',
  order_id: '261121000000000001',
  order_status: 'PI',
  order_amount: '100.00',
  order_currency: 'THB',
  create_time: '2026-11-21 10:00:00',
  link_url: 'https://gw.example/checkout/1',
})

let api: TestApi
afterEach(async () => {
  await api.app.close()
})

describe('/v1 authentication and scopes', () => {
  it('no token, a malformed header or an unknown token → 401 with WWW-Authenticate; the token is never echoed', async () => {
    api = makeTestApi()
    for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer not-a-known-token-at-all' }]) {
      const r = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers, payload: checkout })
      expect(r.statusCode).toBe(401)
      expect(r.headers['www-authenticate']).toBe('Bearer realm="satang"')
      expect(r.json()).toMatchObject({ error: 'unauthorized' })
      expect(r.body).not.toContain('not-a-known-token')
    }
    expect(api.store.all()).toHaveLength(0)
  })

  it('a token without the route\'s scope → 403 naming the scope', async () => {
    api = makeTestApi()
    const cases = [
      { method: 'POST', url: '/v1/checkouts', token: 'reader', scope: 'payments:write' },
      { method: 'POST', url: '/v1/payments', token: 'auditor', scope: 'payments:write' },
      { method: 'GET', url: '/v1/payments/WEB-1', token: 'writer', scope: 'read' },
      { method: 'GET', url: '/v1/audit/order/WEB-1', token: 'reader', scope: 'audit' },
      { method: 'DELETE', url: '/v1/subscriptions/S-1', token: 'reader', scope: 'payments:write' },
    ] as const
    for (const c of cases) {
      const r = await api.app.inject({ method: c.method, url: c.url, headers: bearer(c.token), ...(c.method === 'POST' ? { payload: checkout } : {}) })
      expect(r.statusCode, `${c.method} ${c.url}`).toBe(403)
      expect(r.json()).toMatchObject({ error: 'forbidden', required_scope: c.scope })
    }
  })

  it('the right scope passes', async () => {
    api = makeTestApi()
    api.gateway.answer('applyCheckout', applyAnswer)
    const created = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('writer'), payload: checkout })
    expect(created.statusCode).toBe(201)
    expect(created.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect((await api.app.inject({ method: 'GET', url: '/v1/payments/WEB-1', headers: bearer('reader') })).statusCode).toBe(200)
    const audit = await api.app.inject({ method: 'GET', url: '/v1/audit/order/WEB-1', headers: bearer('auditor') })
    expect(audit.statusCode).toBe(200)
    expect(audit.json<{ events: Array<{ type: string; metadata: { actor?: string } }> }>().events.map((e) => [e.type, e.metadata.actor])).toEqual([
      ['OrderCreated', 'writer'],
      ['PaymentRequested', 'writer'],
      ['PaymentRequestAccepted', 'writer'],
    ])
  })
})

describe('/v1 input errors: 400 with every violated rule', () => {
  it('a body breaking several rules lists each, with its path', async () => {
    api = makeTestApi()
    const r = await api.app.inject({
      method: 'POST',
      url: '/v1/checkouts',
      headers: bearer('all'),
      payload: { merchant_order_id: 'bad id!', order_amount: '-1.005', order_currency: 'thb', customer: { merchant_user_id: 'u' }, surprise: true },
    })
    expect(r.statusCode).toBe(400)
    const { error, violations } = r.json<{ error: string; violations: Array<{ path: string; rule: string }> }>()
    expect(error).toBe('invalid_request')
    expect(violations.map((v) => v.path)).toEqual(['merchant_order_id', 'order_amount', 'order_amount', 'order_currency', 'order_desc', 'surprise'])
    expect(violations).toContainEqual({ path: 'order_amount', rule: 'must not be negative' })
    expect(violations).toContainEqual({ path: 'surprise', rule: 'is not a field of svc.checkout.apply' })
  })

  it('unparseable JSON, a non-object body, a form body, bad query and path values', async () => {
    api = makeTestApi()
    const bad = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: { ...bearer('all'), 'content-type': 'application/json' }, payload: '{"merchant_order_id":' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({ error: 'invalid_request', violations: [{ path: '', rule: 'body must be valid JSON' }] })
    const list = await api.app.inject({ method: 'POST', url: '/v1/payments', headers: bearer('all'), payload: [1, 2] })
    expect(list.json()).toEqual({ error: 'invalid_request', violations: [{ path: '', rule: 'must be a JSON object' }] })
    const form = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: { ...bearer('all'), 'content-type': 'application/x-www-form-urlencoded' }, payload: 'merchant_order_id=X' })
    expect(form.statusCode).toBe(415)
    const refresh = await api.app.inject({ method: 'GET', url: '/v1/payments/WEB-1?refresh=maybe', headers: bearer('all') })
    expect(refresh.json()).toEqual({ error: 'invalid_request', violations: [{ path: 'refresh', rule: 'must be true or false' }] })
    const kind = await api.app.inject({ method: 'GET', url: '/v1/audit/invoice/X', headers: bearer('all') })
    expect(kind.statusCode).toBe(400)
    expect((await api.app.inject({ method: 'GET', url: '/v1/audit/order/NOPE', headers: bearer('all') })).statusCode).toBe(404)
    expect((await api.app.inject({ method: 'GET', url: '/v1/nothing-here', headers: bearer('all') })).json()).toMatchObject({ error: 'not_found' })
  })

  it('a gateway rejection is 422 with its code and trace id', async () => {
    api = makeTestApi()
    api.gateway.answer('applyCheckout', E.left({ _tag: 'GatewayRejected', operation: 'checkoutApply', code: 400002, message: 'duplicate id', traceId: 'tr-9', httpStatus: 409, retriable: false }))
    const r = await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('all'), payload: checkout })
    expect(r.statusCode).toBe(422)
    expect(r.json()).toMatchObject({ error: 'gateway_rejected', code: 400002, trace_id: 'tr-9', resource: { request: { phase: 'failed', reason: 'gateway_rejected' } } })
  })
})

describe('/callbacks', () => {
  const notification = (status: string, merchantOrderId = 'WEB-1') =>
    signedByGateway({ notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: merchantOrderId, order_id: '261121000000000001', order_status: status, order_amount: '100.00', order_currency: 'THB' })

  it('notifications: SUCCESS when recorded, 401 for a forged one, 404 for an unknown order', async () => {
    api = makeTestApi()
    api.gateway.answer('applyCheckout', applyAnswer)
    await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('all'), payload: checkout })
    const ok = await api.app.inject({ method: 'POST', url: '/callbacks/notifications', payload: notification('PS') })
    expect([ok.statusCode, ok.body]).toEqual([200, 'SUCCESS'])
    const again = await api.app.inject({ method: 'POST', url: '/callbacks/notifications', payload: notification('PS') })
    expect([again.statusCode, again.body]).toEqual([200, 'SUCCESS'])
    const forged = await api.app.inject({ method: 'POST', url: '/callbacks/notifications', payload: { ...notification('PS'), order_status: 'PF' } })
    expect(forged.statusCode).toBe(401)
    expect(forged.json()).toMatchObject({ error: 'bad_signature' })
    const unknown = await api.app.inject({ method: 'POST', url: '/callbacks/notifications', payload: notification('PS', 'NOPE') })
    expect(unknown.statusCode).toBe(404)
  })

  it('a checkout redirect form: 303 to the merchant page once recorded; a forged one gets a 400 page', async () => {
    api = makeTestApi()
    api.gateway.answer('applyCheckout', applyAnswer)
    await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('all'), payload: checkout })
    const form = signedByGateway({ merchant_id: MERCHANT_ID, merchant_order_id: 'WEB-1', order_id: '261121000000000001', order_amount: '100.00', order_status: 'PS', order_currency: 'THB' })
    const encoded = new URLSearchParams(form).toString()
    const r = await api.app.inject({ method: 'POST', url: '/callbacks/checkout-redirect', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: encoded })
    expect(r.statusCode).toBe(303)
    expect(r.headers.location).toBe('https://shop.example/return')
    const forged = await api.app.inject({
      method: 'POST',
      url: '/callbacks/checkout-redirect',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ ...form, order_amount: '1.00' }).toString(),
    })
    expect(forged.statusCode).toBe(400)
    expect(forged.headers['content-type']).toMatch(/^text\/html/)
    expect(forged.headers.location).toBeUndefined()
  })
})
