import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import * as t from 'io-ts'
import { Counter, type Registry } from 'prom-client'
import type { CallbackContext, CallbackRoute, Callbacks, UnreadableBody } from '../../application/callbacks.ts'
import type { CallbackResult } from '../../application/results.ts'
import type { Violation } from '../../domain/violations.ts'
import { invalidRequest, sendError } from './errors.ts'
import { DEFAULT_MAX_FIELD_LENGTH, JSON_DEPTH_RULE, nestsDeeperThan, overLongFields, refusedKeys } from './json-body.ts'
import { makeRateLimiter } from './rate-limit.ts'

/**
 * The gateway's callbacks under `/callbacks` (satang hands these URLs to the gateway in place of the
 * merchant's own):
 * - `POST /callbacks/checkout-redirect`, `POST /callbacks/subscription-redirect`: the payer's browser
 *   posts the signed redirect form (endpoints 5 and 9). Once recorded, the browser is sent on with 303
 *   to the merchant's own `redirect_url`; a form that does not verify or cannot be decoded gets a 400
 *   page and goes nowhere.
 * - `POST /callbacks/notifications`: the gateway's JSON notifications. Recorded (or already recorded)
 *   → HTTP 200 `SUCCESS`; bad signature → 401, about nothing satang knows → 404, store unavailable →
 *   503: anything but `SUCCESS` makes the gateway deliver it again. Undecodable (it breaks the gateway
 *   spec, e.g. a NUL in a field) → quarantined: kept as CallbackQuarantined and acknowledged with 200
 *   `SUCCESS` (+ `x-satang-callback: rejected`), since delivering the same bytes again cannot help.
 * Anything not verified is quarantined (application/callbacks.ts), keyed by the fingerprint of the
 * bytes received. The routes read their bodies themselves (JSON or form, as raw bytes): the
 * fingerprint is over what arrived, and a body that is not JSON is quarantined too (answered 400).
 * Callbacks that do not verify are rate limited per source address; verified ones never are. Past the
 * day's quarantine budget of its kind an untrusted callback is answered the same, but only counted
 * (`satang_quarantine_refused_total{kind}`).
 */
export type CallbackDeps = {
  readonly callbacks: Callbacks
  readonly now: () => Date
  /** Where `satang_callbacks_total{kind,outcome}` is registered (optional). */
  readonly metrics?: Registry
  /** Callbacks that do not verify, per minute and source address, before 429 (`SATANG_CALLBACK_RATE_LIMIT`; 0 = no limit). Default 120. */
  readonly rateLimitPerMinute?: number
  /** Longest string or key of a callback's fields (`SATANG_HTTP_MAX_FIELD_LENGTH`); a longer one is quarantined. Default 4096. */
  readonly maxFieldLength?: number
}

/** Default `SATANG_CALLBACK_RATE_LIMIT`. */
export const DEFAULT_CALLBACK_RATE_LIMIT = 120

export const CALLBACK_PATHS = {
  checkoutRedirect: '/callbacks/checkout-redirect',
  subscriptionRedirect: '/callbacks/subscription-redirect',
  notifications: '/callbacks/notifications',
} as const

/** The body that acknowledges a notification (our default of the spec's "not shown" notification protocol). */
const ACKNOWLEDGEMENT = 'SUCCESS'

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${String(c.charCodeAt(0))};`)

const page = (reply: FastifyReply, status: number, title: string, text: string): FastifyReply =>
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(`<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></html>`)

/** What a callback route read: fields (any JSON value, or a form's fields), or why it could not. */
type ReadBody = { readonly _tag: 'Fields'; readonly fields: unknown } | { readonly _tag: 'Unreadable'; readonly body: UnreadableBody }

const mediaTypeOf = (request: FastifyRequest): string => (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''

const rawOf = (request: FastifyRequest): Buffer => (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0))

/** A form's fields, as @fastify/formbody reads them: a key given twice holds the list of its values. */
const formFields = (text: string): Record<string, unknown> => {
  const values = new Map<string, string[]>()
  for (const [k, v] of new URLSearchParams(text)) values.set(k, [...(values.get(k) ?? []), v])
  return Object.fromEntries([...values].map(([k, vs]) => [k, vs.length === 1 ? vs[0] : vs]))
}

const unreadable = (violations: ReadonlyArray<Violation>, fields: Readonly<Record<string, unknown>> | null): ReadBody => ({ _tag: 'Unreadable', body: { violations, fields } })

const readBody = (request: FastifyRequest, maxFieldLength: number): ReadBody => {
  const text = rawOf(request).toString('utf8')
  let fields: unknown
  if (mediaTypeOf(request) === 'application/x-www-form-urlencoded') fields = formFields(text)
  else {
    if (text.trim() === '') return unreadable([{ path: '', rule: 'body must not be empty' }], null)
    if (nestsDeeperThan(text)) return unreadable([{ path: '', rule: `body ${JSON_DEPTH_RULE}` }], null)
    try {
      fields = JSON.parse(text)
    } catch {
      return unreadable([{ path: '', rule: 'body must be valid JSON' }], null)
    }
    const poisoned = refusedKeys(fields)
    if (poisoned.length > 0) return unreadable(poisoned, null)
  }
  const tooLong = overLongFields(fields, maxFieldLength)
  if (tooLong.length > 0) return unreadable(tooLong, t.UnknownRecord.is(fields) ? fields : null)
  return { _tag: 'Fields', fields }
}

/** SHA-256 of what arrived: the route, the content type and the raw body (the gateway's signature is a field of it). */
const fingerprintOf = (route: CallbackRoute, request: FastifyRequest): string =>
  createHash('sha256').update(`${route}\n${request.headers['content-type'] ?? ''}\n`).update(rawOf(request)).digest('hex')

const contextOf = (route: CallbackRoute, request: FastifyRequest, now: () => Date): CallbackContext => ({ callbackId: request.id, receivedAt: now(), fingerprint: fingerprintOf(route, request), body: rawOf(request) })

const redirectAnswer = (reply: FastifyReply, r: CallbackResult): FastifyReply => {
  switch (r._tag) {
    case 'Recorded':
      if (r.redirectTo !== null) return reply.code(303).header('location', r.redirectTo).header('cache-control', 'no-store').send()
      return page(reply, 200, 'Thank you', `Your payment was received${r.status === null ? '' : ` (status ${r.status})`}. You may close this page.`)
    case 'Rejected':
      return page(reply, 400, 'Not verified', 'This payment result could not be verified and was not accepted.')
    case 'Unknown':
      return page(reply, 404, 'Unknown payment', 'This payment result is about an order this shop does not know.')
    case 'Unavailable':
      return page(reply, 503, 'Please try again', 'The payment result could not be recorded just now. Please reload this page.')
    default:
      return r satisfies never
  }
}

const acknowledged = (reply: FastifyReply): FastifyReply => reply.code(200).type('text/plain; charset=utf-8').send(ACKNOWLEDGEMENT)

/** A verified notification that cannot be decoded: kept (CallbackRejected), acknowledged so that the gateway stops redelivering it. */
const quarantined = (reply: FastifyReply): FastifyReply => acknowledged(reply.header('x-satang-callback', 'rejected'))

const notificationAnswer = (reply: FastifyReply, r: CallbackResult): FastifyReply => {
  switch (r._tag) {
    case 'Recorded':
      return acknowledged(reply)
    case 'Rejected':
      return r.reason === 'bad_signature' ? sendError(reply, 401, { error: 'bad_signature', message: r.detail }) : quarantined(reply)
    case 'Unknown':
      return sendError(reply, 404, { error: 'not_found', message: r.message })
    case 'Unavailable':
      return sendError(reply, 503, { error: 'unavailable', message: r.message, retriable: true })
    default:
      return r satisfies never
  }
}

const outcomeOf = (r: CallbackResult): string => (r._tag === 'Rejected' ? `rejected_${r.reason}` : r._tag.toLowerCase())

export const registerCallbackRoutes =
  (deps: CallbackDeps) =>
  (app: FastifyInstance): void => {
    const counter =
      deps.metrics === undefined
        ? undefined
        : new Counter({ name: 'satang_callbacks_total', help: 'gateway callbacks received, by kind and outcome', labelNames: ['kind', 'outcome'], registers: [deps.metrics] })
    const refused =
      deps.metrics === undefined
        ? undefined
        : new Counter({
            name: 'satang_quarantine_refused_total',
            help: 'untrusted callbacks counted but not kept: the quarantine budget of their kind for the Bangkok day was spent (SATANG_QUARANTINE_DAY_EVENTS, SATANG_QUARANTINE_DAY_BYTES)',
            labelNames: ['kind'],
            registers: [deps.metrics],
          })
    const counted = (kind: string, r: CallbackResult): CallbackResult => {
      counter?.inc({ kind, outcome: outcomeOf(r) })
      if (r._tag === 'Rejected' && r.overBudget !== undefined) refused?.inc({ kind: r.overBudget })
      return r
    }
    const limit = deps.rateLimitPerMinute ?? DEFAULT_CALLBACK_RATE_LIMIT
    const limiter = makeRateLimiter(limit, () => deps.now().getTime())
    const maxFieldLength = deps.maxFieldLength ?? DEFAULT_MAX_FIELD_LENGTH
    const limited = `more than ${String(limit)} callbacks a minute that do not verify came from this address (SATANG_CALLBACK_RATE_LIMIT); verified callbacks are never limited`

    /**
     * Reads the body, lets a verified callback through at once, counts any other against its source
     * address (answering 429 over the limit, recording nothing), then records or quarantines it.
     */
    const handle = async (
      route: CallbackRoute,
      request: FastifyRequest,
      reply: FastifyReply,
      record: (fields: unknown, ctx: CallbackContext) => Promise<CallbackResult>,
      answer: (reply: FastifyReply, r: CallbackResult) => FastifyReply,
      answerUnreadable: (reply: FastifyReply, r: CallbackResult, violations: ReadonlyArray<Violation>) => FastifyReply,
      answerLimited: (reply: FastifyReply) => FastifyReply,
    ): Promise<FastifyReply> => {
      const body = readBody(request, maxFieldLength)
      if (body._tag === 'Unreadable' || !deps.callbacks.trusted(body.fields)) {
        const wait = limiter.take(request.ip)
        if (wait !== null) {
          counter?.inc({ kind: route, outcome: 'rate_limited' })
          return answerLimited(reply.header('retry-after', String(wait)))
        }
      }
      const ctx = contextOf(route, request, deps.now)
      if (body._tag === 'Unreadable') return answerUnreadable(reply, counted(route, await deps.callbacks.unreadable(route, body.body, ctx)), body.body.violations)
      return answer(reply, counted(route, await record(body.fields, ctx)))
    }

    const redirectUnreadable = (reply: FastifyReply, r: CallbackResult): FastifyReply => redirectAnswer(reply, r)
    const notificationUnreadable = (reply: FastifyReply, r: CallbackResult, violations: ReadonlyArray<Violation>): FastifyReply =>
      r._tag === 'Rejected' ? invalidRequest(reply, violations) : notificationAnswer(reply, r)
    const redirectLimited = (reply: FastifyReply): FastifyReply => page(reply, 429, 'Too many requests', 'Too many payment results that could not be verified came from this address. Please try again in a minute.')
    const notificationLimited = (reply: FastifyReply): FastifyReply => sendError(reply, 429, { error: 'rate_limited', message: limited, retriable: true })

    // The callbacks read their own bodies, as bytes (JSON or a form): the fingerprint is over what arrived.
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers()
      scope.addContentTypeParser(['application/json', 'application/x-www-form-urlencoded'], { parseAs: 'buffer' }, (_request, body, done) => {
        done(null, body)
      })
      scope.post(CALLBACK_PATHS.checkoutRedirect, async (req, reply) =>
        handle('checkout_redirect', req, reply, deps.callbacks.checkoutRedirect, redirectAnswer, redirectUnreadable, redirectLimited),
      )
      scope.post(CALLBACK_PATHS.subscriptionRedirect, async (req, reply) =>
        handle('subscription_redirect', req, reply, deps.callbacks.subscriptionRedirect, redirectAnswer, redirectUnreadable, redirectLimited),
      )
      scope.post(CALLBACK_PATHS.notifications, async (req, reply) => handle('notification', req, reply, deps.callbacks.notification, notificationAnswer, notificationUnreadable, notificationLimited))
    })
  }
