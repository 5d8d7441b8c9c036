import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Counter, type Registry } from 'prom-client'
import type { CallbackContext, Callbacks } from '../../application/callbacks.ts'
import type { CallbackResult } from '../../application/results.ts'
import { sendError } from './errors.ts'

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
 *   spec, e.g. a NUL in a field) → quarantined: kept as CallbackRejected and acknowledged with 200
 *   `SUCCESS` (+ `x-satang-callback: rejected`), since delivering the same bytes again cannot help.
 */
export type CallbackDeps = {
  readonly callbacks: Callbacks
  readonly now: () => Date
  /** Where `satang_callbacks_total{kind,outcome}` is registered (optional). */
  readonly metrics?: Registry
}

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

const contextOf = (request: FastifyRequest, now: () => Date): CallbackContext => ({ callbackId: request.id, receivedAt: now() })

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
    const counted = (kind: string, r: CallbackResult): CallbackResult => {
      counter?.inc({ kind, outcome: outcomeOf(r) })
      return r
    }
    app.post(CALLBACK_PATHS.checkoutRedirect, async (req, reply) =>
      redirectAnswer(reply, counted('checkout_redirect', await deps.callbacks.checkoutRedirect(req.body, contextOf(req, deps.now)))),
    )
    app.post(CALLBACK_PATHS.subscriptionRedirect, async (req, reply) =>
      redirectAnswer(reply, counted('subscription_redirect', await deps.callbacks.subscriptionRedirect(req.body, contextOf(req, deps.now)))),
    )
    app.post(CALLBACK_PATHS.notifications, async (req, reply) => notificationAnswer(reply, counted('notification', await deps.callbacks.notification(req.body, contextOf(req, deps.now)))))
  }
