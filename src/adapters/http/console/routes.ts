import type { FastifyInstance } from 'fastify'
import { makeTokenMatcher } from '../api-tokens.ts'
import { CHARTS_JS, chartLibrary } from './assets.ts'
import { registerBreaks } from './breaks.ts'
import type { ConsoleDeps } from './deps.ts'
import { formSession, sameSiteRequest, sessionOf } from './guard.ts'
import { html } from './html.ts'
import { registerItemPages } from './item.ts'
import { CONSOLE, messagePage } from './layout.ts'
import { registerLedger } from './ledger.ts'
import { registerOverview } from './overview.ts'
import { makeSessions, sessionCookie } from './session.ts'
import { registerSignIn } from './sign-in.ts'
import { STYLESHEET } from './style.ts'

/**
 * The web console under `/console` (README "The console"): server-rendered pages over the read models,
 * signed in with an API token; it writes nothing but acknowledgements of breaks. Its assets (the
 * stylesheet, uPlot from node_modules, the charts script) are served from `/console/assets/`.
 */
export const registerConsoleRoutes =
  (deps: ConsoleDeps) =>
  (app: FastifyInstance): void => {
    const sessions = makeSessions(deps.tokens)
    const c = { ...deps, sessions }
    void app.register(async (scope) => {
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

      registerSignIn(scope, { sessions, tokens: makeTokenMatcher(deps.tokens), now: deps.now, sameSite: sameSiteRequest })
      scope.post(`${CONSOLE}/sign-out`, async (request, reply) => {
        const session = formSession(sessions, request, reply, 'read', deps.now())
        if (session === undefined) return reply
        return reply.code(303).header('set-cookie', sessionCookie(null, request.protocol === 'https')).header('location', `${CONSOLE}/sign-in`).send()
      })
      registerOverview(scope, c)
      registerBreaks(scope, c)
      registerItemPages(scope, c)
      registerLedger(scope, c)
    })
  }
