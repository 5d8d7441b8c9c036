import * as E from 'fp-ts/lib/Either.js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Canonicalizer } from '../../../src/domain/gateway/canonical.ts'
import { makeSigner, makeVerifier, signedForm, type Verifier } from '../../../src/domain/gateway/signing.ts'
import { gatewayPublicKey, gatewayVerifier, merchantPrivateKey } from '../../sandbox/support.ts'
import { MERCHANT_ID, signedByGateway } from '../../application/support.ts'
import { bearer, makeTestApi, type TestApi } from './support.ts'

/**
 * Issue 28, item 2: a callback is RSA-verified once, and its canonical string built once, whatever
 * the route asks on the way (rate limiting asks whether it is trusted before it is screened and
 * recorded). Counted by wrapping the verifier and canonicalizer the callbacks are given, through the
 * real HTTP route on a real socket.
 */

const counts = { verify: 0, canonical: 0 }
const countingCanonicalizer: Canonicalizer = {
  ...gatewayVerifier.canonicalizer,
  canonicalize: (fields) => {
    counts.canonical++
    return gatewayVerifier.canonicalizer.canonicalize(fields)
  },
}
const inner = makeVerifier(countingCanonicalizer, gatewayPublicKey)
const countingVerifier: Verifier = {
  canonicalizer: countingCanonicalizer,
  verify: (fields, signature) => {
    counts.verify++
    return inner.verify(fields, signature)
  },
}

const ORDER_ID = '261121000000000001'
let api: TestApi
let url: string

beforeAll(async () => {
  api = makeTestApi({ gatewayVerifier: countingVerifier })
  url = await api.app.listen({ host: '127.0.0.1', port: 0 })
  api.gateway.answer(
    'applyCheckout',
    E.right({ merchant_id: MERCHANT_ID, merchant_order_id: 'ONE-1', order_id: ORDER_ID, order_status: 'PI', order_amount: '100.00', order_currency: 'THB', create_time: '2026-11-21 10:00:00', link_url: 'https://gw.example/c/1' }),
  )
  const created = await fetch(`${url}/v1/checkouts`, {
    method: 'POST',
    headers: { ...bearer('writer'), 'content-type': 'application/json' },
    body: JSON.stringify({ merchant_order_id: 'ONE-1', order_amount: '100', order_currency: 'THB', order_desc: 'Tea', customer: { merchant_user_id: 'u-1' }, redirect_url: 'https://shop.example/return' }),
  })
  expect(created.status).toBe(201)
})

afterAll(async () => {
  await api.app.close()
})

beforeEach(() => {
  counts.verify = 0
  counts.canonical = 0
})

const notification = (status: string, over: Record<string, string> = {}) => ({
  notify_type: 'PAYMENT',
  merchant_id: MERCHANT_ID,
  merchant_order_id: 'ONE-1',
  order_id: ORDER_ID,
  order_status: status,
  order_amount: '100.00',
  order_currency: 'THB',
  ...over,
})

const post = async (path: string, body: string, type = 'application/json'): Promise<Response> => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': type }, body })

describe('one RSA verification per callback, through the HTTP route', () => {
  it('a trusted notification: verified once, its canonical string built once, recorded', async () => {
    const res = await post('/callbacks/notifications', JSON.stringify(signedByGateway(notification('PS'))))
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('SUCCESS')
    expect(counts).toEqual({ verify: 1, canonical: 1 })
  })

  it('the same notification delivered again: once more per delivery, not twice', async () => {
    const body = JSON.stringify(signedByGateway(notification('PS')))
    for (let i = 0; i < 3; i++) expect((await post('/callbacks/notifications', body)).status).toBe(200)
    expect(counts).toEqual({ verify: 3, canonical: 3 })
  })

  it('a forgery (tampered amount) and one signed with the wrong key: one verification each, both refused', async () => {
    const tampered = { ...signedByGateway(notification('PS')), order_amount: '1.00' }
    expect((await post('/callbacks/notifications', JSON.stringify(tampered))).status).toBe(401)
    expect(counts).toEqual({ verify: 1, canonical: 1 })
    const wrongKey = signedForm(makeSigner(gatewayVerifier.canonicalizer, merchantPrivateKey), notification('PS'))
    expect((await post('/callbacks/notifications', JSON.stringify(wrongKey))).status).toBe(401)
    expect(counts).toEqual({ verify: 2, canonical: 2 })
  })

  it('a notification for another merchant: verified once (by the screen, since the route does not trust it)', async () => {
    const res = await post('/callbacks/notifications', JSON.stringify(signedByGateway(notification('PS', { merchant_id: '140000000000000099' }))))
    expect(res.status).toBe(200)
    expect(res.headers.get('x-satang-callback')).toBe('rejected')
    expect(counts).toEqual({ verify: 1, canonical: 1 })
  })

  it('a signed redirect form: verified once and the browser sent on', async () => {
    const form = signedByGateway({ merchant_id: MERCHANT_ID, merchant_order_id: 'ONE-1', order_id: ORDER_ID, order_status: 'PS', order_amount: '100.00', order_currency: 'THB' })
    const res = await fetch(`${url}/callbacks/checkout-redirect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    })
    expect(res.status).toBe(303)
    expect(counts).toEqual({ verify: 1, canonical: 1 })
  })
})
