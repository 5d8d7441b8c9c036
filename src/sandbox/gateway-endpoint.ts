import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import type * as t from 'io-ts'
import { CheckoutApplyRequest } from '../domain/gateway/checkout.ts'
import { DirectPaymentRequest } from '../domain/gateway/direct-payment.ts'
import { PaymentQueryRequest } from '../domain/gateway/payment-query.ts'
import { RefundQueryRequest } from '../domain/gateway/refund-query.ts'
import {
  CHECKOUT_APPLY_SERVICE,
  DIRECT_SERVICES,
  PAYMENT_QUERY_SERVICE,
  REFUND_QUERY_SERVICE,
  SUBSCRIPTION_CANCEL_SERVICE,
  SUBSCRIPTION_CREATE_SERVICE,
  SUBSCRIPTION_UPDATE_SERVICE,
} from '../domain/gateway/services.ts'
import { SubscriptionCancelRequest, SubscriptionCreateRequest, SubscriptionUpdateRequest } from '../domain/gateway/subscription.ts'
import { listOr } from '../domain/gateway/text-codecs.ts'
import { decodeAll, type Violation } from '../domain/violations.ts'
import { SIGN_TYPE } from '../domain/gateway/signing.ts'
import { applyCheckout } from './checkout.ts'
import type { SandboxContext } from './context.ts'
import { createDirectPayment } from './direct-payment.ts'
import { invalidParameters, rateLimited, reject, type SandboxRejection } from './error-table.ts'
import type { MerchantRegistry } from './merchants.ts'
import { queryPayment, queryRefund } from './queries.ts'
import { cancelSubscription, createSubscription, updateSubscription } from './subscriptions.ts'

/** What one operation does with decoded fields: `data` of the answer, `undefined` for "no data". */
type Operation = (ctx: SandboxContext, fields: Readonly<Record<string, unknown>>) => E.Either<SandboxRejection, unknown>

const operation =
  <A>(codec: t.Type<A, unknown, unknown>, handle: (ctx: SandboxContext, request: A) => E.Either<SandboxRejection, unknown>): Operation =>
  (ctx, fields) =>
    pipe(
      decodeAll(codec, fields),
      E.mapLeft(invalidParameters),
      E.flatMap((request) => handle(ctx, request)),
    )

const direct = operation(DirectPaymentRequest, createDirectPayment)

/** Every `service` of the spec and what the sandbox does with it. */
export const OPERATIONS: ReadonlyMap<string, Operation> = new Map<string, Operation>([
  ...DIRECT_SERVICES.map((s): [string, Operation] => [s, direct]),
  [PAYMENT_QUERY_SERVICE, operation(PaymentQueryRequest, queryPayment)],
  [REFUND_QUERY_SERVICE, operation(RefundQueryRequest, queryRefund)],
  [CHECKOUT_APPLY_SERVICE, operation(CheckoutApplyRequest, applyCheckout)],
  [SUBSCRIPTION_CREATE_SERVICE, operation(SubscriptionCreateRequest, createSubscription)],
  [SUBSCRIPTION_UPDATE_SERVICE, operation(SubscriptionUpdateRequest, updateSubscription)],
  [SUBSCRIPTION_CANCEL_SERVICE, operation(SubscriptionCancelRequest, cancelSubscription)],
])

/** One request to `{base}/gateway`, as the HTTP layer read it. */
export type GatewayRequest = {
  readonly method: 'GET' | 'POST'
  /** The JSON body (POST) or the query parameters (GET). */
  readonly fields: unknown
  readonly sign: string | undefined
  readonly signType: string | undefined
}

export type EndpointDeps = {
  readonly ctx: SandboxContext
  readonly merchants: MerchantRegistry
  /** 0 when the caller may go on, else the ms until it may (429). */
  readonly rateLimit: (merchantId: string) => number
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

/** A query parameter given twice arrives as a list: a field has one value. */
const repeatedParameters = (fields: Readonly<Record<string, unknown>>): ReadonlyArray<Violation> =>
  Object.entries(fields)
    .filter(([, v]) => Array.isArray(v))
    .map(([path]) => ({ path, rule: 'must be given once' }))

/** The signature check (Authentication): header `sign` over the fields with the merchant's key, `sign-type: RSA`. */
const checkSignature = (deps: EndpointDeps, merchantId: string, fields: Readonly<Record<string, unknown>>, req: GatewayRequest): E.Either<SandboxRejection, void> => {
  const verifier = deps.merchants.verifier(merchantId)
  if (verifier === undefined) return E.left(reject('unknownMerchant', `${merchantId} is not registered with this sandbox`))
  if (req.signType !== undefined && req.signType !== SIGN_TYPE) return E.left(reject('badSignature', `header sign-type must be ${SIGN_TYPE}`))
  if (req.sign === undefined || req.sign === '') return E.left(reject('badSignature', 'header sign is missing'))
  const verdict = verifier.verify(fields, req.sign)
  return verdict.valid ? E.right(undefined) : E.left(reject('badSignature', verdict.reason))
}

/**
 * `{base}/gateway`: reads the fields, limits the rate per `merchant_id`, authenticates (unknown merchant,
 * bad signature), decodes with the operation's codec (every violation listed) and runs the operation.
 * Authentication comes before validation, so an unauthenticated caller learns nothing about the rules.
 */
export const handleGatewayRequest = (deps: EndpointDeps, req: GatewayRequest): E.Either<SandboxRejection, unknown> => {
  if (!isRecord(req.fields)) {
    return E.left(invalidParameters([{ path: '', rule: req.method === 'POST' ? 'the body must be a JSON object of fields' : 'the query string must carry the fields' }]))
  }
  const fields = req.fields
  const merchantId = fields['merchant_id']
  if (typeof merchantId !== 'string' || merchantId === '') {
    return E.left(invalidParameters([{ path: 'merchant_id', rule: merchantId === undefined || merchantId === '' ? 'is required' : 'must be a string' }]))
  }
  const waitMs = deps.rateLimit(merchantId)
  if (waitMs > 0) return E.left(rateLimited(waitMs))
  const authenticated = checkSignature(deps, merchantId, fields, req)
  if (E.isLeft(authenticated)) return authenticated
  const repeated = req.method === 'GET' ? repeatedParameters(fields) : []
  if (repeated.length > 0) return E.left(invalidParameters(repeated))
  const service = fields['service']
  const run = typeof service === 'string' ? OPERATIONS.get(service) : undefined
  if (run === undefined) {
    const rule = service === undefined ? 'is required' : `must be ${listOr([...OPERATIONS.keys()])}`
    return E.left(invalidParameters([{ path: 'service', rule }]))
  }
  return run(deps.ctx, fields)
}
