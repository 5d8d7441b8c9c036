import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import * as t from 'io-ts'

/**
 * Bearer API tokens of the merchant API. Each token has a name (for logs and audit metadata; the
 * token itself never appears anywhere but in the config) and scopes:
 * - `payments:write` creates payments, checkouts and subscriptions, tracks refunds;
 * - `read` reads payments, refunds and subscriptions (and may `?refresh=true` them);
 * - `audit` reads audit trails;
 * - `reconcile:write` acknowledges reconciliation breaks (the reconciliation reads need `read`).
 */
export const API_SCOPES = ['payments:write', 'read', 'audit', 'reconcile:write'] as const
export type ApiScope = (typeof API_SCOPES)[number]

export type ApiToken = {
  readonly name: string
  readonly token: string
  readonly scopes: ReadonlyArray<ApiScope>
}

export const MIN_TOKEN_LENGTH = 16
const NAME = /^[A-Za-z0-9_.-]{1,64}$/
// Printable ASCII without spaces: what fits an `Authorization: Bearer` header unchanged.
const TOKEN = /^[\x21-\x7e]+$/

const isScope = (s: string): s is ApiScope => (API_SCOPES as ReadonlyArray<string>).includes(s)

/** Every rule a token list breaks (rule texts only: they never quote a token). */
const problemsOf = (tokens: ReadonlyArray<{ name: string; token: string; scopes: ReadonlyArray<string> }>): string[] => {
  const problems: string[] = []
  if (tokens.length === 0) problems.push('must name at least one token')
  const names = new Set<string>()
  const secrets = new Set<string>()
  tokens.forEach((tk, i) => {
    const at = `token ${String(i + 1)}`
    if (!NAME.test(tk.name)) problems.push(`${at}: name must be 1 to 64 letters, digits, dot, dash or underline`)
    else if (names.has(tk.name)) problems.push(`${at}: name ${tk.name} is used twice`)
    names.add(tk.name)
    if (tk.token.length < MIN_TOKEN_LENGTH) problems.push(`${at} (${tk.name}): the token must be at least ${String(MIN_TOKEN_LENGTH)} characters`)
    if (!TOKEN.test(tk.token)) problems.push(`${at} (${tk.name}): the token must be printable ASCII without spaces`)
    if (secrets.has(tk.token)) problems.push(`${at} (${tk.name}): the same token is given twice`)
    secrets.add(tk.token)
    if (tk.scopes.length === 0) problems.push(`${at} (${tk.name}): needs at least one scope of ${API_SCOPES.join(', ')}`)
    for (const s of tk.scopes) if (!isScope(s)) problems.push(`${at} (${tk.name}): unknown scope (scopes are ${API_SCOPES.join(', ')})`)
  })
  return problems
}

const JsonTokens = t.array(t.type({ name: t.string, token: t.string, scopes: t.array(t.string) }))

/** `name:token:scope1+scope2,name2:token2:scope` — or the same as a JSON list of `{ name, token, scopes }`. */
export const parseApiTokens = (text: string): { readonly tokens: ReadonlyArray<ApiToken> } | { readonly problems: ReadonlyArray<string> } => {
  const trimmed = text.trim()
  let raw: Array<{ name: string; token: string; scopes: string[] }>
  if (trimmed.startsWith('[')) {
    let json: unknown
    try {
      json = JSON.parse(trimmed)
    } catch {
      return { problems: ['must be a JSON list of { name, token, scopes } or name:token:scope+scope,…'] }
    }
    if (!JsonTokens.is(json)) return { problems: ['must be a JSON list of { name, token, scopes } (strings, scopes a list of strings)'] }
    raw = json
  } else {
    raw = []
    const entries = trimmed.split(',').map((s) => s.trim())
    for (const [i, entry] of entries.entries()) {
      // name:token:scopes — the scopes themselves contain a colon (payments:write), so only the first two split.
      const first = entry.indexOf(':')
      // A hashed token (`sha256:<hex>`) holds a colon of its own.
      const hashed = first >= 0 && entry.startsWith('sha256:', first + 1)
      const second = first < 0 ? -1 : entry.indexOf(':', hashed ? first + 8 : first + 1)
      if (second < 0) return { problems: [`token ${String(i + 1)}: must be name:token:scope1+scope2 (a JSON list allows ":" and "," in tokens)`] }
      const scopes = entry.slice(second + 1)
      raw.push({ name: entry.slice(0, first), token: entry.slice(first + 1, second), scopes: scopes === '' ? [] : scopes.split('+') })
    }
  }
  const problems = problemsOf(raw)
  if (problems.length > 0) return { problems }
  return { tokens: raw.map((r) => ({ name: r.name, token: r.token, scopes: r.scopes.filter(isScope) })) }
}

/** The config codec of `SATANG_API_TOKENS`. Encodes to the JSON form. */
export const ApiTokens = new t.Type<ReadonlyArray<ApiToken>, string, unknown>(
  'ApiTokens',
  (u): u is ReadonlyArray<ApiToken> => Array.isArray(u),
  (u, c) => {
    if (typeof u !== 'string' && !Array.isArray(u)) return t.failure(u, c, 'must be name:token:scope+scope,… or a JSON list of { name, token, scopes }')
    const parsed = parseApiTokens(typeof u === 'string' ? u : JSON.stringify(u))
    return 'tokens' in parsed ? t.success(parsed.tokens) : t.failure(u, c, parsed.problems.join('; '))
  },
  (tokens) => JSON.stringify(tokens),
)

/** A fresh token: 32 random bytes, base64url (43 characters). */
export const generateToken = (): string => randomBytes(32).toString('base64url')

/** A token as the API keeps it after start-up: its name and scopes, never the token itself. */
export type KnownToken = Pick<ApiToken, 'name' | 'scopes'>

/** Matches a presented token against the configured ones. */
export type TokenMatcher = (presented: string) => KnownToken | undefined

/** A configured token given as its digest, `sha256:<64 hex digits>`, instead of the token itself. */
const HASHED = /^sha256:([0-9a-f]{64})$/

/**
 * Keeps SHA-256 digests only (a token configured as `sha256:<hex>` is its digest already) and compares in constant time: both sides are hashed to 32 bytes first (so lengths leak nothing) and
 * every configured token is compared, whether or not an earlier one matched.
 */
export const makeTokenMatcher = (tokens: ReadonlyArray<ApiToken>): TokenMatcher => {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()
  // Only the digests are kept: the plain tokens are not retained by the matcher.
  const known = tokens.map((tk) => {
    const hashed = HASHED.exec(tk.token)?.[1]
    return { tk: { name: tk.name, scopes: tk.scopes }, digest: hashed === undefined ? digest(tk.token) : Buffer.from(hashed, 'hex') }
  })
  return (presented) => {
    const d = digest(presented)
    let found: KnownToken | undefined
    for (const k of known) if (timingSafeEqual(k.digest, d) && found === undefined) found = k.tk
    return found
  }
}
