import * as E from 'fp-ts/lib/Either.js'
import { parseAmount } from '../../domain/money.ts'
import { signedForm } from '../../domain/gateway/signing.ts'
import type { ActionError } from '../action-error.ts'
import { offeredProducts, type CheckoutProduct } from '../checkout.ts'
import type { SandboxContext } from '../context.ts'
import { PAID } from '../payments.ts'
import type { SandboxOrder } from '../state.ts'
import { qrDataUrl, thaiQrPayload } from '../thai-qr.ts'
import { checkoutFormFields } from '../wire.ts'
import { details, html, messagePage, page, raw, redirectFormPage, type Html } from './html.ts'

/** An HTML answer: status and page. */
export type PageReply = { readonly status: number; readonly body: string } | { readonly status: 303; readonly location: string }

export const ok = (body: string): PageReply => ({ status: 200, body })
export const failed = (e: ActionError): PageReply => ({ status: e.status, body: messagePage(e.status === 404 ? 'Not found' : 'Not possible', e.message) })

const orderRows = (o: SandboxOrder): Html =>
  details([
    ['Merchant', o.merchantId],
    ['Order', o.merchantOrderId],
    ['Description', o.description],
    ['Amount', `${o.amount} ${o.currency}`],
    ['Gateway order id', o.orderId],
    ['Status', html`<span class="status">${o.status}</span>`],
  ])

const productsTable = (o: SandboxOrder): Html =>
  o.products === undefined || o.products.length === 0
    ? html``
    : html`<table><caption>Items</caption><thead><tr><th scope="col">Item</th><th scope="col">Quantity</th><th scope="col">Unit price</th></tr></thead><tbody>${o.products.map(
        (p) => html`<tr><td>${typeof p['name'] === 'string' ? p['name'] : ''}</td><td>${typeof p['quantity'] === 'string' ? p['quantity'] : ''}</td><td>${typeof p['unit_price'] === 'string' ? p['unit_price'] : ''}</td></tr>`,
      )}</tbody></table>`

/** A Thai QR image of the order's amount (its own `qr_code` when it has one). */
const qrImage = async (ctx: SandboxContext, o: SandboxOrder): Promise<Html> => {
  const amount = parseAmount(o.amount)
  if (E.isLeft(amount)) return html``
  const payload = o.qrCode ?? thaiQrPayload({ promptPayId: ctx.settings().promptPayId, amount: amount.right })
  return html`<img class="qr" src="${await qrDataUrl(payload)}" alt="Thai QR code (PromptPay) for ${o.amount} ${o.currency}, order ${o.merchantOrderId}">`
}

export const isExpired = (ctx: SandboxContext, o: SandboxOrder): boolean => o.expiresAtMs !== undefined && ctx.clock.now().getTime() > o.expiresAtMs

/** After paying (or failing): the signed endpoint 5 form to `redirect_url`, or a result page. */
export const resultPage = (ctx: SandboxContext, o: SandboxOrder): PageReply => {
  const title = o.status === PAID ? 'Payment complete' : 'Payment failed'
  if (o.redirectUrl === undefined) return ok(messagePage(title, `Order ${o.merchantOrderId}: ${o.amount} ${o.currency}, status ${o.status}. You may close this page.`))
  return ok(redirectFormPage(title, o.redirectUrl, signedForm(ctx.signer, checkoutFormFields(o))))
}

/** The pay-or-fail page of a direct payment's `link_url`. */
export const payPage = async (ctx: SandboxContext, o: SandboxOrder): Promise<PageReply> => {
  if (o.status === PAID) return ok(messagePage('Already paid', `Order ${o.merchantOrderId} is paid.`))
  if (isExpired(ctx, o)) return { status: 410, body: messagePage('Link expired', `The payment link of order ${o.merchantOrderId} has expired.`) }
  const body = html`<h1>Pay ${o.amount} ${o.currency}</h1>
${orderRows(o)}
${details([
  ['Channel', o.service],
  ['Method', o.paymentMethod],
])}
${await qrImage(ctx, o)}
<p class="note">This is the sandbox's page for the channel. Choose what the payer does.</p>
<div class="actions">
<form method="post" action="/pay/${o.orderId}/pay"><button type="submit" class="primary">Pay</button></form>
<form method="post" action="/pay/${o.orderId}/fail"><button type="submit" class="secondary">Fail the payment</button></form>
</div>`
  return ok(page(`Pay order ${o.merchantOrderId}`, body))
}

/** The value of one radio button of the checkout page: product and method. */
export const choiceValue = (productCode: string, method: string): string => `${productCode}/${method}`

const methodChoices = (products: ReadonlyArray<CheckoutProduct>): Html => {
  let first = true
  return html`<fieldset><legend>Payment method</legend>${products.flatMap((p) =>
    p.methods.map((m) => {
      const checked = first
      first = false
      const id = `m-${p.productCode}-${m}`.replace(/[^A-Za-z0-9_-]/g, '_')
      return html`<label for="${id}"><input type="radio" id="${id}" name="method" value="${choiceValue(p.productCode, m)}"${raw(checked ? ' checked' : '')}> ${p.label}: ${m.replaceAll('_', ' ').toLowerCase()}</label>`
    }),
  )}</fieldset>`
}

/** The hosted checkout page (`link_url` of checkout apply): the order, the offered methods, Pay and Cancel. */
export const checkoutPage = async (ctx: SandboxContext, o: SandboxOrder): Promise<PageReply> => {
  if (o.status === PAID) return ok(messagePage('Already paid', `Order ${o.merchantOrderId} is paid.`))
  const products = offeredProducts(o)
  const offersQr = products.some((p) => p.methods.includes('THAI_QR'))
  const body = html`<h1>Checkout</h1>
${orderRows(o)}
${productsTable(o)}
<form method="post" action="/checkout/${o.orderId}/pay" id="pay">
${methodChoices(products)}
${offersQr ? html`<p class="note">Thai QR: scan with a banking app, then press Pay.</p>${await qrImage(ctx, o)}` : html``}
</form>
<div class="actions">
<button type="submit" form="pay" class="primary">Pay ${o.amount} ${o.currency}</button>
<form method="post" action="/checkout/${o.orderId}/cancel"><button type="submit" class="secondary">Cancel</button></form>
</div>`
  return ok(page(`Checkout ${o.merchantOrderId}`, body))
}

/** The product and method of a checkout choice, when it is one the page offered. */
export const parseChoice = (o: SandboxOrder, value: unknown): { readonly productCode: string; readonly paymentMethod: string } | undefined => {
  const products = offeredProducts(o)
  for (const p of products) for (const m of p.methods) if (value === choiceValue(p.productCode, m)) return { productCode: p.productCode, paymentMethod: m }
  // Without a choice (a form without radio buttons), the first offered method.
  const first = products[0]
  const method = first?.methods[0]
  return value === undefined && first !== undefined && method !== undefined ? { productCode: first.productCode, paymentMethod: method } : undefined
}
