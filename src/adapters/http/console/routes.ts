import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import { recordSignIn, recordSignInLockout, recordSignInRefusal, signInWithPassword } from '../../../application/console-sign-in.ts'
import type { Cause } from '../../../application/deps.ts'
import { DEFAULT_ACCOUNT_THROTTLE } from '../../../domain/console-users/account-throttle.ts'
import { makePostgresEndedSessions } from '../../../platform/postgres/console-sessions.ts'
import { makeTokenMatcher } from '../api-tokens.ts'
import { CHARTS_JS, chartLibrary } from './assets.ts'
import { registerBreaks } from './breaks.ts'
import type { ConsoleDeps } from './deps.ts'
import { formSession, noteSignInOptions, sameSiteRequest, sessionOf } from './guard.ts'
import { html } from './html.ts'
import { registerItemPages } from './item.ts'
import { CONSOLE, messagePage } from './layout.ts'
import { registerLedger } from './ledger.ts'
import { registerOpenIdSignIn } from './openid.ts'
import { registerOverview } from './overview.ts'
import { makeSessions, sessionCookie } from './session.ts'
import { registerSignIn, type SignInOptions } from './sign-in.ts'
import { makeSignInThrottle } from './sign-in-throttle.ts'
import { STYLESHEET } from './style.ts'

/**
 * The web console under `/console` (docs/finance.md "The web console"): server-rendered pages over the read models,
 * signed in with an API token; it writes nothing but acknowledgements of breaks. Its assets (the
 * stylesheet, uPlot from node_modules, the charts script) are served from `/console/assets/`.
 */
export const registerConsoleRoutes =
  (deps: ConsoleDeps) =>
  (app: FastifyInstance): void => {
    const people = deps.people
    const sessions = makeSessions({ secret: deps.sessionSecret, tokens: deps.tokens, ended: makePostgresEndedSessions(deps.readModels), ...(people === undefined ? {} : { accounts: people.accounts }) })
    const c = { ...deps, sessions }
    const throttle = makeSignInThrottle()
    const openid = people?.openid ?? null
    // API tokens sign in to the console only until the first console account exists.
    const options = async (): Promise<SignInOptions> => ({ tokens: !(await (people?.accounts.any() ?? Promise.resolve(false))), openid: openid !== null })
    const causeOf = (request: FastifyRequest, actor: string): Cause => ({ correlationId: request.id, causationId: request.id, actor })
    const recorded = async (request: FastifyRequest, what: string, done: Promise<E.Either<unknown, void>>): Promise<boolean> => {
      const r = await done
      if (E.isLeft(r)) request.log.error({ err: r.left }, `console: ${what} could not be recorded in the event log`)
      return E.isRight(r)
    }
    void app.register(async (scope) => {
      // Each request's session is read once, here (a database lookup: was it signed out?); the pages take it from there.
      scope.addHook('onRequest', async (request) => {
        if (request.url.startsWith(`${CONSOLE}/assets/`)) return
        const session = await sessions.authenticate(request, request.headers.cookie, deps.now())
        // A page that answers with the sign-in form shows what signing in offers now.
        if (session === undefined) noteSignInOptions(request, await options())
      })
      // A page that fails answers an HTML page (the API's JSON error shape would be no use to a person).
      scope.setErrorHandler(async (error, request, reply) => {
        const status = typeof error === 'object' && error !== null && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500
        // A request the framework refused (a body it cannot read, too large, …): the client's doing.
        if (status >= 400 && status < 500) return messagePage(reply, status, sessionOf(sessions, request, c.now()) ?? null, 'Bad request', html`<p>The request could not be read: send the console's own forms.</p>`)
        request.log.error({ err: error }, 'console page failed')
        const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : ''
        const missing = code === '42P01' || code === '3F000'
        return messagePage(
          reply,
          503,
          sessionOf(sessions, request, c.now()) ?? null,
          'Unavailable',
          missing ? html`<p>The read models do not exist yet: run satang migrate (or satang up).</p>` : html`<p>The read models or the event log could not be read. Try again in a moment.</p>`,
        )
      })
      const library = chartLibrary()
      const asset = (path: string, body: string, type: string): void => {
        scope.get(`${CONSOLE}/assets/${path}`, async (_request, reply) => reply.code(200).header('content-type', type).header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(body))
      }
      asset('uplot.js', library.uplotJs.body, library.uplotJs.type)
      asset('console.css', `${library.uplotCss.body}\n${STYLESHEET}`, 'text/css; charset=utf-8')
      asset('charts.js', CHARTS_JS, 'text/javascript; charset=utf-8')

      registerSignIn(scope, {
        sessions,
        tokens: makeTokenMatcher(deps.tokens),
        now: deps.now,
        sameSite: sameSiteRequest,
        throttle,
        lockedOut: async (lockout, request) => {
          const id = `console-sign-in-${randomUUID()}`
          const recorded = await recordSignInLockout({ store: deps.store, now: deps.now }, lockout, { correlationId: id, causationId: id })()
          if (E.isLeft(recorded)) request.log.error({ err: recorded.left }, 'console: a sign-in lockout could not be recorded in the event log (the lockout holds)')
        },
        options,
        password: async (name, password, request) =>
          people === undefined
            ? { _tag: 'Refused', user: null, reason: 'unknown_user', delayMs: 0, retryAfterSeconds: null }
            : signInWithPassword(
                {
                  accounts: people.accounts,
                  hasher: people.hasher,
                  store: deps.store,
                  now: deps.now,
                  policy: people.policy ?? DEFAULT_ACCOUNT_THROTTLE,
                  unrecorded: (what, e) => request.log.error({ err: e }, `console: ${what} could not be recorded in the event log`),
                },
                { name, password, address: request.ip },
                causeOf(request, name),
              ),
        tokenSignedIn: (token, request) =>
          recorded(request, 'a sign-in', recordSignIn({ store: deps.store, now: deps.now }, { user: token.name, method: 'api_token', roles: [], scopes: token.scopes, address: request.ip }, causeOf(request, token.name))()),
      })
      if (openid !== null) {
        registerOpenIdSignIn(scope, {
          settings: openid,
          sessions,
          secret: deps.sessionSecret,
          now: deps.now,
          options,
          signedIn: (s, request) => recorded(request, 'a sign-in', recordSignIn({ store: deps.store, now: deps.now }, { ...s, method: 'openid_connect', address: request.ip }, causeOf(request, s.user))()),
          refused: async (user, request) =>
            void (await recorded(request, 'a refused sign-in', recordSignInRefusal({ store: deps.store, now: deps.now }, { user, method: 'openid_connect', reason: 'no_role', address: request.ip }, causeOf(request, user))())),
        })
      }
      scope.post(`${CONSOLE}/sign-out`, async (request, reply) => {
        const session = formSession(sessions, request, reply, 'read', deps.now())
        if (session === undefined) return reply
        // Ended in the database before the cookie is cleared: the old value is refused by every api process.
        await sessions.end(session)
        request.log.info({ user: session.tokenName, kind: session.holder.kind }, 'console: signed out')
        return reply.code(303).header('set-cookie', sessionCookie(null, request.protocol === 'https')).header('location', `${CONSOLE}/sign-in`).send()
      })
      registerOverview(scope, c)
      registerBreaks(scope, c)
      registerItemPages(scope, c)
      registerLedger(scope, c)
    })
  }
