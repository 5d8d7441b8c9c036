import { createHash } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { ApiTokens, generateToken, makeTokenMatcher, parseApiTokens } from '../../../src/adapters/http/api-tokens.ts'
import { decodeConfig, formatConfigErrors } from '../../../src/config.ts'

describe('API tokens', () => {
  it('parses name:token:scope+scope lists and the JSON form alike', () => {
    // `payments:write` holds a colon: only the first two colons of an entry split it
    expect(parseApiTokens('shop:abcdefghijklmnop1:payments:write+read, auditor:qrstuvwxyz0123456:audit')).toEqual({
      tokens: [
        { name: 'shop', token: 'abcdefghijklmnop1', scopes: ['payments:write', 'read'] },
        { name: 'auditor', token: 'qrstuvwxyz0123456', scopes: ['audit'] },
      ],
    })
    expect(parseApiTokens('shop-without-scopes')).toEqual({ problems: ['token 1: must be name:token:scope1+scope2 (a JSON list allows ":" and "," in tokens)'] })
    const json = parseApiTokens(JSON.stringify([{ name: 'shop', token: 'abcdefghijklmnop1', scopes: ['payments:write', 'read'] }]))
    expect(json).toEqual({ tokens: [{ name: 'shop', token: 'abcdefghijklmnop1', scopes: ['payments:write', 'read'] }] })
    expect(parseApiTokens('ro:abcdefghijklmnop2:read+audit')).toEqual({ tokens: [{ name: 'ro', token: 'abcdefghijklmnop2', scopes: ['read', 'audit'] }] })
  })

  it('reports every problem without quoting a token', () => {
    const r = parseApiTokens(JSON.stringify([
      { name: 'a', token: 'short-secret', scopes: ['read'] },
      { name: 'a', token: 'long-enough-secret-1', scopes: [] },
      { name: 'b c', token: 'long-enough-secret-1', scopes: ['root'] },
    ]))
    expect('problems' in r && r.problems).toEqual([
      'token 1 (a): the token must be at least 16 characters',
      'token 2: name a is used twice',
      'token 2 (a): needs at least one scope of payments:write, read, audit, reconcile:write',
      'token 3: name must be 1 to 64 letters, digits, dot, dash or underline',
      'token 3 (b c): the same token is given twice',
      'token 3 (b c): unknown scope (scopes are payments:write, read, audit, reconcile:write)',
    ])
    expect(JSON.stringify(r)).not.toContain('secret')
  })

  it('a bad SATANG_API_TOKENS stops start-up naming the variable, never the value', () => {
    const c = decodeConfig({ SATANG_API_TOKENS: 'shop:tiny-s3cr3t:read' })
    expect(E.isLeft(c)).toBe(true)
    if (E.isLeft(c)) {
      const text = formatConfigErrors(c.left)
      expect(text).toContain('SATANG_API_TOKENS (environment): token 1 (shop): the token must be at least 16 characters')
      expect(text).not.toContain('tiny-s3cr3t')
    }
    const ok = ApiTokens.decode('ro:abcdefghijklmnop2:read')
    expect(E.isRight(ok)).toBe(true)
  })

  it('matches presented tokens exactly (hashed, constant-time comparison)', () => {
    const a = generateToken()
    const b = generateToken()
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const match = makeTokenMatcher([
      { name: 'a', token: a, scopes: ['read'] },
      { name: 'b', token: b, scopes: ['audit'] },
    ])
    expect(match(a)?.name).toBe('a')
    expect(match(b)?.name).toBe('b')
    expect(match(`${a}x`)).toBeUndefined()
    expect(match(a.slice(0, -1))).toBeUndefined()
    expect(match('')).toBeUndefined()
  })

  it('a token configured as sha256:<hex> matches the token it is the digest of; the matcher keeps no plain token', () => {
    const plain = generateToken()
    const digest = createHash('sha256').update(plain, 'utf8').digest('hex')
    const parsed = parseApiTokens(`ops:sha256:${digest}:read`)
    if (!('tokens' in parsed)) throw new Error(parsed.problems.join('; '))
    const match = makeTokenMatcher(parsed.tokens)
    expect(match(plain)).toEqual({ name: 'ops', scopes: ['read'] })
    expect(match(`sha256:${digest}`)).toBeUndefined()
    expect(JSON.stringify(match(plain))).not.toContain(plain)
  })
})
