import * as E from 'fp-ts/lib/Either.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import { sandboxResponseFields } from '../../src/sandbox/direct-payment.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { verifyThaiQr } from '../../src/sandbox/thai-qr.ts'
import { DIRECT_PAYMENT_METHODS } from '../../src/domain/gateway/direct-payment-methods.ts'
import { expectedDirectResponseFields } from '../../src/domain/gateway/direct-payment-response.ts'
import { directPaymentResponseFor, DirectPaymentRequest, PaymentNotification, PaymentQueryResponse } from '../../src/domain/gateway/index.ts'
import { DIRECT_SERVICES, type DirectService } from '../../src/domain/gateway/services.ts'
import { parseAmount } from '../../src/domain/money.ts'
import { decodeAll } from '../../src/domain/violations.ts'
import { conditionalRequestFields, decoded } from '../domain/gateway/builders.ts'
import { clientFor, control, expectRight, gatewayVerifier, MERCHANT_ID, startMerchantServer, startSandbox, type MerchantServer } from './support.ts'

/**
 * Acceptance: over real HTTP, a payment for every service/method pair of the spec, created with the
 * merchant-side client; `data` has exactly the documented fields; paid through the control API; the
 * query answers PS with complete_time; the signed notification reaches the merchant's receiver.
 */

// svc.direct-debit.pay lists no methods ("not shown"): any method is accepted; DIRECT_DEBIT stands for one.
const PAIRS: ReadonlyArray<readonly [DirectService, string]> = DIRECT_SERVICES.flatMap((service) => {
  const methods: ReadonlyArray<string> = DIRECT_PAYMENT_METHODS[service]
  return (methods.length === 0 ? ['DIRECT_DEBIT'] : methods).map((m) => [service, m] as const)
})

const AMOUNT = '123.45'

describe('direct payments over HTTP, every service and method of the spec', () => {
  let sandbox: Sandbox
  let merchant: MerchantServer
  let client: GatewayClient

  beforeAll(async () => {
    sandbox = await startSandbox()
    merchant = await startMerchantServer()
    client = clientFor(sandbox)
  })
  afterAll(async () => {
    client.close()
    await sandbox.close()
    await merchant.close()
  })

  it('covers every pair of the spec table', () => {
    expect(PAIRS).toHaveLength(23)
  })

  it.each(PAIRS)('%s %s: create → exact fields → pay → query PS → signed notification', async (service, method) => {
    const merchantOrderId = `T-${service.replace(/\W/g, '_')}-${method}`
    const request = decoded(DirectPaymentRequest, {
      version: 'v1',
      service,
      merchant_id: MERCHANT_ID,
      merchant_order_id: merchantOrderId,
      order_amount: AMOUNT,
      order_currency: 'THB',
      order_desc: `Test of ${service} ${method}`,
      payment_method: method,
      customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
      products: [{ name: 'Iced coffee', unit_price: AMOUNT, quantity: '1' }],
      notify_url: `${merchant.url}/notify`,
      redirect_url: `${merchant.url}/return`,
      ...conditionalRequestFields(service, method),
    })

    const created = expectRight(await client.createDirectPayment(request)())
    const data: Readonly<Record<string, unknown>> = created.data

    // Exactly the documented fields: every required one, optional ones only from the spec's list.
    const { required, optional } = expectedDirectResponseFields(service, method)
    const sentKeys = Object.keys(data).filter((k) => data[k] !== undefined)
    for (const field of required) expect(sentKeys, `required ${field}`).toContain(field)
    for (const field of sentKeys) expect([...required, ...optional], `unexpected ${field}`).toContain(field)
    expect(new Set(sentKeys)).toEqual(new Set(sandboxResponseFields(service, method)))
    expect(decodeAll(directPaymentResponseFor(service, method), data)).toEqual(E.right(data))

    expect(data['order_status']).toBe('WP')
    expect(data['order_id']).toMatch(/^\d{18}$/)
    expect(data['order_amount']).toBe(AMOUNT)
    expect(data['create_time'] ?? data['order_create_time']).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    if (service === 'svc.thaiqr.pay') {
      const amount = parseAmount(AMOUNT)
      if (E.isLeft(amount)) throw new Error('amount')
      expect(verifyThaiQr(String(data['qr_code']), { amount: amount.right })).toEqual(E.right({ amount: AMOUNT, currency: '764' }))
    }
    if (typeof data['link_url'] === 'string') {
      const page = await fetch(data['link_url'])
      expect(page.status).toBe(200)
      expect(await page.text()).toContain(merchantOrderId)
    }
    if (service === 'svc.wallet_d.pay') expect(data['link_url_app']).toBeNull()

    const orderId = String(data['order_id'])
    const paid = await control(sandbox, 'POST', `/orders/${orderId}/pay`)
    expect(paid.status).toBe(200)

    const query = expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: merchantOrderId })())
    expect(decodeAll(PaymentQueryResponse, query.data)).toEqual(E.right(query.data))
    expect(query.data).toMatchObject({ merchant_order_id: merchantOrderId, order_id: orderId, order_status: 'PS', order_amount: AMOUNT, payment_method: method })
    expect(query.data.complete_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)

    const notification = await merchant.waitForMatch('/notify', (r) => r.fields['order_id'] === orderId)
    expect(notification.contentType).toMatch(/^application\/json/)
    expect(gatewayVerifier.verify(notification.fields)).toEqual({ valid: true })
    expect(gatewayVerifier.verify({ ...notification.fields, order_amount: '1.00' }).valid).toBe(false)
    const n = decoded(PaymentNotification, notification.fields)
    expect(n).toMatchObject({ notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: merchantOrderId, order_status: 'PS', order_amount: AMOUNT, sign_type: 'RSA' })
  })

  it('issues unique 18-digit order ids', () => {
    const ids = sandbox.state.orders().map((o) => o.orderId)
    expect(ids.length).toBeGreaterThanOrEqual(PAIRS.length)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
