import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { PasswordSignIn, SignInLockout } from '../../../application/console-sign-in.ts'
import type { TokenMatcher } from '../api-tokens.ts'
import { html } from './html.ts'
import { CONSOLE, layout, sendPage } from './layout.ts'
import { sessionCookie, type Sessions } from './session.ts'
import type { SignInThrottle } from './sign-in-throttle.ts'

/*
 * Signing in: people with a name and a password (console accounts, `satang users add`) or through the
 * company's OpenID Connect provider (oidc.ts); before any account exists, and without a provider, with
 * an API token. A form posts the secret (never in a URL, never shown back). Wrong passwords and tokens
 * are throttled per client address (sign-in-throttle.ts) and wrong passwords per account too (the
 * application's signInWithPassword); a lockout is answered 429 with Retry-After and recorded as a
 * ConsoleSignInLockedOut event; every sign-in, and every refusal of a known user, is an event naming them.
 */

/** Where to go after signing in: a console path only (never another site). */
export const safeNext = (next: string | undefined): string => (next !== undefined && /^\/console(\/[^\s\\]*|\?[^\s\\]*)?$/.test(next) && !next.startsWith('//') ? next : CONSOLE)

/** What the sign-in page offers. */
export type SignInOptions = {
  /** The API token field: only while no console account exists and no OpenID provider is configured. */
  readonly tokens: boolean
  /** The button of the OpenID Connect provider, when one is configured. */
  readonly openid: boolean
}

const DEFAULT_OPTIONS: SignInOptions = { tokens: true, openid: false }

/**
 * The sign-in page. `problem` is something that went wrong (shown as an error, announced at once to a
 * screen reader); `notice` is only why the page is shown (a first visit to a console page), in plain text.
 */
export const signInPage = (o: { readonly next: string; readonly problem: string | null; readonly notice?: string; readonly options?: SignInOptions; readonly name?: string }): string => {
  const options = o.options ?? DEFAULT_OPTIONS
  const next = safeNext(o.next)
  return layout({
    title: 'Sign in',
    session: null,
    body: html`<h1>Sign in to the satang console</h1>
${o.problem === null ? '' : html`<p class="error" role="alert">${o.problem}</p>`}
${o.notice === undefined ? '' : html`<p class="notice" role="status">${o.notice}</p>`}
${options.openid ? html`<p><a class="button" id="openid-sign-in" href="${CONSOLE}/sign-in/openid?next=${encodeURIComponent(next)}">Sign in with your company account (single sign-on)</a></p>` : ''}
<form method="post" action="${CONSOLE}/sign-in" id="password-sign-in">
<p><label>Name<br><input name="name" autocomplete="username" maxlength="64" size="32" value="${o.name ?? ''}" required></label></p>
<p><label>Password<br><input type="password" name="password" autocomplete="current-password" maxlength="1024" size="32" required></label></p>
<input type="hidden" name="next" value="${next}">
<p><button>Sign in</button></p>
</form>
${
  options.tokens
    ? html`<form method="post" action="${CONSOLE}/sign-in" autocomplete="off" id="token-sign-in">
<p><label>Or, while no personal account exists: an API token (the one in <code>.satang/api-token</code>, or one of SATANG_API_TOKENS; scope <code>read</code> to look, <code>reconcile:write</code> to acknowledge breaks, <code>audit</code> for payloads)<br>
<input type="password" name="token" required autocomplete="off" size="48"></label></p>
<input type="hidden" name="next" value="${next}">
<p><button>Sign in with the token</button></p>
</form>`
    : ''
}
<p class="muted">The console keeps a signed session cookie (8 hours at most, ended at once by signing out) that names you, never your password or token.</p>`,
  })
}

const field = (body: unknown, name: string): string | undefined => {
  if (typeof body !== 'object' || body === null || !(name in body)) return undefined
  const v: unknown = (body as Record<string, unknown>)[name]
  return typeof v === 'string' ? v : undefined
}

export type SignInDeps = {
  readonly sessions: Sessions
  readonly tokens: TokenMatcher
  readonly now: () => Date
  readonly sameSite: (r: FastifyRequest) => boolean
  readonly throttle: SignInThrottle
  /** Records a lockout in the event log (a failure is logged, the lockout holds regardless). */
  readonly lockedOut: (lockout: SignInLockout, request: FastifyRequest) => Promise<void>
  /** What the page offers now (whether a console account exists is asked of the database). */
  readonly options: () => Promise<SignInOptions>
  /** Checks a name and password (the account's throttle, the events). */
  readonly password: (name: string, password: string, request: FastifyRequest) => Promise<PasswordSignIn>
  /** Records a sign-in with an API token; false when it could not be recorded (the sign-in is refused). */
  readonly tokenSignedIn: (token: { readonly name: string; readonly scopes: ReadonlyArray<string> }, request: FastifyRequest) => Promise<boolean>
}

// A token is at most a few hundred characters: anything longer is wrong without being compared.
const MAX_TOKEN_LENGTH = 1024
const MAX_NAME_INPUT = 256

export const registerSignIn = (app: FastifyInstance, deps: SignInDeps): void => {
  app.get(`${CONSOLE}/sign-in`, async (request, reply) => {
    const q = typeof request.query === 'object' && request.query !== null ? field(request.query, 'next') : undefined
    return sendPage(reply, 200, signInPage({ next: safeNext(q), problem: null, options: await deps.options() }))
  })
  app.post(`${CONSOLE}/sign-in`, async (request, reply) => {
    const options = await deps.options()
    const next = safeNext(field(request.body, 'next'))
    if (!deps.sameSite(request)) return sendPage(reply.header('vary', 'origin'), 403, signInPage({ next: CONSOLE, problem: 'A sign-in posted from another site was refused.', options }))
    const name = field(request.body, 'name')
    const address = request.ip
    const page = (status: number, problem: string, headers: Record<string, string> = {}): FastifyReply =>
      sendPage(reply.headers(headers), status, signInPage({ next, problem, options, ...(name === undefined || name.length > MAX_NAME_INPUT ? {} : { name: name.trim().toLowerCase() }) }))
    const tooMany = (seconds: number, what: string): FastifyReply => page(429, `Too many wrong ${what}: sign-in is refused for ${String(seconds)} seconds.`, { 'retry-after': String(seconds) })
    const admission = deps.throttle.admit(address, deps.now())
    if (admission._tag === 'LockedOut') return tooMany(admission.retryAfterSeconds, 'passwords or tokens from your address')

    /** A failure from this address: its delay and lockout, beside the account's. */
    const addressFailed = async (user: string | null, accountDelayMs: number): Promise<number | null> => {
      const outcome = deps.throttle.failed(address, deps.now())
      if (outcome.lockout !== null) {
        const { retryAfterSeconds, ...lockout } = outcome.lockout
        request.log.warn({ address, failures: lockout.failures, lockedUntil: lockout.lockedUntil.toISOString() }, 'console: sign-in locked out for an address after too many failures')
        await deps.lockedOut({ address, user, ...lockout }, request)
        return retryAfterSeconds
      }
      const delay = Math.max(outcome.delayMs, accountDelayMs)
      if (delay > 0) await sleep(delay)
      return null
    }

    if (name !== undefined && name.trim() !== '') {
      const password = field(request.body, 'password') ?? ''
      const typed = name.length > MAX_NAME_INPUT ? '' : name.trim().toLowerCase()
      const outcome = await deps.password(typed, password, request)
      switch (outcome._tag) {
        case 'SignedIn': {
          deps.throttle.succeeded(address)
          const issued = deps.sessions.issueFor({ kind: 'user', name: outcome.name, role: outcome.role }, deps.now())
          request.log.info({ user: outcome.name, role: outcome.role }, 'console: signed in')
          return reply.code(303).header('set-cookie', sessionCookie(issued.value, request.protocol === 'https')).header('location', next).header('cache-control', 'no-store').send()
        }
        case 'NotRecorded':
          request.log.error({ cause: outcome.cause }, 'console: a sign-in could not be recorded in the event log, so it is refused')
          return page(503, 'Signing in is not possible right now (it could not be recorded): try again in a moment.')
        case 'Refused': {
          request.log.info({ address, user: outcome.user, reason: outcome.reason }, 'console: sign-in refused')
          const addressLocked = await addressFailed(outcome.user, outcome.delayMs)
          if (addressLocked !== null) return tooMany(addressLocked, 'passwords or tokens from your address')
          if (outcome.retryAfterSeconds !== null) return tooMany(outcome.retryAfterSeconds, 'passwords for this account')
          return page(401, 'That name and password do not match an account that may sign in.')
        }
      }
    }

    const token = field(request.body, 'token')
    if (token === undefined || token === '') return page(400, 'Enter your name and password.')
    if (!options.tokens) {
      request.log.info({ address }, 'console: an API token was refused in the sign-in form (personal accounts exist)')
      return page(403, 'API tokens are for machines: now that personal accounts exist, sign in with your name and password or single sign-on.')
    }
    const matched = token.length > MAX_TOKEN_LENGTH ? undefined : deps.tokens(token.trim())
    if (matched === undefined) {
      request.log.info({ address }, 'console: sign-in with an unknown token')
      const locked = await addressFailed(null, 0)
      if (locked !== null) return tooMany(locked, 'tokens from your address')
      return page(401, 'That token is not valid.')
    }
    deps.throttle.succeeded(address)
    if (!matched.scopes.includes('read')) return page(403, `The token ${matched.name} lacks the scope read the console needs.`)
    if (!(await deps.tokenSignedIn(matched, request))) return page(503, 'Signing in is not possible right now (it could not be recorded): try again in a moment.')
    const issued = deps.sessions.issue(matched, deps.now())
    request.log.info({ tokenName: matched.name }, 'console: signed in')
    return reply.code(303).header('set-cookie', sessionCookie(issued.value, request.protocol === 'https')).header('location', next).header('cache-control', 'no-store').send()
  })
}
