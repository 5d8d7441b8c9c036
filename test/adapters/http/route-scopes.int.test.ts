import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_SCOPES, type ApiScope } from '../../../src/adapters/http/api-tokens.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../../support/satang-with-sandbox.ts'

/**
 * Every route the running server registers × every scope: a route under /v1 answers 401 without a
 * token, 403 with a token of any other scope than its own, and neither with its own. The route list
 * comes from the server, so a new route without a rule here fails the first test.
 */

/** The rule of every route: the scope it needs, or why it needs none. */
const RULES: Readonly<Record<string, ApiScope | 'public' | 'console-session'>> = {
  'GET /healthz': 'public',
  'GET /livez': 'public',
  'GET /readyz': 'public',
  'GET /metrics': 'public',
  'GET /v1/openapi.json': 'public',
  // The reference of the API renders the document above, which needs no token either.
  'GET /docs': 'public',
  'GET /docs/assets/swagger-ui-bundle.js': 'public',
  'GET /docs/assets/swagger-ui.css': 'public',
  'GET /docs/assets/start.js': 'public',
  'POST /callbacks/payments': 'public',
  'POST /callbacks/refunds': 'public',
  'POST /callbacks/subscriptions': 'public',
}

const TOKENS: Readonly<Record<ApiScope, string>> = {
  'payments:write': 'scope-test-payments-write-0123456789',
  read: 'scope-test-read-0123456789abcdef',
  audit: 'scope-test-audit-0123456789abcdef',
  'reconcile:write': 'scope-test-reconcile-write-0123456789',
}

let s: SatangWithSandbox
beforeAll(async () => {
  s = await startSatangWithSandbox('scopes', {
    SATANG_API_TOKENS: API_SCOPES.map((scope) => `${scope.replace(':', '-')}:${TOKENS[scope]}:${scope}`).join(','),
  })
})
afterAll(async () => s.stop())

const key = (r: { readonly method: string; readonly url: string }): string => `${r.method} ${r.url}`
const concrete = (url: string): string => url.replace(/:[A-Za-z_]+/g, 'SCOPE-TEST-1').replace(/\*$/, 'x')

const request = async (method: string, url: string, token?: string): Promise<number> => {
  const res = await fetch(`${s.satang.httpUrl}${concrete(url)}`, {
    method,
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
    ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
  })
  await res.arrayBuffer()
  return res.status
}

describe('scopes on every route', () => {
  it('every registered route has a rule: a scope under /v1, or a reason it needs none', () => {
    const routes = s.satang.routes()
    expect(routes.length).toBeGreaterThan(10)
    const withoutRule = routes.filter((r) => RULES[key(r)] === undefined && !r.url.startsWith('/v1/') && !r.url.startsWith('/console') && !r.url.startsWith('/callbacks'))
    expect(withoutRule.map(key)).toEqual([])
  })

  it('a /v1 route answers 401 without a token, 403 with every other scope, and passes its own', async () => {
    const v1 = s.satang.routes().filter((r) => r.url.startsWith('/v1/') && RULES[key(r)] !== 'public')
    expect(v1.length).toBeGreaterThan(10)
    const table: string[] = []
    for (const r of v1) {
      const none = await request(r.method, r.url)
      const answers = await Promise.all(API_SCOPES.map(async (scope) => [scope, await request(r.method, r.url, TOKENS[scope])] as const))
      const own = answers.filter(([, status]) => status !== 403).map(([scope]) => scope)
      table.push(`${key(r)}: none ${String(none)}, ${answers.map(([scope, status]) => `${scope} ${String(status)}`).join(', ')}`)
      // exactly one scope gets past the check, and no token never does
      expect(none, `${key(r)} without a token`).toBe(401)
      expect(own, `${key(r)}: ${table.at(-1) ?? ''}`).toHaveLength(1)
      for (const [, status] of answers) expect(status).not.toBe(401)
    }
  })
})
