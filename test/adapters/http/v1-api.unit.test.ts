import * as E from 'fp-ts/lib/Either.js'
import { afterEach, describe, expect, it } from 'vitest'
import { MERCHANT_ID, signedByGateway } from '../../application/support.ts'
import { aCreateRequest, anUpdateRequest } from '../../domain/subscription/builders.ts'
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

describe('/v1 creates: THB only and more than nothing (the gateway spec: "Currency used: THB")', () => {
  const thaiQr = { service: 'svc.thaiqr.pay', merchant_order_id: 'QR-1', order_amount: '10.00', order_currency: 'THB', order_desc: 'Tea', payment_method: 'THAI_QR', customer: { merchant_user_id: 'u-1' } }
  const THB_ONLY = 'must be THB (the only currency the gateway uses)'
  const MORE_THAN_0 = 'must be more than 0'

  it.each([
    ['/v1/payments', 'a direct payment in USD', { ...thaiQr, order_currency: 'USD' }, [{ path: 'order_currency', rule: THB_ONLY }]],
    ['/v1/payments', 'a direct payment of 0.00', { ...thaiQr, order_amount: '0.00' }, [{ path: 'order_amount', rule: MORE_THAN_0 }]],
    ['/v1/checkouts', 'a checkout in EUR of 0', { ...checkout, order_currency: 'EUR', order_amount: '0' }, [{ path: 'order_amount', rule: MORE_THAN_0 }, { path: 'order_currency', rule: THB_ONLY }]],
    ['/v1/subscriptions', 'a subscription of 0.0 JPY per cycle', aCreateRequest({ billing_amount: '0.0', billing_currency: 'JPY' }), [{ path: 'billing_amount', rule: MORE_THAN_0 }, { path: 'billing_currency', rule: THB_ONLY }]],
  ] as const)('POST %s: %s → 400 naming the field and the rule; nothing recorded, nothing sent', async (url, _name, payload, expected) => {
    api = makeTestApi()
    const r = await api.app.inject({ method: 'POST', url, headers: bearer('all'), payload })
    expect(r.statusCode).toBe(400)
    expect(r.json()).toEqual({ error: 'invalid_request', violations: expected })
    expect(api.store.all()).toHaveLength(0)
    expect(api.gateway.calls).toHaveLength(0)
  })

  it('PUT /v1/subscriptions/{id}: a plan update keeps the same rules', async () => {
    api = makeTestApi()
    const r = await api.app.inject({ method: 'PUT', url: '/v1/subscriptions/SUB-1', headers: bearer('all'), payload: anUpdateRequest({ billing_amount: '0.00', billing_currency: 'USD' }) })
    expect(r.statusCode).toBe(400)
    expect(r.json<{ violations: unknown[] }>().violations).toEqual([
      { path: 'billing_amount', rule: MORE_THAN_0 },
      { path: 'billing_currency', rule: THB_ONLY },
    ])
  })

  it('"100", "100.0" and "100.00" are one amount: the same create again is a replay, not a conflict', async () => {
    api = makeTestApi()
    api.gateway.answer('createDirectPayment', E.right({ merchant_id: MERCHANT_ID, merchant_order_id: 'QR-1', order_id: '261121000000000002', order_status: 'WP', order_amount: '100.00', order_currency: 'THB', create_time: '2026-11-21 10:00:00', qr_code: '000201' }))
    const first = await api.app.inject({ method: 'POST', url: '/v1/payments', headers: bearer('all'), payload: { ...thaiQr, order_amount: '100' } })
    expect(first.statusCode).toBe(201)
    for (const same of ['100.0', '100.00']) {
      const again = await api.app.inject({ method: 'POST', url: '/v1/payments', headers: bearer('all'), payload: { ...thaiQr, order_amount: same } })
      expect(again.statusCode, same).toBe(200)
    }
    expect(api.gateway.count('createDirectPayment')).toBe(1)
  })
})

describe('/v1 routing: methods, long and malformed paths, refused keys — always in satang\'s error shape', () => {
  it('a path satang serves, asked with another method → 405 with Allow listing its methods', async () => {
    api = makeTestApi()
    const cases = [
      { method: 'GET', url: '/v1/payments', allow: 'POST' },
      { method: 'PUT', url: '/v1/payments', allow: 'POST' },
      { method: 'DELETE', url: '/v1/payments/WEB-1', allow: 'GET, HEAD' },
      { method: 'PATCH', url: '/v1/subscriptions/S-1', allow: 'GET, HEAD, PUT, DELETE' },
      { method: 'GET', url: '/v1/subscriptions/S-1/cancel', allow: 'POST' },
      { method: 'POST', url: '/v1/audit/order/WEB-1', allow: 'GET, HEAD' },
      { method: 'POST', url: '/v1/ledger/balances', allow: 'GET, HEAD' },
      { method: 'GET', url: '/callbacks/notifications', allow: 'POST' },
      { method: 'GET', url: '/callbacks/checkout-redirect', allow: 'POST' },
      { method: 'POST', url: '/healthz', allow: 'GET, HEAD' },
      { method: 'DELETE', url: '/metrics?x=1', allow: 'GET, HEAD' },
      { method: 'OPTIONS', url: '/v1/openapi.json', allow: 'GET, HEAD' },
    ] as const
    for (const c of cases) {
      const r = await api.app.inject({ method: c.method, url: c.url, headers: bearer('all') })
      expect([r.statusCode, r.headers.allow], `${c.method} ${c.url}`).toEqual([405, c.allow])
      expect(r.json()).toEqual({ error: 'method_not_allowed', message: `${c.method} is not allowed on ${c.url.split('?')[0] ?? ''}; allowed: ${c.allow}`, allow: c.allow.split(', ') })
    }
    // A path no route serves stays 404, whatever the method.
    for (const method of ['GET', 'POST'] as const) {
      const r = await api.app.inject({ method, url: '/v1/payments/WEB-1/extra', headers: bearer('all') })
      expect([r.statusCode, r.headers.allow]).toEqual([404, undefined])
      expect(r.json()).toEqual({ error: 'not_found', message: `no route ${method} /v1/payments/WEB-1/extra` })
    }
    expect(api.store.all()).toHaveLength(0)
  })

  it('a 5,000-character path id → 400 invalid_request naming the field, without echoing it', async () => {
    api = makeTestApi()
    const long = 'A'.repeat(5000)
    for (const [url, path] of [
      [`/v1/payments/${long}`, 'merchant_order_id'],
      [`/v1/refunds/${long}`, 'merchant_refund_id'],
      [`/v1/subscriptions/${long}`, 'merchant_subscribe_id'],
      [`/v1/audit/order/${long}`, 'id'],
    ] as const) {
      const r = await api.app.inject({ method: 'GET', url, headers: bearer('all') })
      expect(r.statusCode, url.slice(0, 20)).toBe(400)
      expect(r.json()).toMatchObject({ error: 'invalid_request', violations: [{ path }] })
      expect(r.body).not.toContain('AAAAAAAAAA')
    }
    const badOrderId = await api.app.inject({ method: 'GET', url: '/v1/audit/order/bad%20id', headers: bearer('all') })
    expect(badOrderId.json()).toEqual({ error: 'invalid_request', violations: [{ path: 'id', rule: 'must contain only digits, letters, dash and underline (merchant_order_id)' }] })
    // Past the router's own limit, and a path that is not valid percent-encoding: the same shape.
    const huge = await api.app.inject({ method: 'GET', url: `/v1/payments/${'A'.repeat(20_000)}`, headers: bearer('all') })
    expect(huge.json()).toEqual({ error: 'invalid_request', violations: [{ path: '', rule: 'each segment of the URL path must be at most 16384 characters' }] })
    const malformed = await api.app.inject({ method: 'GET', url: '/v1/payments/%zz', headers: bearer('all') })
    expect(malformed.json()).toEqual({ error: 'invalid_request', violations: [{ path: '', rule: 'the URL path must be valid percent-encoded UTF-8' }] })
    const unknown = await api.app.inject({ method: 'GET', url: `/v1/${'n'.repeat(5000)}`, headers: bearer('all') })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json<{ message: string }>().message).toBe(`no route GET /v1/${'n'.repeat(36)}… (5004 characters)`)
  })

  it('a body with a __proto__ key (or constructor.prototype) → 400 naming where the key is, not "invalid JSON"; nothing recorded', async () => {
    api = makeTestApi()
    const send = (payload: string) => api.app.inject({ method: 'POST', url: '/v1/payments', headers: { ...bearer('all'), 'content-type': 'application/json' }, payload })
    const cases = [
      ['{"__proto__":{"admin":true},"merchant_order_id":"P-1"}', [{ path: '', rule: 'must not contain the key __proto__' }]],
      ['{"merchant_order_id":"P-1","customer":{"merchant_user_id":"u","__proto__":{"x":1}}}', [{ path: 'customer', rule: 'must not contain the key __proto__' }]],
      ['{"products":[{"name":"a"},{"\\u005f_proto__":{}}]}', [{ path: 'products.1', rule: 'must not contain the key __proto__' }]],
      ['{"customer":{"constructor":{"prototype":{"x":1}}}}', [{ path: 'customer.constructor', rule: 'must not contain the key prototype' }]],
    ] as const
    for (const [payload, violations] of cases) {
      const r = await send(payload)
      expect(r.statusCode, payload).toBe(400)
      expect(r.json(), payload).toEqual({ error: 'invalid_request', violations })
    }
    expect((await send('{"customer":{"constructor":"Object"}}')).json<{ violations: Array<{ path: string }> }>().violations.map((v) => v.path)).not.toContain('customer.constructor')
    expect((await send('{"__proto__":')).json()).toEqual({ error: 'invalid_request', violations: [{ path: '', rule: 'body must be valid JSON' }] })
    expect(api.store.all()).toHaveLength(0)
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

  it('401 reasons speak to the gateway about its fields, never of a command-line flag', async () => {
    api = makeTestApi()
    api.gateway.answer('applyCheckout', applyAnswer)
    await api.app.inject({ method: 'POST', url: '/v1/checkouts', headers: bearer('all'), payload: checkout })
    const { sign: _s, ...unsigned } = notification('PS')
    const cases = [
      [unsigned, 'the sign field is missing'],
      [{ ...unsigned, sign: '' }, 'signature is missing'],
      [{ ...notification('PS'), sign_type: 'MD5' }, 'sign_type must be RSA, got "MD5"'],
      [{ ...notification('PS'), order_status: 'PF' }, 'signature does not match the canonical string for this public key'],
    ] as const
    for (const [payload, message] of cases) {
      const r = await api.app.inject({ method: 'POST', url: '/callbacks/notifications', payload })
      expect([r.statusCode, r.json()]).toEqual([401, { error: 'bad_signature', message }])
      expect(r.body).not.toMatch(/--\w/)
    }
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
