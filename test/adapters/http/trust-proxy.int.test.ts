import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Running } from '../../../src/main.ts'
import type { Sandbox } from '../../../src/sandbox/sandbox.ts'
import { MERCHANT_ID, startSandbox } from '../../sandbox/support.ts'
import { freshDatabase } from './database.ts'
import { startTestSatang } from './satang.ts'

/**
 * Issue 25, item 6: `SATANG_TRUST_PROXY`. Behind a trusted proxy (here the test itself, on 127.0.0.1),
 * `X-Forwarded-For` gives the client address the callback rate limit counts, and `X-Forwarded-Proto:
 * https` makes the console cookie `Secure`; from a peer that is not trusted both headers change nothing.
 * Real satang, PostgreSQL and sandbox over HTTP.
 */

const TOKEN = 'trust-proxy-int-token-0123456789'
const LIMIT = 5
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox
const dirs: string[] = []

beforeAll(async () => {
  db = await freshDatabase('trustproxy')
  sandbox = await startSandbox()
})

afterAll(async () => {
  await sandbox.close()
  await db.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const startSatang = (settings: Readonly<Record<string, string>>): Promise<Running> => {
  const dir = mkdtempSync(join(tmpdir(), 'satang-trust-proxy-'))
  dirs.push(dir)
  return startTestSatang({ databaseUrl: db.url, gatewayUrl: sandbox.url, dir, token: TOKEN, settings: { SATANG_CALLBACK_RATE_LIMIT: String(LIMIT), ...settings } })
}

let forged = 0
/** One forged notification (a distinct body each time, a bad signature) as if from `client`; the status. */
const forge = async (satang: Running, client: string): Promise<number> => {
  forged += 1
  const body = JSON.stringify({ notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: `FORGED-${String(forged)}`, order_id: 'x', order_status: 'PS', order_amount: '1.00', order_currency: 'THB', sign_type: 'RSA', sign: 'AAAA' })
  const res = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body })
  await res.arrayBuffer()
  return res.status
}

const burst = async (satang: Running, client: string, n: number): Promise<ReadonlyArray<number>> => {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push(await forge(satang, client))
  return out
}

const signInCookie = async (satang: Running, proto: string): Promise<string> => {
  const res = await fetch(`${satang.httpUrl}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: satang.httpUrl, 'x-forwarded-proto': proto },
    body: new URLSearchParams({ token: TOKEN, next: '/console' }).toString(),
  })
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie') ?? ''
}

describe('SATANG_TRUST_PROXY', () => {
  it('from a trusted proxy: forged callbacks of two forwarded client addresses are limited separately, and the console cookie is Secure behind TLS', async () => {
    const satang = await startSatang({ SATANG_TRUST_PROXY: '127.0.0.1,10.0.0.0/8' })
    try {
      const first = await burst(satang, '203.0.113.7', LIMIT + 1)
      expect(first.slice(0, LIMIT).every((s) => s !== 429), first.join(',')).toBe(true)
      expect(first[LIMIT]).toBe(429)
      // Another client behind the same proxy has a count of its own.
      const second = await burst(satang, '198.51.100.9', LIMIT)
      expect(second.every((s) => s !== 429), second.join(',')).toBe(true)
      // A client that forwards its own X-Forwarded-For through the proxy: the proxy's last hop is what counts.
      expect(await forge(satang, '192.0.2.1, 203.0.113.7')).toBe(429)

      expect(await signInCookie(satang, 'https')).toMatch(/;\s*Secure/i)
      expect(await signInCookie(satang, 'http')).not.toMatch(/;\s*Secure/i)
    } finally {
      await satang.stop()
    }
  })

  it('without it (the default): X-Forwarded-For and X-Forwarded-Proto change nothing', async () => {
    const satang = await startSatang({})
    try {
      const first = await burst(satang, '203.0.113.7', LIMIT)
      expect(first.every((s) => s !== 429), first.join(',')).toBe(true)
      // Another forwarded address from the same peer: the same count, so limited at once.
      expect(await forge(satang, '198.51.100.9')).toBe(429)
      expect(await signInCookie(satang, 'https')).not.toMatch(/;\s*Secure/i)
    } finally {
      await satang.stop()
    }
  })
})
