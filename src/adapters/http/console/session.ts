import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
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
 */

export const SESSION_COOKIE = 'satang_console'
export const SESSION_SECONDS = 8 * 3600
/** How far a cookie's expiry may lie past now + SESSION_SECONDS: clocks of api processes differ a little. */
export const SESSION_SKEW_SECONDS = 60
/** Bytes of the session secret; a configured secret must hold at least as many characters. */
export const SESSION_SECRET_BYTES = 32

export type ConsoleSession = {
  readonly id: string
  readonly tokenName: string
  readonly scopes: ReadonlyArray<ApiScope>
  readonly csrf: string
  readonly expiresAt: Date
}

const SESSION_ID = /^[A-Za-z0-9_-]{24}$/
const Payload = t.type({ n: t.string, e: t.number, s: t.string })
// A cookie this long is no cookie of ours: nothing longer is parsed.
const MAX_COOKIE_LENGTH = 512

const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64url')

export type Sessions = {
  /** The cookie value of a new session for `token`. */
  readonly issue: (token: KnownToken | ApiToken, now: Date) => { readonly value: string; readonly session: ConsoleSession }
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

export const makeSessions = (deps: { readonly secret: Buffer; readonly tokens: ReadonlyArray<ApiToken>; readonly ended: EndedSessions }): Sessions => {
  if (deps.secret.length < SESSION_SECRET_BYTES) throw new Error(`console: the session secret must hold at least ${String(SESSION_SECRET_BYTES)} bytes`)
  const key = sessionKey(deps.secret, deps.tokens)
  const mac = (text: string): Buffer => createHmac('sha256', key).update(text).digest()
  const byName = new Map(deps.tokens.map((tk) => [tk.name, tk]))
  const found = new WeakMap<object, ConsoleSession>()

  const sessionOf = (name: string, expires: number, id: string): ConsoleSession | undefined => {
    const token = byName.get(name)
    if (token === undefined) return undefined
    return { id, tokenName: name, scopes: token.scopes, csrf: b64(mac(`csrf\u0000${id}`)), expiresAt: new Date(expires * 1000) }
  }

  /** The session a cookie value states, when it is signed by this installation and within its time. */
  const verify = (value: string, now: Date): ConsoleSession | undefined => {
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
    return sessionOf(p.right.n, p.right.e, p.right.s)
  }

  const read = async (value: string, now: Date): Promise<ConsoleSession | undefined> => {
    const session = verify(value, now)
    if (session === undefined) return undefined
    return (await deps.ended.hasEnded(session.id)) ? undefined : session
  }

  return {
    issue: (token, now) => {
      const payload = b64(JSON.stringify({ n: token.name, e: Math.floor(now.getTime() / 1000) + SESSION_SECONDS, s: b64(randomBytes(18)) }))
      const value = `${payload}.${b64(mac(payload))}`
      const session = verify(value, now)
      if (session === undefined) throw new Error('console: a session was issued for a token that is not configured')
      return { value, session }
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
