import { createHmac, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import * as oidc from 'openid-client'
import { rolesOfClaim, scopesOfRoles, type ConsoleRole } from '../../../domain/console-users/account.ts'
import { escapeRefusedCharacters } from '../../../domain/gateway/text-rules.ts'
import { html } from './html.ts'
import { CONSOLE, layout, sendPage } from './layout.ts'
import { cookieValue, MAX_HOLDER_NAME, sessionCookie, type Sessions } from './session.ts'
import { safeNext, signInPage, type SignInOptions } from './sign-in.ts'

/*
 * Single sign-on with the company's OpenID Connect provider: the authorization code flow with PKCE
 * (S256), a state and a nonce (openid-client). `GET /console/sign-in/openid` sends the browser to the
 * provider with a short-lived signed cookie holding the PKCE verifier, the state, the nonce and where
 * to go after (HttpOnly, SameSite=Lax, so that it comes back with the provider's redirect; 10 minutes);
 * `GET /console/openid/callback` exchanges the code, checks the ID token, reads the roles from the
 * configured claim (ID token, else the userinfo endpoint) and starts a session naming the user
 * (preferred_username, else email, else sub). A user whose claim grants no role is refused, and that
 * is recorded. The provider's metadata is fetched at the first sign-in (and again after a failure).
 */

export type OpenIdSettings = {
  readonly issuer: URL
  readonly clientId: string
  readonly clientSecret: string
  readonly redirectUrl: URL
  readonly roleClaim: string
  readonly scopes: string
}

export type OpenIdDeps = {
  readonly settings: OpenIdSettings
  readonly sessions: Sessions
  /** The installation's session secret: signs the short-lived state cookie. */
  readonly secret: Buffer
  readonly now: () => Date
  readonly options: () => Promise<SignInOptions>
  /** Records the sign-in; false when it could not be recorded (the sign-in is then refused). */
  readonly signedIn: (s: { readonly user: string; readonly roles: ReadonlyArray<ConsoleRole>; readonly scopes: ReadonlyArray<string> }, request: FastifyRequest) => Promise<boolean>
  readonly refused: (user: string, request: FastifyRequest) => Promise<void>
}

const STATE_COOKIE = 'satang_openid'
const STATE_SECONDS = 600
const State = t.type({ v: t.string, s: t.string, n: t.string, x: t.string, e: t.number })
const MAX_STATE_COOKIE = 1024

const isLoopback = (u: URL): boolean => ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)

/** The name a session and the events give an OpenID user: preferred_username, else email, else sub. */
export const openIdUserName = (claims: Readonly<Record<string, unknown>>): string => {
  const pick = [claims['preferred_username'], claims['email'], claims['sub']].find((v): v is string => typeof v === 'string' && v.trim() !== '') ?? 'unknown'
  return escapeRefusedCharacters(pick.trim()).slice(0, MAX_HOLDER_NAME)
}

export const registerOpenIdSignIn = (app: FastifyInstance, deps: OpenIdDeps): void => {
  const s = deps.settings
  let discovered: Promise<oidc.Configuration> | undefined
  const configuration = (): Promise<oidc.Configuration> => {
    discovered ??= oidc
      .discovery(s.issuer, s.clientId, undefined, oidc.ClientSecretBasic(s.clientSecret), {
        // Plain HTTP only to a provider on this machine (a development or test provider).
        ...(s.issuer.protocol === 'http:' && isLoopback(s.issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
        timeout: 10,
      })
      .catch((e: unknown) => {
        discovered = undefined
        throw e
      })
    return discovered
  }
  const key = createHmac('sha256', deps.secret).update('satang-console-openid-state-v1').digest()
  const mac = (text: string): Buffer => createHmac('sha256', key).update(text).digest()
  const secure = s.redirectUrl.protocol === 'https:'
  const stateCookie = (value: string | null): string =>
    `${STATE_COOKIE}=${value ?? ''}; Path=${CONSOLE}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}; Max-Age=${value === null ? '0' : String(STATE_SECONDS)}`
  const readState = (header: string | undefined): t.TypeOf<typeof State> | undefined => {
    const value = cookieValue(header, STATE_COOKIE)
    if (value === undefined || value.length > MAX_STATE_COOKIE) return undefined
    const [payload, signature] = value.split('.')
    if (payload === undefined || signature === undefined) return undefined
    const given = Buffer.from(signature, 'base64url')
    const expected = mac(payload)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    let json: unknown
    try {
      json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return undefined
    }
    const decoded = State.decode(json)
    return E.isRight(decoded) && decoded.right.e * 1000 > deps.now().getTime() ? decoded.right : undefined
  }
  const problem = async (status: number, text: string, next = CONSOLE) => ({ status, page: signInPage({ next, problem: text, options: await deps.options() }) })

  app.get(`${CONSOLE}/sign-in/openid`, async (request, reply) => {
    const next = safeNext(t.UnknownRecord.is(request.query) && typeof request.query['next'] === 'string' ? request.query['next'] : undefined)
    let config: oidc.Configuration
    try {
      config = await configuration()
    } catch (e) {
      request.log.error({ err: e, issuer: s.issuer.href }, 'console: the OpenID Connect provider could not be reached')
      const p = await problem(503, 'The single sign-on provider cannot be reached right now: try again in a moment.', next)
      return sendPage(reply, p.status, p.page)
    }
    const verifier = oidc.randomPKCECodeVerifier()
    const state = { v: verifier, s: oidc.randomState(), n: oidc.randomNonce(), x: next, e: Math.floor(deps.now().getTime() / 1000) + STATE_SECONDS }
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: s.redirectUrl.href,
      scope: s.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: state.s,
      nonce: state.n,
    })
    const payload = Buffer.from(JSON.stringify(state)).toString('base64url')
    return reply.code(303).header('set-cookie', stateCookie(`${payload}.${mac(payload).toString('base64url')}`)).header('location', url.href).header('cache-control', 'no-store').send()
  })

  app.get(`${CONSOLE}/openid/callback`, async (request, reply) => {
    const state = readState(request.headers.cookie)
    reply.header('set-cookie', stateCookie(null))
    if (state === undefined) {
      const p = await problem(400, 'That single sign-on answer has no sign-in of this browser waiting for it (or it took more than 10 minutes): sign in again.')
      return sendPage(reply, p.status, p.page)
    }
    const current = new URL(s.redirectUrl.href)
    current.search = new URL(request.url, 'http://callback.invalid').search
    let claims: Record<string, unknown>
    try {
      const config = await configuration()
      const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: state.v, expectedState: state.s, expectedNonce: state.n, idTokenExpected: true })
      claims = { ...(tokens.claims() ?? {}) }
      if (claims[s.roleClaim] === undefined && typeof claims['sub'] === 'string') {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, claims['sub'])
        claims = { ...info, ...claims }
      }
    } catch (e) {
      request.log.warn({ err: e }, 'console: an OpenID Connect sign-in failed')
      const p = await problem(401, 'Single sign-on did not complete (the provider refused it, or its answer did not verify): sign in again.', state.x)
      return sendPage(reply, p.status, p.page)
    }
    const user = openIdUserName(claims)
    const roles = rolesOfClaim(claims[s.roleClaim])
    if (roles.length === 0) {
      request.log.info({ user, claim: s.roleClaim }, 'console: an OpenID Connect user without a console role was refused')
      await deps.refused(user, request)
      const p = await problem(403, `You signed in as ${user}, but your company account grants no console role (claim ${s.roleClaim}: finance, auditor or admin). Ask your administrator.`, state.x)
      return sendPage(reply, p.status, p.page)
    }
    if (!(await deps.signedIn({ user, roles, scopes: scopesOfRoles(roles) }, request))) {
      const p = await problem(503, 'Signing in is not possible right now (it could not be recorded): try again in a moment.', state.x)
      return sendPage(reply, p.status, p.page)
    }
    const issued = deps.sessions.issueFor({ kind: 'openid', name: user, roles }, deps.now())
    request.log.info({ user, roles }, 'console: signed in with OpenID Connect')
    // The provider's redirect is a cross-site navigation: a SameSite=Strict cookie set by it is not sent
    // along a further redirect, so the way on is a page of our own (a same-site navigation).
    reply.header('set-cookie', [stateCookie(null), sessionCookie(issued.value, request.protocol === 'https' || secure)])
    return sendPage(
      reply,
      200,
      layout({
        title: 'Signed in',
        session: null,
        body: html`<meta http-equiv="refresh" content="0; url=${state.x}"><h1>Signed in</h1><p>Signed in as <b>${user}</b> (${roles.join(', ')}). <a id="continue" href="${state.x}">Continue</a></p>`,
      }),
    )
  })
}
