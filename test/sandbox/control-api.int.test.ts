import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import { makeSandboxClock } from '../../src/sandbox/clock.ts'
import { CONTROL_ROUTES } from '../../src/sandbox/control-api.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { CheckoutRedirectForm, PaymentNotification, RefundNotification, RefundRecord } from '../../src/domain/gateway/index.ts'
import type { DirectPaymentRequest } from '../../src/domain/gateway/direct-payment.ts'
import { decodeAll } from '../../src/domain/violations.ts'
import { decoded } from '../domain/gateway/builders.ts'
import {
  clientFor,
  control,
  expectLeft,
  expectRight,
  GATEWAY_PUBLIC_KEY_PEM,
  gatewayVerifier,
  MERCHANT_ID,
  MERCHANT_PUBLIC_KEY_PEM,
  OTHER_MERCHANT_ID,
  startMerchantServer,
  startSandbox,
  type MerchantServer,
} from './support.ts'

/** The control API (refunds, forced statuses and amounts, reset, keys, merchants) and the payer's pages over plain HTTP. */

let sandbox: Sandbox
let merchant: MerchantServer
let client: GatewayClient

const START = new Date('2027-03-01T03:00:00Z')

beforeEach(async () => {
  sandbox = await startSandbox({}, makeSandboxClock({ start: START }))
  merchant = await startMerchantServer()
  client = clientFor(sandbox)
})
afterEach(async () => {
  client.close()
  await sandbox.close()
  await merchant.close()
})

const aWalletPayment = (merchantOrderId: string): Omit<DirectPaymentRequest, 'version'> => ({
  service: 'svc.wallet_c.pay',
  merchant_id: MERCHANT_ID,
  merchant_order_id: merchantOrderId,
  order_amount: '1000',
  order_currency: 'THB',
  order_desc: 'Headphones',
  payment_method: 'NORMAL_BALANCE_C',
  customer: { merchant_user_id: 'u-3' },
  notify_url: `${merchant.url}/notify`,
  redirect_url: `${merchant.url}/return`,
})

const checkoutOf = (merchantOrderId: string, over: Record<string, string> = {}) => ({
  merchant_id: MERCHANT_ID,
  merchant_order_id: merchantOrderId,
  order_amount: '450',
  order_currency: 'THB',
  order_desc: 'Dinner for two',
  customer: { merchant_user_id: 'u-4', full_name: 'Malee Suksai' },
  products: [{ name: 'Set menu', unit_price: '225', quantity: '2' }],
  notify_url: `${merchant.url}/notify`,
  redirect_url: `${merchant.url}/return`,
  ...over,
})

const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual',
})

/** The hidden inputs of an auto-submitting redirect form page. */
const hiddenFields = (html: string): Record<string, string> =>
  Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1] ?? '', (m[2] ?? '').replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>')]))

describe('refunds (control API)', () => {
  it('refunds a paid order up to what is left, RS, notified, answered by svc.refund.query', async () => {
    const orderId = expectRight(await client.createDirectPayment(aWalletPayment('R-1'))()).data.order_id
    expect((await control(sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'RF-0', refund_amount: '1' })).status).toBe(409) // not paid yet
    await control(sandbox, 'POST', `/orders/${orderId}/pay`)

    const first = await control(sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'RF-1', refund_amount: '600', refund_reason: 'one broken' })
    expect(first.status).toBe(201)
    expect(first.json).toMatchObject({ merchantRefundId: 'RF-1', amount: '600.00', status: 'RS' })
    const tooMuch = await control(sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'RF-2', refund_amount: '400.01' })
    expect(tooMuch).toMatchObject({ status: 409, json: { error: 'refund_amount 400.01 is more than the 400.00 left to refund of order ' + orderId } })
    expect((await control(sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'RF-2', refund_amount: '400' })).status).toBe(201)
    expect((await control(sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'RF-3', refund_amount: '0.01' })).status).toBe(409)
    expect((await control(sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'RF-1', refund_amount: '1' })).json['error']).toMatch(/already exists/)
    expect((await control(sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'RF-4', refund_amount: '1.001' })).status).toBe(400)

    const record = expectRight(await client.queryRefund({ merchant_id: MERCHANT_ID, merchant_refund_id: 'RF-1' })()).data
    expect(decodeAll(RefundRecord, record)).toEqual({ _tag: 'Right', right: record })
    expect(record).toMatchObject({ merchant_order_id: 'R-1', order_id: orderId, refund_amount: '600.00', refund_currency: 'THB', refund_status: 'RS', refund_reason: 'one broken' })
    expect(record.refund_order_id).toMatch(/^\d{18}$/)

    const refunds = (await merchant.waitFor('/notify', 3)).filter((r) => r.fields['notify_type'] === 'REFUND')
    expect(refunds.map((r) => decoded(RefundNotification, r.fields).merchant_refund_id)).toEqual(['RF-1', 'RF-2'])
    for (const r of refunds) expect(gatewayVerifier.verify(r.fields)).toEqual({ valid: true })
  })
})

describe('forcing the gateway side', () => {
  it('forces an amount and a status silently; queries answer them; notify: true tells the merchant', async () => {
    const orderId = expectRight(await client.createDirectPayment(aWalletPayment('F-1'))()).data.order_id
    const forced = await control(sandbox, 'POST', `/orders/${orderId}/force`, { order_amount: '999.99', order_status: 'PS' })
    expect(forced.json).toMatchObject({ status: 'PS', amount: '999.99', requestedAmount: '1000.00' })
    const q = expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'F-1' })()).data
    expect(q).toMatchObject({ order_status: 'PS', order_amount: '999.99' })
    expect(q.complete_time).toBe('2027-03-01 10:00:00')
    expect(merchant.at('/notify')).toHaveLength(0)

    await control(sandbox, 'POST', `/orders/${orderId}/force`, { order_status: 'XX', notify: true })
    const n = await merchant.waitFor('/notify', 1)
    expect(n[0]?.fields).toMatchObject({ order_status: 'XX', order_amount: '999.99' })
    expect((await control(sandbox, 'POST', `/orders/${orderId}/force`, { order_status: 'TOO_LONG' })).status).toBe(400)
    expect((await control(sandbox, 'POST', '/orders/000000000000000000/force', {})).status).toBe(404)
  })

  it('fails a payment: status PF, notified; a paid order cannot fail', async () => {
    const orderId = expectRight(await client.createDirectPayment(aWalletPayment('FAIL-1'))()).data.order_id
    expect((await control(sandbox, 'POST', `/orders/${orderId}/fail`)).json).toMatchObject({ status: 'PF' })
    expect(decoded(PaymentNotification, (await merchant.waitFor('/notify', 1))[0]?.fields).order_status).toBe('PF')
    await control(sandbox, 'POST', `/orders/${orderId}/pay`)
    expect((await control(sandbox, 'POST', `/orders/${orderId}/fail`)).status).toBe(409)
    expect((await control(sandbox, 'POST', `/orders/${orderId}/pay`)).status).toBe(409)
  })
})

describe('the pay page of a direct payment link', () => {
  it('shows the order with a Thai QR image; Pay posts the signed endpoint 5 form towards redirect_url', async () => {
    const created = expectRight(await client.createDirectPayment(aWalletPayment('PAGE-1'))()).data
    const page = await fetch(String(created.link_url))
    const text = await page.text()
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(text).toContain('<html lang="en">')
    expect(text).toMatch(/<img class="qr" src="data:image\/png;base64,[^"]+" alt="Thai QR code \(PromptPay\) for 1000.00 THB/)

    const paid = await fetch(`${sandbox.url}/pay/${created.order_id}/pay`, form({}))
    const html = await paid.text()
    expect(html).toContain(`action="${merchant.url}/return"`)
    expect(html).toContain('<noscript><button type="submit"')
    const fields = hiddenFields(html)
    expect(decoded(CheckoutRedirectForm, fields)).toMatchObject({ order_id: created.order_id, order_status: 'PS', order_amount: '1000.00', sign_type: 'RSA' })
    expect(gatewayVerifier.verify(fields)).toEqual({ valid: true })
    expect((await fetch(`${sandbox.url}/pay/${created.order_id}`).then((r) => r.text()))).toContain('Already paid')
  })

  it('refuses payment on the page once the link expired (sandbox time)', async () => {
    const created = expectRight(await client.createDirectPayment(aWalletPayment('PAGE-2'))()).data
    expect(created.link_url_expire_sec).toBe('1800')
    await sandbox.clock.advance(1801 * 1000)
    expect((await fetch(String(created.link_url))).status).toBe(410)
    expect((await fetch(`${sandbox.url}/pay/${created.order_id}/pay`, form({}))).status).toBe(410)
  })
})

describe('the hosted checkout over plain HTTP', () => {
  it('offers only the requested product/method; Pay marks PS and posts the signed form; a notification follows', async () => {
    const data = expectRight(await client.applyCheckout(checkoutOf('CO-1', { product_code: 'THAI_QR', payment_method: 'THAI_QR' }))()).data
    expect(data).toMatchObject({ order_status: 'PI', order_amount: '450.00', link_url: `${sandbox.url}/checkout/${data.order_id}` })
    const page = await (await fetch(data.link_url)).text()
    expect([...page.matchAll(/type="radio"[^>]*value="([^"]+)"/g)].map((m) => m[1])).toEqual(['THAI_QR/THAI_QR'])
    expect(page).toContain('Set menu')

    const all = expectRight(await client.applyCheckout(checkoutOf('CO-2'))()).data
    const offered = [...(await (await fetch(all.link_url)).text()).matchAll(/type="radio"[^>]*value="([^"]+)"/g)].map((m) => m[1])
    expect(offered.length).toBeGreaterThan(10)

    const paid = await fetch(`${sandbox.url}/checkout/${data.order_id}/pay`, form({ method: 'THAI_QR/THAI_QR' }))
    const fields = hiddenFields(await paid.text())
    expect(Object.keys(fields).sort()).toEqual(['merchant_id', 'merchant_order_id', 'order_amount', 'order_currency', 'order_id', 'order_status', 'sign', 'sign_type'])
    expect(gatewayVerifier.verify(fields)).toEqual({ valid: true })
    const q = expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'CO-1' })()).data
    expect(q).toMatchObject({ order_status: 'PS', product_code: 'THAI_QR', payment_method: 'THAI_QR' })
    expect(q.complete_time).toBeDefined()
    expect((await merchant.waitFor('/notify', 1))[0]?.fields).toMatchObject({ merchant_order_id: 'CO-1', order_status: 'PS' })
    // A method the page did not offer is refused.
    expect((await fetch(`${sandbox.url}/checkout/${all.order_id}/pay`, form({ method: 'NOPE/NOPE' }))).status).toBe(400)
  })

  it('Cancel goes to cancel_url, else to the referer of the first visit', async () => {
    const withCancel = expectRight(await client.applyCheckout(checkoutOf('CO-3', { cancel_url: `${merchant.url}/cancelled` }))()).data
    const cancelled = await fetch(`${sandbox.url}/checkout/${withCancel.order_id}/cancel`, form({}))
    expect(cancelled.status).toBe(303)
    expect(cancelled.headers.get('location')).toBe(`${merchant.url}/cancelled`)

    const noCancel = expectRight(await client.applyCheckout(checkoutOf('CO-4'))()).data
    await fetch(noCancel.link_url, { headers: { referer: `${merchant.url}/basket` } })
    await fetch(noCancel.link_url, { headers: { referer: 'http://elsewhere.example/' } })
    const back = await fetch(`${sandbox.url}/checkout/${noCancel.order_id}/cancel`, form({}))
    expect(back.headers.get('location')).toBe(`${merchant.url}/basket`)
    expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'CO-4' })()).data.order_status).toBe('PI')
  })
})

describe('pay immediately', () => {
  it('pays at once the methods without a payer step (the answer still says WP); others wait', async () => {
    const settings = await control(sandbox, 'PUT', '/settings', { payImmediately: true })
    expect(settings.json).toMatchObject({ payImmediately: true, failedStatus: 'PF', rateLimit: { perSecond: 0 } })
    const scan = expectRight(
      await client.createDirectPayment({
        service: 'svc.wallet_b.pay',
        merchant_id: MERCHANT_ID,
        merchant_order_id: 'IMM-1',
        order_amount: '35',
        order_currency: 'THB',
        order_desc: 'Bubble tea',
        payment_method: 'MERCHANT_SCAN',
        auth_code: '134567890123456789',
        customer: {},
        notify_url: `${merchant.url}/notify`,
      })(),
    ).data
    expect(scan.order_status).toBe('WP')
    expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'IMM-1' })()).data.order_status).toBe('PS')
    expect((await merchant.waitFor('/notify', 1))[0]?.fields).toMatchObject({ merchant_order_id: 'IMM-1', order_status: 'PS' })
    await client.createDirectPayment(aWalletPayment('IMM-2'))()
    expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'IMM-2' })()).data.order_status).toBe('WP')
    expect((await control(sandbox, 'PUT', '/settings', { payImmediately: 'yes' })).status).toBe(400)
  })
})

describe('keys, merchants, reset', () => {
  it('serves the gateway public key at /_sandbox/keys/gateway.pem', async () => {
    const res = await fetch(`${sandbox.url}/_sandbox/keys/gateway.pem`)
    expect(res.status).toBe(200)
    expect((await res.text()).trim()).toBe(GATEWAY_PUBLIC_KEY_PEM.trim())
  })

  it('registers a merchant at run time; rejects a bad id or key', async () => {
    const c = expectLeft(await client.queryPayment({ merchant_id: OTHER_MERCHANT_ID, merchant_order_id: 'X' })())
    expect(c).toMatchObject({ code: 401001 })
    expect((await control(sandbox, 'POST', '/merchants', { merchant_id: '12345', public_key_pem: MERCHANT_PUBLIC_KEY_PEM })).json['error']).toMatch(/18 digits starting with 14/)
    expect((await control(sandbox, 'POST', '/merchants', { merchant_id: OTHER_MERCHANT_ID, public_key_pem: 'nope' })).status).toBe(400)
    expect((await control(sandbox, 'POST', '/merchants', { merchant_id: OTHER_MERCHANT_ID, public_key_pem: MERCHANT_PUBLIC_KEY_PEM })).status).toBe(201)
    expect(expectLeft(await client.queryPayment({ merchant_id: OTHER_MERCHANT_ID, merchant_order_id: 'X' })())).toMatchObject({ code: 404001 })
  })

  it('lists orders and resets everything but the clock', async () => {
    await client.createDirectPayment(aWalletPayment('RS-1'))()
    expect((await control(sandbox, 'GET', `/orders?merchant_order_id=RS-1`)).json['orders']).toHaveLength(1)
    await sandbox.clock.advance(60_000)
    const reset = await control(sandbox, 'POST', '/reset')
    expect(reset.json).toMatchObject({ reset: true, clock: { bangkok: '2027-03-01 10:01:00' } })
    expect((await control(sandbox, 'GET', '/orders')).json['orders']).toEqual([])
    expect((await control(sandbox, 'GET', '')).json).toMatchObject({ gateway: `${sandbox.url}/gateway`, merchants: [MERCHANT_ID], counts: { orders: 0 } })
  })

  it('documents itself: every route listed by GET /_sandbox exists', async () => {
    const routes = (await control(sandbox, 'GET', '')).json['routes']
    if (!Array.isArray(routes)) throw new Error('no routes')
    expect(routes).toHaveLength(CONTROL_ROUTES.length)
    for (const r of CONTROL_ROUTES) {
      const url = r.path.replace(/\?.*$/, '').replace(/\{[a-z_]+\}/g, ':id')
      expect(sandbox.app.hasRoute({ method: r.method, url }), `${r.method} ${url}`).toBe(true)
    }
  })

  it('answers a bad control body with every violation', async () => {
    const bad = await control(sandbox, 'POST', '/clock/advance', { days: -1, weeks: 2 })
    expect(bad.status).toBe(400)
    expect(bad.json['violations']).toHaveLength(2)
    expect((await control(sandbox, 'POST', '/clock/set', { to: '2020-01-01 00:00:00' })).status).toBe(400) // never back
    expect((await control(sandbox, 'GET', '/nothing-here')).status).toBe(404)
  })
})
