import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { SignInLockout } from '../../../application/console-sign-in.ts'
import type { TokenMatcher } from '../api-tokens.ts'
import { html } from './html.ts'
import { CONSOLE, layout, sendPage } from './layout.ts'
import { sessionCookie, type Sessions } from './session.ts'
import type { SignInThrottle } from './sign-in-throttle.ts'

/*
 * Signing in with an API token: a form that posts the token (never in a URL, never shown back), and
 * signing out. Wrong tokens are throttled per client address (sign-in-throttle.ts); a lockout is
 * answered 429 with Retry-After and recorded as a ConsoleSignInLockedOut event.
 */

/** Where to go after signing in: a console path only (never another site). */
export const safeNext = (next: string | undefined): string => (next !== undefined && /^\/console(\/[^\s\\]*|\?[^\s\\]*)?$/.test(next) && !next.startsWith('//') ? next : CONSOLE)

export const signInPage = (o: { readonly next: string; readonly problem: string | null }): string =>
  layout({
    title: 'Sign in',
    session: null,
    body: html`<h1>Sign in to the satang console</h1>
${o.problem === null ? '' : html`<p class="error" role="alert">${o.problem}</p>`}
<form method="post" action="${CONSOLE}/sign-in" autocomplete="off">
<p><label>API token (the one in <code>.satang/api-token</code>, or one of SATANG_API_TOKENS; scope <code>read</code> to look, <code>reconcile:write</code> to acknowledge breaks, <code>audit</code> for payloads)<br>
<input type="password" name="token" required autocomplete="off" size="48"></label></p>
<input type="hidden" name="next" value="${safeNext(o.next)}">
<p><button>Sign in</button></p>
</form>
<p class="muted">The token is checked and forgotten: the console keeps a signed session cookie (8 hours at most, ended at once by signing out) that names the token, not the token itself.</p>`,
  })

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
}

// A token is at most a few hundred characters: anything longer is wrong without being compared.
const MAX_TOKEN_LENGTH = 1024

export const registerSignIn = (app: FastifyInstance, deps: SignInDeps): void => {
  app.get(`${CONSOLE}/sign-in`, async (request, reply) => {
    const q = typeof request.query === 'object' && request.query !== null ? field(request.query, 'next') : undefined
    return sendPage(reply, 200, signInPage({ next: safeNext(q), problem: null }))
  })
  app.post(`${CONSOLE}/sign-in`, async (request, reply) => {
    if (!deps.sameSite(request)) return sendPage(reply.header('vary', 'origin'), 403, signInPage({ next: CONSOLE, problem: 'A sign-in posted from another site was refused.' }))
    const token = field(request.body, 'token')
    const next = safeNext(field(request.body, 'next'))
    const address = request.ip
    const tooMany = (seconds: number): FastifyReply =>
      sendPage(reply.header('retry-after', String(seconds)), 429, signInPage({ next, problem: `Too many wrong tokens from your address: sign-in is refused for ${String(seconds)} seconds.` }))
    const admission = deps.throttle.admit(address, deps.now())
    if (admission._tag === 'LockedOut') return tooMany(admission.retryAfterSeconds)
    const matched = token === undefined || token === '' || token.length > MAX_TOKEN_LENGTH ? undefined : deps.tokens(token.trim())
    if (matched === undefined) {
      const outcome = deps.throttle.failed(address, deps.now())
      if (outcome.lockout !== null) {
        const { retryAfterSeconds, ...lockout } = outcome.lockout
        request.log.warn({ address, failures: lockout.failures, lockedUntil: lockout.lockedUntil.toISOString() }, 'console: sign-in locked out for an address after too many wrong tokens')
        await deps.lockedOut({ address, ...lockout }, request)
        return tooMany(retryAfterSeconds)
      }
      request.log.info({ address, delayMs: outcome.delayMs }, 'console: sign-in with an unknown token')
      if (outcome.delayMs > 0) await sleep(outcome.delayMs)
      return sendPage(reply, 401, signInPage({ next, problem: 'That token is not valid.' }))
    }
    deps.throttle.succeeded(address)
    if (!matched.scopes.includes('read')) return sendPage(reply, 403, signInPage({ next, problem: `The token ${matched.name} lacks the scope read the console needs.` }))
    const issued = deps.sessions.issue(matched, deps.now())
    request.log.info({ tokenName: matched.name }, 'console: signed in')
    return reply.code(303).header('set-cookie', sessionCookie(issued.value, request.protocol === 'https')).header('location', next).header('cache-control', 'no-store').send()
  })
}
