import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TokenMatcher } from '../api-tokens.ts'
import { html } from './html.ts'
import { CONSOLE, layout, sendPage } from './layout.ts'
import { sessionCookie, type Sessions } from './session.ts'

/* Signing in with an API token: a form that posts the token (never in a URL, never shown back), and signing out. */

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
<p class="muted">The token is checked and forgotten: the console keeps a signed session cookie (8 hours) that names the token, not the token itself.</p>`,
  })

const field = (body: unknown, name: string): string | undefined => {
  if (typeof body !== 'object' || body === null || !(name in body)) return undefined
  const v: unknown = (body as Record<string, unknown>)[name]
  return typeof v === 'string' ? v : undefined
}

export const registerSignIn = (app: FastifyInstance, deps: { readonly sessions: Sessions; readonly tokens: TokenMatcher; readonly now: () => Date; readonly sameSite: (r: FastifyRequest) => boolean }): void => {
  app.get(`${CONSOLE}/sign-in`, async (request, reply) => {
    const q = typeof request.query === 'object' && request.query !== null ? field(request.query, 'next') : undefined
    return sendPage(reply, 200, signInPage({ next: safeNext(q), problem: null }))
  })
  app.post(`${CONSOLE}/sign-in`, async (request, reply) => {
    if (!deps.sameSite(request)) return sendPage(reply.header('vary', 'origin'), 403, signInPage({ next: CONSOLE, problem: 'A sign-in posted from another site was refused.' }))
    const token = field(request.body, 'token')
    const next = safeNext(field(request.body, 'next'))
    const matched = token === undefined || token === '' ? undefined : deps.tokens(token.trim())
    if (matched === undefined) {
      request.log.info('console: sign-in with an unknown token')
      return sendPage(reply, 401, signInPage({ next, problem: 'That token is not valid.' }))
    }
    if (!matched.scopes.includes('read')) return sendPage(reply, 403, signInPage({ next, problem: `The token ${matched.name} lacks the scope read the console needs.` }))
    const issued = deps.sessions.issue(matched, deps.now())
    request.log.info({ tokenName: matched.name }, 'console: signed in')
    return reply.code(303).header('set-cookie', sessionCookie(issued.value, request.protocol === 'https')).header('location', next).header('cache-control', 'no-store').send()
  })
}
