import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CHECKOUT_PRODUCTS, offeredProducts } from '../../src/sandbox/checkout.ts'
import { completesWithoutPayer, sandboxResponseFields } from '../../src/sandbox/direct-payment.ts'
import { invalidParameters, rejectionReply, SANDBOX_ERRORS } from '../../src/sandbox/error-table.ts'
import { makeGatewayFaults } from '../../src/sandbox/gateway-faults.ts'
import { gatewayBillId, newTraceId, recurringBillId } from '../../src/sandbox/ids.ts'
import { esc, html, redirectFormPage } from '../../src/sandbox/pages/html.ts'
import { makeRateLimiter } from '../../src/sandbox/rate-limit.ts'
import { DIRECT_PAYMENT_METHODS } from '../../src/domain/gateway/direct-payment-methods.ts'
import { expectedDirectResponseFields } from '../../src/domain/gateway/direct-payment-response.ts'
import { DIRECT_SERVICES } from '../../src/domain/gateway/services.ts'

describe('the error table', () => {
  it('has unique codes; business errors are 4xx (a client reads 5xx as an unknown outcome)', () => {
    const entries = Object.entries(SANDBOX_ERRORS)
    expect(new Set(entries.map(([, e]) => e.code)).size).toBe(entries.length)
    for (const [kind, e] of entries) {
      expect(e.code).not.toBe(200000)
      if (kind !== 'internal' && kind !== 'injectedFault') expect(e.status).toBeLessThan(500)
    }
  })

  it('lists every violation in the message and in data', () => {
    const reply = rejectionReply(invalidParameters([{ path: 'a', rule: 'is required' }, { path: 'b.c', rule: 'must be x' }]), 't1')
    expect(reply).toEqual({
      status: 400,
      body: { code: 400001, message: 'invalid parameter: a: is required; b.c: must be x', data: { violations: [{ path: 'a', rule: 'is required' }, { path: 'b.c', rule: 'must be x' }] }, trace_id: 't1' },
    })
  })
})

describe('direct payment response fields', () => {
  const pairs = DIRECT_SERVICES.flatMap((s) => (DIRECT_PAYMENT_METHODS[s].length === 0 ? ['DIRECT_DEBIT'] : [...DIRECT_PAYMENT_METHODS[s]]).map((m) => [s, m] as const))
  it.each(pairs)('%s %s: every required field, only listed optional ones', (service, method) => {
    const { required, optional } = expectedDirectResponseFields(service, method)
    const sent = sandboxResponseFields(service, method)
    for (const f of required) expect(sent).toContain(f)
    for (const f of sent) expect([...required, ...optional]).toContain(f)
  })

  it('names the spec cases: no link for wallet_b MERCHANT_SCAN and BANKAPP_A/B, QR for THAI_QR, order_create_time for wallet_a offline', () => {
    expect(sandboxResponseFields('svc.wallet_b.pay', 'MERCHANT_SCAN')).not.toContain('link_url')
    expect(sandboxResponseFields('svc.mobile.banking.pay', 'BANKAPP_A_NOTIFICATION')).not.toContain('link_url')
    expect(sandboxResponseFields('svc.thaiqr.pay', 'THAI_QR')).toEqual(expect.arrayContaining(['qr_code', 'qr_code_expire_sec']))
    expect(sandboxResponseFields('svc.wallet_a.offline.pay', 'DYNAMIC_CODE')).toEqual(expect.arrayContaining(['order_create_time', 'payment_type', 'due_date', 'link_url']))
    expect(sandboxResponseFields('svc.wallet_a.offline.pay', 'DYNAMIC_CODE')).not.toContain('create_time')
    expect(sandboxResponseFields('svc.direct-debit.pay', 'DIRECT_DEBIT')).not.toContain('link_url')
    expect(completesWithoutPayer('svc.wallet_b.pay', 'MERCHANT_SCAN')).toBe(true)
    expect(completesWithoutPayer('svc.thaiqr.pay', 'THAI_QR')).toBe(false)
  })
})

describe('checkout offers', () => {
  it('offers every product by default, or only what was requested', () => {
    expect(offeredProducts({})).toBe(CHECKOUT_PRODUCTS)
    expect(offeredProducts({ productCode: 'MOBILE_BANKING' })).toEqual([CHECKOUT_PRODUCTS.find((p) => p.productCode === 'MOBILE_BANKING')])
    expect(offeredProducts({ paymentMethod: 'THAI_QR' })).toEqual([{ productCode: 'THAI_QR', label: 'Thai QR (PromptPay)', methods: ['THAI_QR'] }])
    expect(offeredProducts({ productCode: 'MOBILE_BANKING', paymentMethod: 'BANKAPP_C_ALL' }).flatMap((p) => p.methods)).toEqual(['BANKAPP_C_ALL'])
    expect(offeredProducts({ productCode: 'INSTALMENT_X' })).toEqual([{ productCode: 'INSTALMENT_X', label: 'INSTALMENT_X', methods: ['INSTALMENT_X'] }])
    expect(offeredProducts({ paymentMethod: 'SOMETHING' })).toEqual([{ productCode: 'THAI_QR', label: 'SOMETHING', methods: ['SOMETHING'] }])
  })
})

describe('ids', () => {
  it('order ids have 18 digits, recurring bill ids 20, trace ids 32 hex', () => {
    const at = new Date('2027-01-31T20:00:00Z') // 1 February in Bangkok
    expect(gatewayBillId(at, 7)).toBe('270201000000000007')
    expect(recurringBillId(at, 7)).toBe('20270201000000000007')
    fc.assert(fc.property(fc.integer({ min: 1, max: 999_999_999_999 }), (n) => /^\d{18}$/.test(gatewayBillId(at, n))))
    const ids = Array.from({ length: 100 }, newTraceId)
    expect(new Set(ids).size).toBe(100)
    expect(ids.every((id) => /^[0-9a-f]{32}$/.test(id))).toBe(true)
  })
})

describe('rate limiter', () => {
  it('allows a burst, then one request per 1/perSecond, per key', () => {
    let now = 0
    const limiter = makeRateLimiter({ perSecond: 2, burst: 3 }, () => now)
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0])
    expect(limiter.take('a')).toBe(500)
    expect(limiter.take('b')).toBe(0)
    now = 500
    expect(limiter.take('a')).toBe(0)
    expect(limiter.take('a')).toBe(500)
    limiter.configure({ perSecond: 0, burst: 1 })
    expect(Array.from({ length: 100 }, () => limiter.take('a')).every((w) => w === 0)).toBe(true)
  })
})

describe('gateway faults', () => {
  it('counts down per request, limited to the named services', () => {
    const faults = makeGatewayFaults()
    faults.set({ http5xx: { count: 2, status: 502, phase: 'after' }, hang: { count: 1 }, latencyMs: 5, services: ['svc.thaiqr.pay'] })
    expect(faults.next('svc.payment.query')).toEqual({ latencyMs: 0 })
    expect(faults.next('svc.thaiqr.pay')).toEqual({ latencyMs: 5, hang: { phase: 'before' } })
    expect(faults.next('svc.thaiqr.pay')).toEqual({ latencyMs: 5, fail: { status: 502, phase: 'after' } })
    expect(faults.next('svc.thaiqr.pay')).toEqual({ latencyMs: 5, fail: { status: 502, phase: 'after' } })
    expect(faults.next('svc.thaiqr.pay')).toEqual({ latencyMs: 5 })
    faults.clear()
    expect(faults.next(undefined)).toEqual({ latencyMs: 0 })
  })
})

describe('html', () => {
  it('escapes every interpolation', () => {
    expect(esc(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;')
    expect(html`<p>${'<script>'}</p>${[html`<b>${'&'}</b>`]}`.html).toBe('<p>&lt;script&gt;</p><b>&amp;</b>')
  })

  it('the redirect form carries every field, escaped, with a button for browsers without script', () => {
    const page = redirectFormPage('Done', 'https://shop.example/return?a=1&b=2', { merchant_order_id: 'A"B', sign: 'x+/=' })
    expect(page).toContain('<form id="redirect" method="post" action="https://shop.example/return?a=1&amp;b=2">')
    expect(page).toContain('<input type="hidden" name="merchant_order_id" value="A&quot;B">')
    expect(page).toContain('<input type="hidden" name="sign" value="x+/=">')
    expect(page).toContain('<noscript><button type="submit" class="primary">Continue to the merchant</button></noscript>')
    expect(page).toContain('<html lang="en">')
  })
})
