import { createHash, createHmac, randomBytes } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SESSION_SECONDS } from '../../../../src/adapters/http/console/session.ts'
import { EVENT_STORE_SCHEMA } from '../../../../src/composition/database.ts'
import { READ_MODEL_SCHEMA } from '../../../../src/projections/index.ts'
import { silentLogger } from '../../../../src/logger.ts'
import { startProcess, type RunningProcess } from '../../../../src/main.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../../../support/satang-with-sandbox.ts'

/**
 * Acceptance (issue 22, item 1): console sessions over real HTTP, on real satang processes and
 * PostgreSQL. Installation A runs `satang up` in this process plus a second api process on the same
 * database and data folder; installation B has the very same SATANG_API_TOKENS and a database and
 * data folder of its own. A cookie forged from the token configuration (the old key derivation), a
 * cookie of the other installation, a signed-out cookie (at either api process) and a correctly
 * signed cookie whose expiry lies far ahead are all refused; the 6th wrong sign-in within a minute
 * from one address is answered 429 and recorded as ConsoleSignInLockedOut.
 */

const TOKEN = 'satang-with-sandbox-token-0123456789'
const TOKENS = [{ name: 'test', token: TOKEN, scopes: ['payments:write', 'read', 'audit', 'reconcile:write'] }]

let a: SatangWithSandbox
let b: SatangWithSandbox
let a2: RunningProcess

beforeAll(async () => {
  a = await startSatangWithSandbox('console-sessions-a')
  b = await startSatangWithSandbox('console-sessions-b')
  // A second api process of installation A: same database, same data folder (so the same session secret).
  a2 = await startProcess(a.config, silentLogger(), 'api', { allowSuperuser: true })
}, 240_000)

afterAll(async () => {
  await a2?.stop()
  await a?.stop()
  await b?.stop()
})

const b64 = (x: Buffer | string): string => Buffer.from(x).toString('base64url')

/** A cookie value signed with `key` the way satang signs one: payload.hmac(payload). */
const cookieWith = (key: Buffer, payload: { readonly n: string; readonly e: number; readonly s: string }): string => {
  const p = b64(JSON.stringify(payload))
  return `satang_console=${p}.${b64(createHmac('sha256', key).update(p).digest())}`
}

/** The key of the old derivation: SHA-256 over the configured tokens only (no server secret). */
const keyFromConfigurationOnly = (): Buffer => {
  const h = createHash('sha256')
  h.update('satang-console-session-v1\u0000')
  for (const tk of TOKENS) h.update(`${tk.name}\u0000${tk.token}\u0000${tk.scopes.join('+')}\u0000`)
  return h.digest()
}

/** The key satang derives from the installation's session secret (as src/adapters/http/console/session.ts does). */
const installationKey = (dataDir: string): Buffer => {
  const secret = Buffer.from(readFileSync(join(dataDir, 'session-secret'), 'utf8').trim(), 'utf8')
  const h = createHmac('sha256', secret)
  h.update('satang-console-session-v2\u0000')
  for (const tk of TOKENS) h.update(`${tk.name}\u0000${tk.token}\u0000${tk.scopes.join('+')}\u0000`)
  return h.digest()
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000)
const sessionId = (): string => b64(randomBytes(18))

const status = async (base: string, cookie: string, path = '/console'): Promise<number> => (await fetch(`${base}${path}`, { headers: { cookie } })).status

const signIn = async (base: string, token: string): Promise<Response> =>
  fetch(`${base}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base }, body: new URLSearchParams({ token, next: '/console' }).toString() })

/** A signed-in session's cookie and CSRF token. */
const session = async (base: string): Promise<{ readonly cookie: string; readonly csrf: string }> => {
  const res = await signIn(base, TOKEN)
  expect(res.status).toBe(303)
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const page = await (await fetch(`${base}/console`, { headers: { cookie } })).text()
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ''
  expect(csrf).not.toBe('')
  return { cookie, csrf }
}

const query = async <R extends Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<R[]> => {
  const c = new Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query<R>(text, values)).rows
  } finally {
    await c.end()
  }
}

describe('console sessions: keyed by the installation, bounded, revocable', () => {
  it('the session secret is generated into the data folder, 0600, and differs between installations', () => {
    const pathA = join(a.dir, 'session-secret')
    expect(statSync(pathA).mode & 0o777).toBe(0o600)
    expect(readFileSync(pathA, 'utf8').trim().length).toBeGreaterThanOrEqual(32)
    expect(readFileSync(join(b.dir, 'session-secret'), 'utf8')).not.toBe(readFileSync(pathA, 'utf8'))
  })

  it('a cookie made with a key computed from SATANG_API_TOKENS (the old derivation) is refused; the same cookie under the installation key is accepted', async () => {
    const payload = { n: 'test', e: nowSeconds() + 3600, s: sessionId() }
    const forged = cookieWith(keyFromConfigurationOnly(), payload)
    expect(await status(a.satang.httpUrl, forged)).toBe(401)
    expect(await status(a2.httpUrl, forged)).toBe(401)
    // The control: the very payload signed with the key only the installation's secret gives is a session.
    expect(await status(a.satang.httpUrl, cookieWith(installationKey(a.dir), payload))).toBe(200)
  })

  it('a correctly signed cookie whose expiry lies far ahead is refused (10 years; and just past 8 h + the skew)', async () => {
    const key = installationKey(a.dir)
    expect(await status(a.satang.httpUrl, cookieWith(key, { n: 'test', e: nowSeconds() + 10 * 365 * 86_400, s: sessionId() }))).toBe(401)
    expect(await status(a.satang.httpUrl, cookieWith(key, { n: 'test', e: nowSeconds() + SESSION_SECONDS + 600, s: sessionId() }))).toBe(401)
    expect(await status(a.satang.httpUrl, cookieWith(key, { n: 'test', e: nowSeconds() + SESSION_SECONDS, s: sessionId() }))).toBe(200)
    expect(await status(a.satang.httpUrl, cookieWith(key, { n: 'test', e: nowSeconds() - 1, s: sessionId() }))).toBe(401)
  })

  it('two installations with the same tokens refuse each other\'s cookies; two api processes of one installation accept each other\'s', async () => {
    const fromA = await session(a.satang.httpUrl)
    const fromB = await session(b.satang.httpUrl)
    expect(await status(a.satang.httpUrl, fromA.cookie)).toBe(200)
    expect(await status(b.satang.httpUrl, fromA.cookie)).toBe(401)
    expect(await status(a.satang.httpUrl, fromB.cookie)).toBe(401)
    expect(await status(b.satang.httpUrl, fromB.cookie)).toBe(200)
    expect(await status(a2.httpUrl, fromA.cookie)).toBe(200)
    expect(await status(a2.httpUrl, fromB.cookie)).toBe(401)
  })

  it('a signed-out cookie is refused by the api process that signed it out and by the other one', async () => {
    const s = await session(a.satang.httpUrl)
    expect(await status(a2.httpUrl, s.cookie)).toBe(200)
    const out = await fetch(`${a2.httpUrl}/console/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: s.cookie, origin: a2.httpUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: s.csrf }).toString(),
    })
    expect(out.status).toBe(303)
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/)
    for (const base of [a.satang.httpUrl, a2.httpUrl]) {
      expect(await status(base, s.cookie), base).toBe(401)
      expect(await status(base, s.cookie, '/console/breaks'), base).toBe(401)
    }
    const ended = await query<{ n: string }>(a.databaseUrl, `select count(*)::text as n from "${READ_MODEL_SCHEMA}".console_sessions_ended`)
    expect(ended[0]?.n).toBe('1')
    // Another session of the same token is untouched.
    const other = await session(a.satang.httpUrl)
    expect(await status(a2.httpUrl, other.cookie)).toBe(200)
  })

  it('the 6th wrong sign-in within a minute from one address is refused with 429 and Retry-After, and recorded as ConsoleSignInLockedOut', async () => {
    const base = b.satang.httpUrl
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await signIn(base, `wrong-token-${String(i)}-0123456789abcdef`)).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401])
    const sixth = await signIn(base, 'wrong-token-5-0123456789abcdef')
    expect(sixth.status).toBe(429)
    const retryAfter = Number(sixth.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(await sixth.text()).toContain('Too many wrong tokens')
    // Locked out: even the right token is refused from this address meanwhile (no oracle for guesses).
    expect((await signIn(base, TOKEN)).status).toBe(429)
    const events = await query<{ stream_name: string; data: { address: string; failures: number; windowSeconds: number; lockedAt: string; lockedUntil: string } }>(
      b.databaseUrl,
      `select stream_name, data from "${EVENT_STORE_SCHEMA}".events where type = 'ConsoleSignInLockedOut'`,
    )
    expect(events).toHaveLength(1)
    const e = events[0]
    expect(e?.stream_name).toMatch(/^console-sign-in-\d{4}-\d{2}-\d{2}$/)
    expect(e?.data).toMatchObject({ address: expect.stringMatching(/127\.0\.0\.1/) as unknown, failures: 6, windowSeconds: 60 })
    expect(Date.parse(e?.data.lockedUntil ?? '') - Date.parse(e?.data.lockedAt ?? '')).toBe(60_000)
    // Installation A's processes keep their own count: its sign-in still works.
    expect((await signIn(a.satang.httpUrl, TOKEN)).status).toBe(303)
  })
})
