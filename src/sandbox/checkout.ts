import * as E from 'fp-ts/lib/Either.js'
import type { CheckoutApplyRequest } from '../domain/gateway/checkout.ts'
import { DIRECT_PAYMENT_METHODS } from '../domain/gateway/direct-payment-methods.ts'
import { formatAmount, parseAmount } from '../domain/money.ts'
import { nowOf, type SandboxContext } from './context.ts'
import { reject, type SandboxRejection } from './error-table.ts'
import { gatewayBillId } from './ids.ts'
import type { SandboxOrder } from './state.ts'

/** The status of a checkout order at creation (States: "checkout apply → PI"). */
export const CHECKOUT_CREATED = 'PI'

/** One payment product (first level) and its methods (second level), as the checkout page offers them. */
export type CheckoutProduct = { readonly productCode: string; readonly label: string; readonly methods: ReadonlyArray<string> }

/**
 * The products a sandbox merchant has "opened". The spec shows one product code (BANKCARD_PAY_ONLINE);
 * the others are named after the channels of endpoint 1.
 */
export const CHECKOUT_PRODUCTS: ReadonlyArray<CheckoutProduct> = [
  { productCode: 'THAI_QR', label: 'Thai QR (PromptPay)', methods: DIRECT_PAYMENT_METHODS['svc.thaiqr.pay'] },
  { productCode: 'BANKCARD_PAY_ONLINE', label: 'Credit or debit card', methods: DIRECT_PAYMENT_METHODS['svc.bankcard.pay'] },
  { productCode: 'MOBILE_BANKING', label: 'Mobile banking', methods: DIRECT_PAYMENT_METHODS['svc.mobile.banking.pay'] },
  { productCode: 'WALLET_A', label: 'Wallet A', methods: ['WEB_PAYMENT', 'WAP_PAYMENT'] },
  { productCode: 'WALLET_B', label: 'Wallet B', methods: ['H5_PAYMENT', 'DYNAMIC_CODE'] },
  { productCode: 'WALLET_C', label: 'Wallet C', methods: DIRECT_PAYMENT_METHODS['svc.wallet_c.pay'] },
  { productCode: 'WALLET_D', label: 'Wallet D', methods: DIRECT_PAYMENT_METHODS['svc.wallet_d.pay'] },
  { productCode: 'WALLET_E', label: 'Wallet E', methods: DIRECT_PAYMENT_METHODS['svc.wallet_e.pay'] },
  { productCode: 'WALLET_F', label: 'Wallet F', methods: DIRECT_PAYMENT_METHODS['svc.wallet_f.pay'] },
]

/**
 * What the page offers: every product, or only the requested `product_code` and/or `payment_method`
 * ("if given, the payer gets that page"). A code the catalogue does not know is offered as given.
 */
export const offeredProducts = (order: Pick<SandboxOrder, 'productCode' | 'paymentMethod'>): ReadonlyArray<CheckoutProduct> => {
  const { productCode, paymentMethod } = order
  const byProduct =
    productCode === undefined
      ? CHECKOUT_PRODUCTS
      : [CHECKOUT_PRODUCTS.find((p) => p.productCode === productCode) ?? { productCode, label: productCode, methods: paymentMethod === undefined ? [productCode] : [paymentMethod] }]
  if (paymentMethod === undefined) return byProduct
  const withMethod = byProduct.filter((p) => p.methods.includes(paymentMethod)).map((p) => ({ ...p, methods: [paymentMethod] }))
  if (withMethod.length > 0) return withMethod
  const first = byProduct[0]
  return [{ productCode: productCode ?? first?.productCode ?? paymentMethod, label: productCode === undefined ? paymentMethod : (first?.label ?? productCode), methods: [paymentMethod] }]
}

/** Endpoint 4: creates a `PI` order whose `link_url` is the sandbox checkout page. */
export const applyCheckout = (ctx: SandboxContext, req: CheckoutApplyRequest): E.Either<SandboxRejection, Record<string, unknown>> => {
  if (ctx.store.orderOf(req.merchant_id, req.merchant_order_id) !== undefined) {
    return E.left(reject('duplicateId', `merchant_order_id ${req.merchant_order_id} already exists`))
  }
  const amount = parseAmount(req.order_amount)
  if (E.isLeft(amount)) return E.left(reject('invalidParameter', `order_amount: ${amount.left.join('; ')}`))
  const now = nowOf(ctx)
  const orderId = gatewayBillId(now.instant, ctx.store.nextSequence())
  const linkUrl = `${ctx.baseUrl()}/checkout/${orderId}`
  const order: SandboxOrder = {
    kind: 'checkout',
    merchantId: req.merchant_id,
    merchantOrderId: req.merchant_order_id,
    orderId,
    status: CHECKOUT_CREATED,
    amount: formatAmount(amount.right),
    requestedAmount: formatAmount(amount.right),
    currency: req.order_currency,
    description: req.order_desc,
    createTime: now.text,
    createdAtMs: now.instant.getTime(),
    linkUrl,
    customer: req.customer,
    ...(req.product_code === undefined ? {} : { productCode: req.product_code }),
    ...(req.payment_method === undefined ? {} : { paymentMethod: req.payment_method }),
    ...(req.products === undefined ? {} : { products: req.products }),
    ...(req.notify_url === undefined ? {} : { notifyUrl: req.notify_url }),
    ...(req.redirect_url === undefined ? {} : { redirectUrl: req.redirect_url }),
    ...(req.cancel_url === undefined ? {} : { cancelUrl: req.cancel_url }),
  }
  ctx.store.putOrder(order)
  return E.right({
    merchant_id: order.merchantId,
    merchant_order_id: order.merchantOrderId,
    order_id: order.orderId,
    order_status: order.status,
    order_amount: order.amount,
    order_currency: order.currency,
    create_time: order.createTime,
    link_url: linkUrl,
  })
}
