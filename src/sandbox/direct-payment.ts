import { createHash, randomBytes } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { formatBangkokDateTime } from '../domain/bangkok-time.ts'
import { expectedDirectResponseFields, type DirectResponseField } from '../domain/gateway/direct-payment-response.ts'
import { orderDescOf, paymentMethodOf, type DirectPaymentRequest } from '../domain/gateway/direct-payment.ts'
import type { DirectService } from '../domain/gateway/services.ts'
import { formatAmount, parseAmount } from '../domain/money.ts'
import { nowOf, type SandboxContext } from './context.ts'
import { reject, type SandboxRejection } from './error-table.ts'
import { gatewayBillId } from './ids.ts'
import { payOrder } from './payments.ts'
import type { SandboxOrder } from './state.ts'
import { thaiQrPayload } from './thai-qr.ts'

/** The status of a direct payment at creation (States: "direct payment creation → WP"). */
export const WAITING_FOR_PAYMENT = 'WP'

/** Methods the payer completes outside any page of ours: the merchant scans, or the bank app is notified. */
const SERVER_COMPLETED_METHODS: ReadonlySet<string> = new Set(['MERCHANT_SCAN', 'BANKAPP_A_NOTIFICATION', 'BANKAPP_B_NOTIFICATION'])

/** Whether an order of this service/method is completed by the control API (or at once with payImmediately). */
export const completesWithoutPayer = (service: string, method: string): boolean =>
  SERVER_COMPLETED_METHODS.has(method) || service === 'svc.direct-debit.pay'

/**
 * Optional response fields the sandbox sends. Of the rest of the optional fields: `create_time` on
 * wallet_a offline is named `order_create_time` there; a direct debit has no page, so no `link_url`.
 */
const SENT_OPTIONAL: ReadonlySet<DirectResponseField> = new Set<DirectResponseField>([
  'merchant_id',
  'merchant_order_id',
  'due_date',
  'payment_type',
  'link_url',
  'link_url_app',
])

/** Exactly the fields of `expectedDirectResponseFields` that the sandbox returns for `service`/`method`. */
export const sandboxResponseFields = (service: DirectService, method: string): ReadonlyArray<DirectResponseField> => {
  const { required, optional } = expectedDirectResponseFields(service, method)
  const sent = optional.filter((f) => SENT_OPTIONAL.has(f) && !(f === 'link_url' && service === 'svc.direct-debit.pay'))
  return [...required, ...sent]
}

const nonce = (bytes = 16): string => randomBytes(bytes).toString('hex')
const digest = (text: string): string => createHash('sha256').update(text).digest('base64')

/** `pay_params` with the keys the spec lists for each case; the values are sandbox tokens. */
const payParams = (service: DirectService, method: string, req: DirectPaymentRequest, order: SandboxOrder, epochSec: string): Record<string, string> => {
  const prepayId = `sbx${order.orderId}`
  if (service === 'svc.wallet_a.offline.pay') return { tradeNo: order.orderId }
  if (method === 'INAPP_PAYMENT') {
    const nonceStr = nonce()
    return { appId: req.appid ?? '', timeStamp: epochSec, nonceStr, package: `prepay_id=${prepayId}`, signType: 'RSA', paySign: digest(`${prepayId}${nonceStr}${epochSec}`) }
  }
  const noncestr = nonce()
  return {
    appid: req.appid ?? '',
    partnerid: order.merchantId,
    prepayid: prepayId,
    package: 'Sign=WXPay',
    noncestr,
    timestamp: epochSec,
    sign: digest(`${prepayId}${noncestr}${epochSec}`),
  }
}

/** The value of one response field for a new order. */
const fieldValue = (field: DirectResponseField, ctx: SandboxContext, req: DirectPaymentRequest, order: SandboxOrder, method: string): unknown => {
  const settings = ctx.settings()
  const service = req.service
  const epochSec = String(Math.floor(order.createdAtMs / 1000))
  switch (field) {
    case 'merchant_id':
      return order.merchantId
    case 'merchant_order_id':
      return order.merchantOrderId
    case 'order_id':
      return order.orderId
    case 'order_status':
      return order.status
    case 'order_amount':
      return order.amount
    case 'order_currency':
      return order.currency
    case 'create_time':
    case 'order_create_time':
      return order.createTime
    case 'due_date':
      return formatBangkokDateTime(new Date(order.createdAtMs + settings.linkExpireSec * 1000))
    case 'payment_type':
      return method
    case 'link_url':
      return order.linkUrl
    case 'link_url_app':
      // "svc.wallet_d.pay (may be null)": the sandbox shows the null.
      return service === 'svc.wallet_d.pay' ? null : `${order.linkUrl ?? ''}?via=app`
    case 'link_url_expire_sec':
      return String(settings.linkExpireSec)
    case 'qr_code':
      return order.qrCode
    case 'qr_code_expire_sec':
      return String(settings.qrExpireSec)
    case 'pay_params':
      return payParams(service, method, req, order, epochSec)
    case 'req_data_to_channel':
      return `app_id=sandbox&order_id=${order.orderId}&total_amount=${order.amount}&currency=${order.currency}&timestamp=${epochSec}&pay_url=${order.linkUrl ?? ''}`
  }
}

/**
 * Endpoint 1: creates a `WP` order and answers exactly the fields the spec lists for the service and
 * method. Links lead to the sandbox's pay page; a THAI_QR carries a Thai QR payload of the amount.
 */
export const createDirectPayment = (ctx: SandboxContext, req: DirectPaymentRequest): E.Either<SandboxRejection, Record<string, unknown>> => {
  if (ctx.store.orderOf(req.merchant_id, req.merchant_order_id) !== undefined) {
    return E.left(reject('duplicateId', `merchant_order_id ${req.merchant_order_id} already exists`))
  }
  const amount = parseAmount(req.order_amount)
  // The request codec has checked the amount.
  if (E.isLeft(amount)) return E.left(reject('invalidParameter', `order_amount: ${amount.left.join('; ')}`))
  const method = paymentMethodOf(req) ?? ''
  const fields = sandboxResponseFields(req.service, method)
  const now = nowOf(ctx)
  const orderId = gatewayBillId(now.instant, ctx.store.nextSequence())
  const settings = ctx.settings()
  const hasQr = fields.includes('qr_code')
  const order: SandboxOrder = {
    kind: 'direct',
    merchantId: req.merchant_id,
    merchantOrderId: req.merchant_order_id,
    orderId,
    status: WAITING_FOR_PAYMENT,
    amount: formatAmount(amount.right),
    requestedAmount: formatAmount(amount.right),
    currency: req.order_currency,
    description: orderDescOf(req) ?? '',
    createTime: now.text,
    createdAtMs: now.instant.getTime(),
    service: req.service,
    paymentMethod: method,
    expiresAtMs: now.instant.getTime() + (hasQr ? settings.qrExpireSec : settings.linkExpireSec) * 1000,
    ...(req.product_code === undefined ? {} : { productCode: req.product_code }),
    ...(req.customer === undefined ? {} : { customer: req.customer }),
    ...(req.products === undefined ? {} : { products: req.products }),
    ...(req.notify_url === undefined ? {} : { notifyUrl: req.notify_url }),
    ...(req.redirect_url === undefined ? {} : { redirectUrl: req.redirect_url }),
    ...(fields.includes('link_url') ? { linkUrl: `${ctx.baseUrl()}/pay/${orderId}` } : {}),
    ...(hasQr ? { qrCode: thaiQrPayload({ promptPayId: settings.promptPayId, amount: amount.right }) } : {}),
  }
  ctx.store.putOrder(order)
  const data = Object.fromEntries(fields.map((f) => [f, fieldValue(f, ctx, req, order, method)]))
  if (settings.payImmediately && completesWithoutPayer(req.service, method)) {
    // The answer still says WP (creation); the payment completes right after, as a notification tells.
    const paid = payOrder(ctx, orderId)
    if (E.isLeft(paid)) ctx.log.error({ orderId, reason: paid.left.message }, 'payImmediately could not pay a new order')
  }
  return E.right(data)
}
