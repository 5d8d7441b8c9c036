import type { FastifyReply, FastifyRequest } from 'fastify'
import * as t from 'io-ts'
import type { ApiScope } from '../api-tokens.ts'
import { html } from './html.ts'
import { CONSOLE, messagePage, sendPage } from './layout.ts'
import { cookieValue, sameCsrf, SESSION_COOKIE, type ConsoleSession, type Sessions } from './session.ts'
import { signInPage, type SignInOptions } from './sign-in.ts'

/*
 * Who may see and do what: a page needs a session (read once per request by the console's onRequest
 * hook, routes.ts; else 401 with the sign-in form) whose token has the
 * page's scope (else 403); a form that changes something must come from the console itself (a
 * cross-site request is refused: Sec-Fetch-Site or Origin from elsewhere) and carry the session's
 * CSRF token (else 403).
 */

/** Why a session may not do something: its token's scopes, or its holder's role. */
const lacks = (session: ConsoleSession, scope: ApiScope) => {
  const h = session.holder
  switch (h.kind) {
    case 'token':
      return html`<p>The token <b>${h.name}</b> lacks the scope <code>${scope}</code> this needs.</p>`
    case 'user':
      return html`<p>You (<b>${h.name}</b>, role ${h.role}) lack the scope <code>${scope}</code> this needs: ask an administrator for another role.</p>`
    case 'openid':
      return html`<p>You (<b>${h.name}</b>, role ${h.roles.join(', ')}) lack the scope <code>${scope}</code> this needs: ask an administrator for another role.</p>`
  }
}

/** The sign-in page's problem when the request's session cookie no longer holds. */
export const SESSION_ENDED = 'Your session has ended (it expired, was signed out, or its password or account changed): sign in again.'

const signInOptions = new WeakMap<object, SignInOptions>()

/** What signing in offers, noted by the onRequest hook for a request without a session (its 401 page shows it). */
export const noteSignInOptions = (request: FastifyRequest, options: SignInOptions): void => void signInOptions.set(request, options)

const optionsOf = (request: FastifyRequest): { readonly options?: SignInOptions } => {
  const o = signInOptions.get(request)
  return o === undefined ? {} : { options: o }
}

/** The session of a request, as the console's onRequest hook found it (signature, expiry, not signed out). */
export const sessionOf = (sessions: Sessions, request: FastifyRequest, now: Date): ConsoleSession | undefined => sessions.current(request, now)

/** The session of a request that may see a page needing `scope`; otherwise the refusal is sent and undefined returned. */
export const pageSession = (sessions: Sessions, request: FastifyRequest, reply: FastifyReply, scope: ApiScope, now: Date): ConsoleSession | undefined => {
  const session = sessionOf(sessions, request, now)
  if (session === undefined) {
    // A first visit is no error; a session cookie that no longer holds (expired, signed out, from
    // before a password reset, or not this installation's) is said to have ended.
    const ended = (cookieValue(request.headers.cookie, SESSION_COOKIE) ?? '') !== ''
    const why = ended ? { problem: SESSION_ENDED } : { problem: null, notice: 'Sign in to see this page.' }
    void sendPage(reply, 401, signInPage({ next: request.url.startsWith(CONSOLE) ? request.url : CONSOLE, ...why, ...optionsOf(request) }))
    return undefined
  }
  if (!session.scopes.includes(scope)) {
    void messagePage(reply, 403, session, 'Not allowed', lacks(session, scope))
    return undefined
  }
  return session
}

/** Whether a state-changing request comes from a page of this same site (Fetch Metadata, else Origin, against Host). */
export const sameSiteRequest = (request: FastifyRequest): boolean => {
  // Browsers say where a request comes from (Fetch Metadata); older ones send Origin only.
  const site = request.headers['sec-fetch-site']
  if (site !== undefined) return site === 'same-origin' || site === 'none'
  const origin = request.headers.origin
  if (origin === undefined) return true
  let host: string
  try {
    host = new URL(origin).host
  } catch {
    return false
  }
  return host === request.headers.host
}

/** A form field's text (forms arrive as application/x-www-form-urlencoded). */
export const formField = (request: FastifyRequest, name: string): string | undefined => {
  const body = request.body
  if (!t.UnknownRecord.is(body)) return undefined
  const v = body[name]
  return typeof v === 'string' ? v : undefined
}

/**
 * The session of a form post that may change something with `scope`: from this site, with the session's
 * CSRF token. Otherwise the refusal (401, 403) is sent and undefined returned.
 */
export const formSession = (sessions: Sessions, request: FastifyRequest, reply: FastifyReply, scope: ApiScope, now: Date): ConsoleSession | undefined => {
  const session = sessionOf(sessions, request, now)
  if (session === undefined) {
    void sendPage(reply, 401, signInPage({ next: CONSOLE, problem: 'Your session has ended: sign in again.', ...optionsOf(request) }))
    return undefined
  }
  if (!sameSiteRequest(request)) {
    request.log.warn({ origin: request.headers.origin, site: request.headers['sec-fetch-site'] }, 'console: cross-site form post refused')
    void messagePage(reply, 403, session, 'Refused', html`<p>A form posted from another site was refused.</p>`)
    return undefined
  }
  const csrf = formField(request, 'csrf')
  if (csrf === undefined || !sameCsrf(csrf, session.csrf)) {
    void messagePage(reply, 403, session, 'Refused', html`<p>The form lacks this session's CSRF token (it may be from an older session): reload the page and try again.</p>`)
    return undefined
  }
  if (!session.scopes.includes(scope)) {
    void messagePage(reply, 403, session, 'Not allowed', lacks(session, scope))
    return undefined
  }
  return session
}
