import type { FastifyInstance, FastifyRequest, FastifySchema, preHandlerAsyncHookHandler } from 'fastify'
import * as t from 'io-ts'
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
      const refresh = refreshOf(req)
      if (typeof refresh !== 'boolean') return invalidRequest(reply, [refresh])
      return replyWith(reply, await payments.get(paramOf(req, 'merchant_order_id'), refresh, causeOf(req)))
    })

    app.post('/v1/refunds', write(V1_DOCS.trackRefund), async (req, reply) => replyWith(reply, await refunds.track(req.body, causeOf(req))))
    app.get('/v1/refunds/:merchant_refund_id', read(V1_DOCS.getRefund), async (req, reply) => {
      const refresh = refreshOf(req)
      if (typeof refresh !== 'boolean') return invalidRequest(reply, [refresh])
      return replyWith(reply, await refunds.get(paramOf(req, 'merchant_refund_id'), refresh, causeOf(req)))
    })

    app.post('/v1/subscriptions', write(V1_DOCS.createSubscription), async (req, reply) => replyWith(reply, await subscriptions.create(req.body, causeOf(req))))
    app.get('/v1/subscriptions/:id', read(V1_DOCS.getSubscription), async (req, reply) => replyWith(reply, await subscriptions.get(paramOf(req, 'id'))))
    app.put('/v1/subscriptions/:id', write(V1_DOCS.updateSubscription), async (req, reply) => replyWith(reply, await subscriptions.update(paramOf(req, 'id'), req.body, causeOf(req))))
    app.delete('/v1/subscriptions/:id', { schema: V1_DOCS.cancelSubscription, preHandler: scope('payments:write') }, async (req, reply) => replyWith(reply, await subscriptions.cancel(paramOf(req, 'id'), causeOf(req))))
    app.post('/v1/subscriptions/:id/cancel', { schema: V1_DOCS.cancelSubscription, preHandler: scope('payments:write') }, async (req, reply) => replyWith(reply, await subscriptions.cancel(paramOf(req, 'id'), causeOf(req))))

    app.get('/v1/audit/:kind/:id', { schema: V1_DOCS.audit, preHandler: scope('audit') }, async (req, reply) => {
      const kind = paramOf(req, 'kind')
      if (!isAuditKind(kind)) return invalidRequest(reply, [{ path: 'kind', rule: 'must be order, refund or subscription' }])
      return replyWith(reply, await audit(kind, paramOf(req, 'id')))
    })
  }
