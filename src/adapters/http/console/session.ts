import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import type { ApiScope, ApiToken, KnownToken } from '../api-tokens.ts'

/*
 * Console sessions: signing in with an API token (posted from a form, never in a URL) sets a cookie
 * holding the token's name, an expiry and a random nonce, signed with HMAC-SHA256 — never the token.
 * The key is derived from every configured token, so every api process with the same tokens accepts
 * the same sessions, and changing any token ends them all. The cookie is HttpOnly, SameSite=Strict,
 * Path=/console (Secure over HTTPS). Each session has its CSRF token (an HMAC of its nonce), which
 * every form that changes something must carry.
 */

export const SESSION_COOKIE = 'satang_console'
export const SESSION_SECONDS = 8 * 3600

export type ConsoleSession = {
  readonly tokenName: string
  readonly scopes: ReadonlyArray<ApiScope>
  readonly csrf: string
  readonly expiresAt: Date
}

const Payload = t.type({ n: t.string, e: t.number, s: t.string })

const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64url')

export type Sessions = {
  /** The cookie value of a new session for `token`. */
  readonly issue: (token: KnownToken | ApiToken, now: Date) => { readonly value: string; readonly session: ConsoleSession }
  /** The session a cookie value names, when its signature holds, it has not expired and its token is still configured. */
  readonly read: (value: string, now: Date) => ConsoleSession | undefined
}

export const makeSessions = (tokens: ReadonlyArray<ApiToken>): Sessions => {
  const material = createHash('sha256')
  material.update('satang-console-session-v1\u0000')
  for (const tk of [...tokens].sort((a, b) => (a.name < b.name ? -1 : 1))) material.update(`${tk.name}\u0000${tk.token}\u0000${tk.scopes.join('+')}\u0000`)
  const key = material.digest()
  const mac = (text: string): Buffer => createHmac('sha256', key).update(text).digest()
  const byName = new Map(tokens.map((tk) => [tk.name, tk]))
  const sessionOf = (name: string, expires: number, nonce: string): ConsoleSession | undefined => {
    const token = byName.get(name)
    if (token === undefined) return undefined
    return { tokenName: name, scopes: token.scopes, csrf: b64(mac(`csrf\u0000${nonce}`)), expiresAt: new Date(expires * 1000) }
  }
  return {
    issue: (token, now) => {
      const payload = b64(JSON.stringify({ n: token.name, e: Math.floor(now.getTime() / 1000) + SESSION_SECONDS, s: b64(randomBytes(18)) }))
      const value = `${payload}.${b64(mac(payload))}`
      const session = readValue(value, now)
      if (session === undefined) throw new Error('console: a session was issued for a token that is not configured')
      return { value, session }
    },
    read: (value, now) => readValue(value, now),
  }

  function readValue(value: string, now: Date): ConsoleSession | undefined {
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
    if (E.isLeft(p) || p.right.e * 1000 <= now.getTime()) return undefined
    return sessionOf(p.right.n, p.right.e, p.right.s)
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
