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
import { V1_DOCS } from './openapi.ts'
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
    app.post('/v1/subscriptions/:id/cancel', { schema: V1_DOCS.cancelSubscription, preHandler: scope('payments:write') }, async (req, reply) => replyWith(reply, await subscriptions.cancel(paramOf(req, 'id'), causeOf(req))))

    app.get('/v1/audit/:kind/:id', { schema: V1_DOCS.audit, preHandler: scope('audit') }, async (req, reply) => {
      const kind = paramOf(req, 'kind')
      if (!isAuditKind(kind)) return invalidRequest(reply, [{ path: 'kind', rule: 'must be order, refund or subscription' }])
      return replyWith(reply, await audit(kind, paramOf(req, 'id')))
    })
  }
