import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, preHandlerAsyncHookHandler } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { AsOf, StreamKind } from '../../application/as-of.ts'
import type { UseCaseResult } from '../../application/results.ts'
import { MerchantOrderId, MerchantRefundId, MerchantSubscribeId } from '../../domain/gateway/fields.ts'
import { decodeAt } from '../../domain/violations.ts'
import type { AuditKind, Recording } from '../../application/index.ts'
import type { Cause } from '../../application/deps.ts'
import type { Violation } from '../../domain/violations.ts'
import type { ApiScope, TokenMatcher } from './api-tokens.ts'
import { requireScope, tokenOf } from './auth.ts'
import { invalidRequest, sendError } from './errors.ts'
import { CHECKOUT_APPLY_SERVICE, DIRECT_SERVICES, SUBSCRIPTION_CREATE_SERVICE, SUBSCRIPTION_UPDATE_SERVICE } from '../../domain/gateway/services.ts'
import { answer, errors, oneOfStrings, pathParams, route, schemaRef, string, withExample, type JsonSchema } from './openapi.ts'
import { replyWith } from './replies.ts'

/**
 * The merchant API under `/v1` (JSON; bearer tokens with scopes). Each route only parses the HTTP
 * parts (path, query, body) and hands them to the application; the answers are `UseCaseResult`s.
 */
export type V1Deps = {
  readonly recording: Pick<Recording, 'payments' | 'refunds' | 'subscriptions' | 'audit'>
  readonly tokens: TokenMatcher
  /** `?as_of=` on the reads of a payment, refund or subscription: the view as the log stood then. */
  readonly asOf?: AsOfReads
}

/** Resolves an `as_of` text (an instant with its offset, or a log position) and folds a stream up to it. */
export type AsOfReads = {
  readonly resolve: (text: string) => Promise<E.Either<string, AsOf>>
  readonly view: (kind: StreamKind, id: string, asOf: AsOf) => Promise<UseCaseResult>
}

const asOfTextOf = (request: FastifyRequest): unknown => (t.UnknownRecord.is(request.query) ? request.query['as_of'] : undefined)

const ID_CODECS = { order: MerchantOrderId, refund: MerchantRefundId, subscription: MerchantSubscribeId } as const
const ID_PATHS = { order: 'merchant_order_id', refund: 'merchant_refund_id', subscription: 'merchant_subscribe_id' } as const

/** Answers a read with `?as_of=` (undefined when the request has none). */
const answerAsOf = async (deps: V1Deps, request: FastifyRequest, reply: FastifyReply, kind: StreamKind, id: string): Promise<FastifyReply | undefined> => {
  const text = asOfTextOf(request)
  if (text === undefined) return undefined
  if (typeof text !== 'string' || text === '') return invalidRequest(reply, [{ path: 'as_of', rule: 'must be given once, not empty' }])
  if (refreshOf(request) === true) return invalidRequest(reply, [{ path: 'as_of', rule: 'cannot be combined with refresh=true (a past state is not refreshed)' }])
  if (deps.asOf === undefined) return invalidRequest(reply, [{ path: 'as_of', rule: 'is not served by this process' }])
  const checked = decodeAt(ID_PATHS[kind], ID_CODECS[kind], id)
  if (E.isLeft(checked)) return invalidRequest(reply, checked.left)
  const asOf = await deps.asOf.resolve(text)
  if (E.isLeft(asOf)) return invalidRequest(reply, [{ path: 'as_of', rule: asOf.left }])
  return replyWith(reply, await deps.asOf.view(kind, id, asOf.right))
}

const causeOf = (request: FastifyRequest): Cause => {
  const token = tokenOf(request)
  return { correlationId: request.id, causationId: request.id, ...(token === undefined ? {} : { actor: token.name }) }
}

const paramOf = (request: FastifyRequest, name: string): string => {
  const value = t.UnknownRecord.is(request.params) ? request.params[name] : undefined
  return typeof value === 'string' ? value : ''
}

/** `?refresh=true|false`; anything else is an input error. */
const refreshOf = (request: FastifyRequest): boolean | Violation => {
  const raw = t.UnknownRecord.is(request.query) ? request.query['refresh'] : undefined
  if (raw === undefined || raw === 'false') return false
  if (raw === 'true') return true
  return { path: 'refresh', rule: 'must be true or false' }
}

const AUDIT_KINDS: ReadonlyArray<AuditKind> = ['order', 'refund', 'subscription']
const isAuditKind = (s: string): s is AuditKind => (AUDIT_KINDS as ReadonlyArray<string>).includes(s)

/** Bodies of the API are JSON; a form or text body is refused before it is read as fields. */
const jsonOnly: preHandlerAsyncHookHandler = async (request, reply) => {
  const type = request.headers['content-type']
  if (request.body !== undefined && (type === undefined || !/^application\/json\b/i.test(type))) {
    return sendError(reply, 415, { error: 'unsupported_media_type', message: 'send the body as application/json' })
  }
  return undefined
}

export const registerV1Routes =
  (deps: V1Deps) =>
  (app: FastifyInstance): void => {
    const { payments, refunds, subscriptions, audit } = deps.recording
    const scope = (s: ApiScope) => requireScope(deps.tokens, s)
    // `schema` documents the route for /v1/openapi.json only: bodies are validated by the codecs (openapi.ts).
    const write = (schema: FastifySchema) => ({ schema, preHandler: [scope('payments:write'), jsonOnly] })
    const read = (schema: FastifySchema) => ({ schema, preHandler: scope('read') })

    app.post('/v1/payments', write(V1_DOCS.createPayment), async (req, reply) => replyWith(reply, await payments.create('direct', req.body, causeOf(req))))
    app.post('/v1/checkouts', write(V1_DOCS.createCheckout), async (req, reply) => replyWith(reply, await payments.create('checkout', req.body, causeOf(req))))
    app.get('/v1/payments/:merchant_order_id', read(V1_DOCS.getPayment), async (req, reply) => {
      const past = await answerAsOf(deps, req, reply, 'order', paramOf(req, 'merchant_order_id'))
      if (past !== undefined) return past
      const refresh = refreshOf(req)
      if (typeof refresh !== 'boolean') return invalidRequest(reply, [refresh])
      return replyWith(reply, await payments.get(paramOf(req, 'merchant_order_id'), refresh, causeOf(req)))
    })

    app.post('/v1/refunds', write(V1_DOCS.trackRefund), async (req, reply) => replyWith(reply, await refunds.track(req.body, causeOf(req))))
    app.get('/v1/refunds/:merchant_refund_id', read(V1_DOCS.getRefund), async (req, reply) => {
      const past = await answerAsOf(deps, req, reply, 'refund', paramOf(req, 'merchant_refund_id'))
      if (past !== undefined) return past
      const refresh = refreshOf(req)
      if (typeof refresh !== 'boolean') return invalidRequest(reply, [refresh])
      return replyWith(reply, await refunds.get(paramOf(req, 'merchant_refund_id'), refresh, causeOf(req)))
    })

    app.post('/v1/subscriptions', write(V1_DOCS.createSubscription), async (req, reply) => replyWith(reply, await subscriptions.create(req.body, causeOf(req))))
    app.get('/v1/subscriptions/:id', read(V1_DOCS.getSubscription), async (req, reply) => (await answerAsOf(deps, req, reply, 'subscription', paramOf(req, 'id'))) ?? replyWith(reply, await subscriptions.get(paramOf(req, 'id'))))
    app.put('/v1/subscriptions/:id', write(V1_DOCS.updateSubscription), async (req, reply) => replyWith(reply, await subscriptions.update(paramOf(req, 'id'), req.body, causeOf(req))))
    app.delete('/v1/subscriptions/:id', { schema: V1_DOCS.cancelSubscription, preHandler: scope('payments:write') }, async (req, reply) => replyWith(reply, await subscriptions.cancel(paramOf(req, 'id'), causeOf(req))))
    app.post('/v1/subscriptions/:id/cancel', { schema: V1_DOCS.cancelSubscriptionByPost, preHandler: scope('payments:write') }, async (req, reply) => replyWith(reply, await subscriptions.cancel(paramOf(req, 'id'), causeOf(req))))

    app.get('/v1/audit/:kind/:id', { schema: V1_DOCS.audit, preHandler: scope('audit') }, async (req, reply) => {
      const kind = paramOf(req, 'kind')
      if (!isAuditKind(kind)) return invalidRequest(reply, [{ path: 'kind', rule: 'must be order, refund or subscription' }])
      return replyWith(reply, await audit(kind, paramOf(req, 'id')))
    })
  }

/* OpenAPI documentation of the routes (documentation-only schemas, as openapi.ts explains). */

const openObject = (description: string): JsonSchema => ({ type: 'object', description, additionalProperties: true })
const url = (description: string): JsonSchema => ({ type: 'string', format: 'uri', description })

const AS_OF = {
  type: 'string',
  description: 'the state as the event log stood at an instant (ISO-8601 with its offset, e.g. 2026-11-20T17:00:00+07:00) or a global log position; folded from the log, not refreshed',
}

const refreshQuery: JsonSchema = {
  type: 'object',
  properties: { refresh: { ...oneOfStrings(['true', 'false']), default: 'false', description: 'true: query the gateway first and record the observation' }, as_of: AS_OF },
}

const asOfQuery: JsonSchema = { type: 'object', properties: { as_of: AS_OF } }

/* Request bodies: the gateway spec's requests without `version`; `merchant_id` may be left out (it must be satang's merchant). */

const merchantFields = {
  version: oneOfStrings(['v1'], 'may be left out'),
  merchant_id: string('may be left out; must be the merchant satang serves'),
}
const customer = openObject('Customer: payer info (merchant_user_id, full_name, …, address)')
const products = { type: 'array', description: 'Product list', items: openObject('Product') }

const directPaymentBody: JsonSchema = {
  type: 'object',
  description:
    'Gateway endpoint 1 (create payment, direct). payment_method must belong to the service; conditional fields (buyer_identity_code, auth_code, appid, openid, client, card, app_callback_url, mobile_number, link_account_id) are required in their case and refused in any other.',
  required: ['service', 'merchant_order_id', 'order_amount', 'order_currency'],
  properties: {
    ...merchantFields,
    service: oneOfStrings(DIRECT_SERVICES),
    store_id: string(),
    merchant_order_id: string(),
    order_amount: string('amount text, more than 0, e.g. 250.00'),
    order_currency: oneOfStrings(['THB'], 'THB, the only currency the gateway uses'),
    order_desc: string('required (order_info is accepted in its place)'),
    order_info: string(),
    product_code: string(),
    payment_method: string('required (payment_type in its place on svc.wallet_a.offline.pay)'),
    payment_type: string('svc.wallet_a.offline.pay only'),
    user_id: string('svc.wallet_a.offline.pay only'),
    customer: { ...customer, description: 'required unless service is svc.wallet_a.offline.pay' },
    products,
    notify_url: url('notification URL'),
    redirect_url: url('where the payer returns'),
    buyer_identity_code: string(),
    auth_code: string(),
    appid: string(),
    openid: string(),
    client: openObject('Client (H5_PAYMENT)'),
    card: openObject('Card (svc.bankcard.pay)'),
    app_callback_url: string(),
    mobile_number: string(),
    link_account_id: string('required for svc.direct-debit.pay'),
  },
  additionalProperties: false,
}

const checkoutBody: JsonSchema = {
  type: 'object',
  description: 'Gateway endpoint 4 (hosted checkout, svc.checkout.apply); `service` may be left out.',
  required: ['merchant_order_id', 'order_amount', 'order_currency', 'order_desc', 'customer'],
  properties: {
    ...merchantFields,
    service: oneOfStrings([CHECKOUT_APPLY_SERVICE]),
    store_id: string(),
    merchant_order_id: string(),
    order_amount: string('amount text, more than 0, e.g. 250.00'),
    order_currency: oneOfStrings(['THB'], 'THB, the only currency the gateway uses'),
    order_desc: string(),
    customer,
    product_code: string(),
    payment_method: string('if given, the payer gets that method page'),
    products,
    notify_url: url('notification URL'),
    redirect_url: url('where the payer returns'),
    cancel_url: url('where the payer goes on cancel'),
    interest_absorb: oneOfStrings(['MERCHANT', 'USER']),
    link_account_id: { type: 'array', items: string() },
  },
  additionalProperties: false,
}

const refundBody: JsonSchema = {
  type: 'object',
  description: 'A refund to track: the refund itself enters the ledger by refund notification or refund query.',
  required: ['merchant_refund_id', 'merchant_order_id'],
  properties: { merchant_id: merchantFields.merchant_id, merchant_refund_id: string(), merchant_order_id: string() },
  additionalProperties: false,
}

const planFields = {
  ...merchantFields,
  merchant_subscribe_id: string(),
  plan_name: string(),
  plan_desc: string(),
  interval_type: oneOfStrings(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']),
  interval: string('digits; DAILY 7–365, WEEKLY 1–4, MONTHLY 1–12, YEARLY 1'),
  total_terms: string('digits, at least 2'),
  billing_amount: string('amount text, more than 0'),
  billing_currency: oneOfStrings(['THB'], 'THB, the only currency the gateway uses'),
  retry: oneOfStrings(['Y', 'N']),
  start_date: { type: 'string', format: 'date', description: 'yyyy-MM-dd; absent: starts at once' },
}
const planRequired = ['plan_name', 'interval_type', 'interval', 'total_terms', 'billing_amount', 'billing_currency', 'retry']

const subscriptionCreateBody: JsonSchema = {
  type: 'object',
  description: 'Gateway endpoint 6 (svc.recurring.create); `service` may be left out.',
  required: ['merchant_subscribe_id', ...planRequired, 'customer'],
  properties: {
    ...planFields,
    service: oneOfStrings([SUBSCRIPTION_CREATE_SERVICE]),
    customer,
    store_id: string(),
    notify_url: url('notification URL'),
    redirect_url: url('where the payer returns'),
  },
  additionalProperties: false,
}

const subscriptionUpdateBody: JsonSchema = {
  type: 'object',
  description: 'Gateway endpoint 7 plan fields (svc.recurring.update); merchant_subscribe_id comes from the path (if sent, it must match).',
  required: planRequired,
  properties: { ...planFields, service: oneOfStrings([SUBSCRIPTION_UPDATE_SERVICE]) },
  additionalProperties: false,
}

/* Examples: what the sandbox answers in the merchant flow of docs/merchant-api.md. */

const MERCHANT = '140000000000000001'
const NO_REVIEW = { needs_review: false, unclassified_statuses: [], discrepancies: [] }

const checkoutExample = {
  merchant_order_id: 'ORD-1',
  order_amount: '250.00',
  order_currency: 'THB',
  order_desc: 'Coffee',
  customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
  redirect_url: 'https://shop.example/thanks',
}

const directExample = {
  service: 'svc.thaiqr.pay',
  merchant_order_id: 'ORD-2',
  order_amount: '120.50',
  order_currency: 'THB',
  order_desc: 'Iced coffee',
  payment_method: 'THAI_QR',
  customer: { merchant_user_id: 'u-1' },
  notify_url: 'https://shop.example/notify',
}

const paymentExample = (status: 'PI' | 'PS') => ({
  merchant_id: MERCHANT,
  merchant_order_id: 'ORD-1',
  operation: 'checkout',
  service: 'svc.checkout.apply',
  payment_method: null,
  product_code: null,
  order_amount: '250.00',
  order_currency: 'THB',
  order_desc: 'Coffee',
  created_at: '2026-11-20T10:00:00.000Z',
  request: { phase: 'accepted', accepted_at: '2026-11-20T10:00:00.412Z' },
  gateway_order_id: '20261120170000000001',
  link_url: 'http://127.0.0.1:7070/checkout/20261120170000000001',
  gateway_response: { order_id: '20261120170000000001', link_url: 'http://127.0.0.1:7070/checkout/20261120170000000001' },
  status:
    status === 'PI'
      ? { code: 'PI', meaning: 'checkout created (after checkout apply)', outcome: 'pending', final: false, source: 'api_response', observed_at: '2026-11-20T10:00:00.412Z' }
      : { code: 'PS', meaning: 'paid', outcome: 'succeeded', final: true, source: 'notification', observed_at: '2026-11-20T10:02:13.000Z' },
  paid: status === 'PS',
  redirect_status: null,
  ...NO_REVIEW,
  merchant_urls: { notify_url: null, redirect_url: 'https://shop.example/thanks', cancel_url: null },
})

const refundExample = {
  merchant_id: MERCHANT,
  merchant_refund_id: 'RF-1',
  merchant_order_id: 'ORD-1',
  tracked_by: 'merchant',
  tracked_at: '2026-11-21T09:00:00.000Z',
  refund_order_id: '20261121160000000002',
  status: { code: 'RS', meaning: 'refund succeeded', outcome: 'succeeded', final: true, source: 'query', observed_at: '2026-11-21T09:00:05.000Z' },
  recorded: { refund_amount: '250.00', refund_currency: 'THB', recorded_at: '2026-11-21T09:00:05.120Z' },
  ...NO_REVIEW,
}

const subscriptionExample = {
  merchant_id: MERCHANT,
  merchant_subscribe_id: 'SUB-1',
  status: 'CREATED',
  lifecycle: 'created',
  recurring_bill_id: 'RB20261120000001',
  link_url: 'http://127.0.0.1:7070/subscriptions/RB20261120000001',
  plan: { plan_name: 'Coffee club', plan_desc: null, interval_type: 'MONTHLY', interval: 1, total_terms: 12, billing_amount: '199.00', billing_currency: 'THB', retry: 'Y', start_date: '2026-11-20' },
  pending: null,
  charges: null,
  needs_review: false,
  discrepancies: [],
  merchant_urls: { notify_url: null, redirect_url: 'https://shop.example/subscribed' },
}

const subscriptionCreateExample = {
  merchant_subscribe_id: 'SUB-1',
  plan_name: 'Coffee club',
  interval_type: 'MONTHLY',
  interval: '1',
  total_terms: '12',
  billing_amount: '199.00',
  billing_currency: 'THB',
  retry: 'Y',
  customer: { merchant_user_id: 'u-1' },
  redirect_url: 'https://shop.example/subscribed',
}

const subscriptionUpdateExample = { plan_name: 'Coffee club', interval_type: 'MONTHLY', interval: '1', total_terms: '6', billing_amount: '249.00', billing_currency: 'THB', retry: 'Y' }

const payment = (description: string, example?: unknown): JsonSchema => answer(description, schemaRef('Payment'), example)
const refund = (description: string, example?: unknown): JsonSchema => answer(description, schemaRef('Refund'), example)
const subscription = (description: string, example?: unknown): JsonSchema => answer(description, schemaRef('Subscription'), example)

const created = (what: string): { readonly [status: number]: JsonSchema } => ({
  201: payment(`${what} recorded and accepted by the gateway`, paymentExample('PI')),
  200: payment('the same request again: answered from the log (`replayed: true`), never sent twice; a copy that arrives while the first is in flight waits for its outcome', { ...paymentExample('PI'), replayed: true }),
  202: payment('outcome unknown (`request.phase = outcome_unknown`): resolved by payment queries'),
})

const orderId = ['merchant_order_id', string()] as const
const refundId = ['merchant_refund_id', string()] as const
const subscriptionId = ['id', string('merchant_subscribe_id')] as const

const auditEvent: JsonSchema = {
  type: 'object',
  required: ['stream_revision', 'position', 'event_id', 'type', 'schema_version', 'data'],
  properties: {
    stream_revision: { type: 'integer', description: '0 for the stream\'s first event' },
    position: string("the event's global position in the log"),
    event_id: { type: 'string', format: 'uuid' },
    type: string('the event type, e.g. OrderCreated'),
    schema_version: { type: 'integer' },
    source: string('who recorded it: merchant_api, notification, query, operator, …'),
    recorded_at: { type: 'string', format: 'date-time' },
    occurred_at: { type: 'string', format: 'date-time' },
    correlation_id: string(),
    causation_id: string(),
    trace_id: { type: ['string', 'null'] },
    signature: { type: ['object', 'null'], description: 'callbacks: whether the gateway signature verified (and why not); null for anything else' },
    metadata: openObject('the event metadata as stored'),
    data: openObject('the event data as stored (payer personal data redacted)'),
  },
  additionalProperties: true,
}

const auditExample = {
  kind: 'order',
  id: 'ORD-1',
  stream: `order-${MERCHANT}-ORD-1`,
  events: [
    {
      stream_revision: 0,
      position: '0000000000000001',
      event_id: '9a3f4a52-52b4-4d8e-9a55-0d0e4a6b7c01',
      type: 'OrderCreated',
      schema_version: 1,
      source: 'merchant_api',
      recorded_at: '2026-11-20T10:00:00.000Z',
      occurred_at: '2026-11-20T10:00:00.000Z',
      correlation_id: '0b6c1c0e-6a53-4b8e-9f3e-0a4c2b7e1d20',
      causation_id: '0b6c1c0e-6a53-4b8e-9f3e-0a4c2b7e1d20',
      trace_id: null,
      signature: null,
      metadata: { source: 'merchant_api', actor: 'shop' },
      data: { merchantOrderId: 'ORD-1', amount: '25000', currency: 'THB' },
    },
  ],
}

/** DELETE and `POST …/cancel` do the same, under an operationId each. */
const cancelSubscription = (operationId: string): FastifySchema =>
  route(
    'Cancel a subscription',
    'payments:write',
    {
      operationId,
      params: pathParams(subscriptionId),
      response: { 200: subscription('cancelled', { ...subscriptionExample, status: 'CANCELLED', lifecycle: 'cancelled' }), 202: subscription('outcome unknown'), ...errors(400, 404, 409, 422, 502, 503) },
    },
    'No body. Repeating it sends nothing.',
  )

/** The `schema` of each `/v1` route (docs/merchant-api.md). */
export const V1_DOCS = {
  createPayment: route('Create a direct payment', 'payments:write', {
    operationId: 'createPayment',
    body: withExample(directPaymentBody, directExample),
    response: { ...created('the payment'), ...errors(400, 409, 413, 415, 422, 502, 503) },
  }),
  createCheckout: route('Create a hosted checkout', 'payments:write', {
    operationId: 'createCheckout',
    body: withExample(checkoutBody, checkoutExample),
    response: { ...created('the checkout'), ...errors(400, 409, 413, 415, 422, 502, 503) },
  }),
  getPayment: route('A payment', 'read', {
    operationId: 'getPayment',
    params: pathParams(orderId),
    querystring: refreshQuery,
    response: { 200: payment('the payment as recorded', { ...paymentExample('PS'), served_from: 'read_model', read_model_position: '0000000000000004' }), ...errors(400, 404, 502, 503) },
  }),
  trackRefund: route(
    'Track a refund of an order',
    'payments:write',
    {
      operationId: 'trackRefund',
      body: withExample(refundBody, { merchant_refund_id: 'RF-1', merchant_order_id: 'ORD-1' }),
      response: {
        201: refund('now tracked', { ...refundExample, refund_order_id: null, status: null, recorded: null }),
        200: refund('already tracked'),
        ...errors(400, 404, 409, 413, 415, 503),
      },
    },
    'The refund itself is made at the gateway (its refund API or back office); satang tracks it and records it from the refund notification or a refund query.',
  ),
  getRefund: route('A tracked refund', 'read', {
    operationId: 'getRefund',
    params: pathParams(refundId),
    querystring: refreshQuery,
    response: { 200: refund('the refund as recorded', { ...refundExample, served_from: 'event_log', refresh: { found: true } }), ...errors(400, 404, 502, 503) },
  }),
  createSubscription: route('Create a subscription', 'payments:write', {
    operationId: 'createSubscription',
    body: withExample(subscriptionCreateBody, subscriptionCreateExample),
    response: {
      201: subscription('created', subscriptionExample),
      202: subscription('outcome unknown'),
      200: subscription('the same request again, from the log'),
      ...errors(400, 409, 413, 415, 422, 502, 503),
    },
  }),
  getSubscription: route('A subscription', 'read', {
    operationId: 'getSubscription',
    params: pathParams(subscriptionId),
    querystring: asOfQuery,
    response: { 200: subscription('the subscription as recorded', { ...subscriptionExample, served_from: 'read_model', read_model_position: '0000000000000007' }), ...errors(400, 404, 503) },
  }),
  updateSubscription: route('Update a subscription plan', 'payments:write', {
    operationId: 'updateSubscription',
    params: pathParams(subscriptionId),
    body: withExample(subscriptionUpdateBody, subscriptionUpdateExample),
    response: {
      200: subscription('updated', { ...subscriptionExample, plan: { ...subscriptionExample.plan, total_terms: 6, billing_amount: '249.00' } }),
      202: subscription('outcome unknown'),
      ...errors(400, 404, 409, 413, 415, 422, 502, 503),
    },
  }),
  cancelSubscription: cancelSubscription('cancelSubscription'),
  cancelSubscriptionByPost: cancelSubscription('cancelSubscriptionByPost'),
  audit: route('The recorded events of an order, refund or subscription', 'audit', {
    operationId: 'getAuditTrail',
    params: pathParams(['kind', oneOfStrings(['order', 'refund', 'subscription'])], ['id', string('merchant_order_id, merchant_refund_id or merchant_subscribe_id')]),
    response: {
      200: answer(
        'the stream and its events, oldest first',
        { type: 'object', required: ['kind', 'id', 'stream', 'events'], properties: { kind: string(), id: string(), stream: string(), events: { type: 'array', items: auditEvent } } },
        auditExample,
      ),
      ...errors(400, 404, 503),
    },
  }),
} as const satisfies Readonly<Record<string, FastifySchema>>
