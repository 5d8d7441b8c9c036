import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import type { ConsoleAccounts } from '../../../application/ports/console-accounts.ts'
import { isConsoleRole, ROLE_SCOPES, scopesOfRoles, type ConsoleRole } from '../../../domain/console-users/account.ts'
import type { EndedSessions } from '../../../platform/postgres/console-sessions.ts'
import type { ApiScope, ApiToken, KnownToken } from '../api-tokens.ts'

/*
 * Console sessions: signing in with an API token (posted from a form, never in a URL) sets a cookie
 * holding the token's name, an expiry and a random session id, signed with HMAC-SHA256 — never the
 * token. The key is derived from the installation's session secret (random, generated on first start
 * into SATANG_DATA_DIR/session-secret, or SATANG_SESSION_SECRET_FILE) and from every configured token:
 * nothing in the configuration alone computes it, every api process sharing the secret and the tokens
 * accepts the same sessions, and changing any token ends them all. A cookie is refused when its expiry
 * lies more than SESSION_SECONDS (and a minute of clock skew) ahead, and once signed out: the session
 * id is then kept in the database, which every api process asks. The cookie is HttpOnly,
 * SameSite=Strict, Path=/console (Secure over HTTPS). Each session has its CSRF token (an HMAC of its
 * id), which every form that changes something must carry.
 * A person's session names them instead of a token: a console account (`k: "u"`; its role is read
 * from console_users on every request, and the session is refused once the account is disabled or its
 * password was set after the session began), or an OpenID Connect user (`k: "o"`, with the roles the
 * provider's claim granted at sign-in, `r`).
 */

export const SESSION_COOKIE = 'satang_console'
export const SESSION_SECONDS = 8 * 3600
/** How far a cookie's expiry may lie past now + SESSION_SECONDS: clocks of api processes differ a little. */
export const SESSION_SKEW_SECONDS = 60
/** Bytes of the session secret; a configured secret must hold at least as many characters. */
export const SESSION_SECRET_BYTES = 32

/** Who a session is: an API token's holder, a console account, or a user of the OpenID Connect provider. */
export type SessionHolder =
  | { readonly kind: 'token'; readonly name: string }
  | { readonly kind: 'user'; readonly name: string; readonly role: ConsoleRole }
  | { readonly kind: 'openid'; readonly name: string; readonly roles: ReadonlyArray<ConsoleRole> }

export type ConsoleSession = {
  readonly id: string
  /** The name of whoever signed in: the token's name, or the person's (kept under this name for the pages). */
  readonly tokenName: string
  readonly holder: SessionHolder
  readonly scopes: ReadonlyArray<ApiScope>
  readonly csrf: string
  readonly expiresAt: Date
}

const SESSION_ID = /^[A-Za-z0-9_-]{24}$/
const Payload = t.intersection([t.type({ n: t.string, e: t.number, s: t.string }), t.partial({ k: t.union([t.literal('u'), t.literal('o')]), r: t.array(t.string), i: t.number })])
type Payload = t.TypeOf<typeof Payload>
// A cookie this long is no cookie of ours: nothing longer is parsed.
const MAX_COOKIE_LENGTH = 768
/** The longest name of a person a session holds (an OpenID Connect user's is cut to it). */
export const MAX_HOLDER_NAME = 128

const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64url')

export type Sessions = {
  /** The cookie value of a new session for `token`. */
  readonly issue: (token: KnownToken | ApiToken, now: Date) => { readonly value: string; readonly session: ConsoleSession }
  /** The cookie value of a new session of a person (a console account, an OpenID Connect user). */
  readonly issueFor: (holder: Exclude<SessionHolder, { readonly kind: 'token' }>, now: Date) => { readonly value: string }
  /**
   * The session a cookie value names, when its signature holds, its expiry is neither past nor too far
   * ahead, its token is still configured, and it was not signed out (asked of the database).
   */
  readonly read: (value: string, now: Date) => Promise<ConsoleSession | undefined>
  /** Ends a session for every api process of the installation. */
  readonly end: (session: ConsoleSession) => Promise<void>
  /** Reads the session of a request once (`read`), and keeps it for `current`. */
  readonly authenticate: (request: object, cookieHeader: string | undefined, now: Date) => Promise<ConsoleSession | undefined>
  /** The session `authenticate` found for this request (undefined when none, or not asked). */
  readonly current: (request: object, now: Date) => ConsoleSession | undefined
}

/** The key that signs sessions: the installation's secret, bound to the configured tokens. */
const sessionKey = (secret: Buffer, tokens: ReadonlyArray<ApiToken>): Buffer => {
  const key = createHmac('sha256', secret)
  key.update('satang-console-session-v2\u0000')
  for (const tk of [...tokens].sort((a, b) => (a.name < b.name ? -1 : 1))) key.update(`${tk.name}\u0000${tk.token}\u0000${tk.scopes.join('+')}\u0000`)
  return key.digest()
}

export const makeSessions = (deps: { readonly secret: Buffer; readonly tokens: ReadonlyArray<ApiToken>; readonly ended: EndedSessions; readonly accounts?: Pick<ConsoleAccounts, 'find'> }): Sessions => {
  if (deps.secret.length < SESSION_SECRET_BYTES) throw new Error(`console: the session secret must hold at least ${String(SESSION_SECRET_BYTES)} bytes`)
  const key = sessionKey(deps.secret, deps.tokens)
  const mac = (text: string): Buffer => createHmac('sha256', key).update(text).digest()
  const byName = new Map(deps.tokens.map((tk) => [tk.name, tk]))
  const found = new WeakMap<object, ConsoleSession>()

  const csrfOf = (id: string): string => b64(mac(`csrf\u0000${id}`))
  const sessionOf = (name: string, expires: number, id: string): ConsoleSession | undefined => {
    const token = byName.get(name)
    if (token === undefined) return undefined
    return { id, tokenName: name, holder: { kind: 'token', name }, scopes: token.scopes, csrf: csrfOf(id), expiresAt: new Date(expires * 1000) }
  }

  /** A person's session from its verified payload: an account as it is now, an OpenID user as signed in. */
  const personOf = async (p: Payload): Promise<ConsoleSession | undefined> => {
    const base = { id: p.s, tokenName: p.n, csrf: csrfOf(p.s), expiresAt: new Date(p.e * 1000) }
    if (p.k === 'o') {
      const roles = (p.r ?? []).filter(isConsoleRole)
      return roles.length === 0 ? undefined : { ...base, holder: { kind: 'openid', name: p.n, roles }, scopes: scopesOfRoles(roles) }
    }
    const account = await deps.accounts?.find(p.n)
    if (account === undefined || account.disabledAt !== null || p.i === undefined || account.passwordSetAt.getTime() > p.i) return undefined
    return { ...base, holder: { kind: 'user', name: p.n, role: account.role }, scopes: ROLE_SCOPES[account.role] }
  }

  /** The payload a cookie value states, when it is signed by this installation and within its time. */
  const verify = (value: string, now: Date): Payload | undefined => {
    if (value.length > MAX_COOKIE_LENGTH) return undefined
    const [payload, signature, ...rest] = value.split('.')
    if (payload === undefined || signature === undefined || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]+$/.test(signature)) return undefined
    const expected = mac(payload)
    const given = Buffer.from(signature, 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    let json: unknown
    try {
      json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return undefined
    }
    const p = Payload.decode(json)
    if (E.isLeft(p) || !Number.isSafeInteger(p.right.e) || !SESSION_ID.test(p.right.s)) return undefined
    const expiresMs = p.right.e * 1000
    if (expiresMs <= now.getTime() || expiresMs > now.getTime() + (SESSION_SECONDS + SESSION_SKEW_SECONDS) * 1000) return undefined
    return p.right
  }

  const read = async (value: string, now: Date): Promise<ConsoleSession | undefined> => {
    const p = verify(value, now)
    if (p === undefined) return undefined
    const session = p.k === undefined ? sessionOf(p.n, p.e, p.s) : await personOf(p)
    if (session === undefined) return undefined
    return (await deps.ended.hasEnded(session.id)) ? undefined : session
  }

  const sign = (p: Payload): string => {
    const payload = b64(JSON.stringify(p))
    return `${payload}.${b64(mac(payload))}`
  }

  return {
    issue: (token, now) => {
      const value = sign({ n: token.name, e: Math.floor(now.getTime() / 1000) + SESSION_SECONDS, s: b64(randomBytes(18)) })
      const p = verify(value, now)
      const session = p === undefined ? undefined : sessionOf(p.n, p.e, p.s)
      if (session === undefined) throw new Error('console: a session was issued for a token that is not configured')
      return { value, session }
    },
    issueFor: (holder, now) => {
      const seconds = Math.floor(now.getTime() / 1000)
      const common = { n: holder.name.slice(0, MAX_HOLDER_NAME), e: seconds + SESSION_SECONDS, s: b64(randomBytes(18)), i: now.getTime() }
      return { value: sign(holder.kind === 'user' ? { ...common, k: 'u' } : { ...common, k: 'o', r: [...holder.roles] }) }
    },
    read,
    end: (session) => deps.ended.end(session.id, session.expiresAt),
    authenticate: async (request, cookieHeader, now) => {
      const value = cookieValue(cookieHeader, SESSION_COOKIE)
      const session = value === undefined || value === '' ? undefined : await read(value, now)
      if (session === undefined) found.delete(request)
      else found.set(request, session)
      return session
    },
    current: (request, now) => {
      const session = found.get(request)
      return session !== undefined && session.expiresAt.getTime() > now.getTime() ? session : undefined
    },
  }
}

/** The value of one cookie in a Cookie header. */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** The Set-Cookie value of a session (or of its removal, `value` null). */
export const sessionCookie = (value: string | null, secure: boolean): string =>
  `${SESSION_COOKIE}=${value ?? ''}; Path=/console; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}; Max-Age=${value === null ? '0' : String(SESSION_SECONDS)}`

/** Whether two CSRF tokens are equal, in constant time. */
export const sameCsrf = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
