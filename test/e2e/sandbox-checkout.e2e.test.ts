import { existsSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import { loadPublicKey, makeVerifier, type Verifier } from '../../src/domain/gateway/signing.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { CheckoutRedirectForm, SubscriptionRedirectForm } from '../../src/domain/gateway/index.ts'
import { decoded } from '../domain/gateway/builders.ts'
import { clientFor, expectRight, MERCHANT_ID, startMerchantServer, startSandbox, type MerchantServer } from '../sandbox/support.ts'

/**
 * Acceptance: in headless Chromium, a checkout link_url → Pay → the merchant's redirect_url receives the
 * endpoint 5 form with a valid gateway signature; Cancel lands on cancel_url (or the referer). Also the
 * subscription authorise page (endpoint 9 form) and a direct payment's pay page.
 */

const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) console.warn(`sandbox browser tests SKIPPED: ${CHROMIUM} is absent (Debian package chromium; .ci/run installs it)`)

const FORM_FIELDS = ['merchant_id', 'merchant_order_id', 'order_amount', 'order_currency', 'order_id', 'order_status', 'sign', 'sign_type']

describe.skipIf(!hasChromium)('the sandbox pages in headless Chromium', () => {
  let browser: Browser
  let sandbox: Sandbox
  let merchant: MerchantServer
  let client: GatewayClient
  let page: Page
  /** Built from the PEM the sandbox serves at its documented keys URL. */
  let verifier: Verifier

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  })
  afterAll(async () => {
    await browser.close()
  })
  beforeEach(async () => {
    sandbox = await startSandbox()
    merchant = await startMerchantServer()
    client = clientFor(sandbox)
    page = await browser.newPage()
    const pem = await (await fetch(sandbox.publicKeyUrl)).text()
    const key = loadPublicKey(pem)
    if (E.isLeft(key)) throw new Error(key.left.message)
    verifier = makeVerifier(satangCanonicalV1, key.right)
  })
  afterEach(async () => {
    await page.close()
    client.close()
    await sandbox.close()
    await merchant.close()
  })

  const checkout = async (merchantOrderId: string, over: Record<string, string> = {}) =>
    expectRight(
      await client.applyCheckout({
        merchant_id: MERCHANT_ID,
        merchant_order_id: merchantOrderId,
        order_amount: '1250.5',
        order_currency: 'THB',
        order_desc: 'Bicycle helmet',
        customer: { merchant_user_id: 'u-7', full_name: 'Anong Rakdee' },
        products: [{ name: 'Helmet', unit_price: '1250.50', quantity: '1' }],
        notify_url: `${merchant.url}/notify`,
        redirect_url: `${merchant.url}/return`,
        ...over,
      })(),
    ).data

  it('checkout: Pay sends the browser to redirect_url with the signed endpoint 5 form', async () => {
    const data = await checkout('WEB-1')
    await page.goto(data.link_url)
    await expect.poll(() => page.title()).toContain('Checkout WEB-1')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Checkout')
    await page.getByLabel(/Wallet C/).check()
    await page.getByRole('button', { name: 'Pay 1250.50 THB' }).click()
    await page.waitForURL(`${merchant.url}/return`)

    const [received] = await merchant.waitFor('/return', 1)
    if (received === undefined) throw new Error('no form')
    expect(received.method).toBe('POST')
    expect(received.contentType).toMatch(/^application\/x-www-form-urlencoded/)
    expect(Object.keys(received.fields).sort()).toEqual(FORM_FIELDS)
    expect(verifier.verify(received.fields)).toEqual({ valid: true })
    expect(verifier.verify({ ...received.fields, order_status: 'WP' }).valid).toBe(false)
    expect(decoded(CheckoutRedirectForm, received.fields)).toMatchObject({
      merchant_id: MERCHANT_ID,
      merchant_order_id: 'WEB-1',
      order_id: data.order_id,
      order_amount: '1250.50',
      order_status: 'PS',
      order_currency: 'THB',
      sign_type: 'RSA',
    })
    const query = expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'WEB-1' })()).data
    expect(query).toMatchObject({ order_status: 'PS', product_code: 'WALLET_C', payment_method: 'NORMAL_BALANCE_C' })
    expect(query.complete_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    expect((await merchant.waitFor('/notify', 1))[0]?.fields).toMatchObject({ order_id: data.order_id, order_status: 'PS' })
  })

  it('checkout: without script, the payer continues with the button', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const noScript = await context.newPage()
    try {
      const data = await checkout('WEB-2', { payment_method: 'THAI_QR' })
      await noScript.goto(data.link_url)
      expect(await noScript.getByRole('radio').count()).toBe(1)
      expect(await noScript.getByRole('img', { name: /Thai QR code \(PromptPay\) for 1250.50 THB/ }).count()).toBe(1)
      await noScript.getByRole('button', { name: /^Pay/ }).click()
      await noScript.getByRole('button', { name: 'Continue to the merchant' }).click()
      await noScript.waitForURL(`${merchant.url}/return`)
      const [received] = await merchant.waitFor('/return', 1)
      expect(verifier.verify(received?.fields ?? {})).toEqual({ valid: true })
    } finally {
      await context.close()
    }
  })

  it('checkout: Cancel lands on cancel_url', async () => {
    const data = await checkout('WEB-3', { cancel_url: `${merchant.url}/cancelled?order=WEB-3` })
    await page.goto(data.link_url)
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.waitForURL(`${merchant.url}/cancelled?order=WEB-3`)
    expect(merchant.at('/return')).toHaveLength(0)
    expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'WEB-3' })()).data.order_status).toBe('PI')
  })

  it('checkout: without cancel_url, Cancel goes back to the referer', async () => {
    const data = await checkout('WEB-4')
    await page.goto(`${merchant.url}/shop?to=${encodeURIComponent(data.link_url)}`)
    await page.getByRole('link', { name: 'Go to checkout' }).click()
    await page.waitForURL(data.link_url)
    await page.getByRole('button', { name: 'Cancel' }).click()
    // Chromium's default referrer policy (strict-origin-when-cross-origin) sends only the shop's origin.
    await page.waitForURL(`${merchant.url}/`)
    expect(page.url()).toBe(`${merchant.url}/`)
  })

  it('subscription: Authorise bills today and sends the signed endpoint 9 form to redirect_url', async () => {
    const created = expectRight(
      await client.createSubscription({
        merchant_id: MERCHANT_ID,
        merchant_subscribe_id: 'WEB-SUB-1',
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
      })(),
    ).data
    await page.goto(created.link_url)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Authorise a subscription')
    expect(await page.getByRole('listitem').count()).toBe(7) // six dates and "…"
    await page.getByRole('button', { name: 'Authorise' }).click()
    await page.waitForURL(`${merchant.url}/return`)
    const [received] = await merchant.waitFor('/return', 1)
    expect(verifier.verify(received?.fields ?? {})).toEqual({ valid: true })
    expect(decoded(SubscriptionRedirectForm, received?.fields)).toMatchObject({
      merchant_subscribe_id: 'WEB-SUB-1',
      recurring_bill_id: created.recurring_bill_id,
      status: 'SUCCESS',
      type: 'Created_Deducted',
      billing_amount: '149.00',
    })
    expect((await merchant.waitFor('/notify', 1))[0]?.fields).toMatchObject({ notify_type: 'SUBSCRIPTION', type: 'Created_Deducted', status: 'SUCCESS' })
  })

  it('direct payment link: the pay page pays or fails the order', async () => {
    const pay = async (id: string) =>
      expectRight(
        await client.createDirectPayment({
          service: 'svc.wallet_a.pay',
          merchant_id: MERCHANT_ID,
          merchant_order_id: id,
          order_amount: '80',
          order_currency: 'THB',
          order_desc: 'Noodles',
          payment_method: 'WEB_PAYMENT',
          customer: { merchant_user_id: 'u-5' },
          redirect_url: `${merchant.url}/return`,
        })(),
      ).data
    const a = await pay('WEB-PAY-1')
    await page.goto(String(a.link_url))
    await page.getByRole('button', { name: 'Pay', exact: true }).click()
    await page.waitForURL(`${merchant.url}/return`)
    const b = await pay('WEB-PAY-2')
    await page.goto(String(b.link_url))
    await page.getByRole('button', { name: 'Fail the payment' }).click()
    await page.waitForURL(`${merchant.url}/return`)
    const forms = await merchant.waitFor('/return', 2)
    expect(forms.map((f) => [f.fields['merchant_order_id'], f.fields['order_status']])).toEqual([
      ['WEB-PAY-1', 'PS'],
      ['WEB-PAY-2', 'PF'],
    ])
    for (const f of forms) expect(verifier.verify(f.fields)).toEqual({ valid: true })
  })
})
