import { describe, expect, it } from 'vitest'
import { overLongFields } from '../../../src/adapters/http/json-body.ts'
import { makeRateLimiter } from '../../../src/adapters/http/rate-limit.ts'

describe('the per-address rate limiter of unverified callbacks', () => {
  it('lets `perWindow` through per address and window, then says how long to wait; a new window starts afresh', () => {
    let now = 60_000 * 10 + 15_000
    const limiter = makeRateLimiter(3, () => now)
    expect([1, 2, 3].map(() => limiter.take('10.0.0.1'))).toEqual([null, null, null])
    expect(limiter.take('10.0.0.1')).toBe(45)
    expect(limiter.take('10.0.0.2')).toBeNull()
    now += 45_000
    expect(limiter.take('10.0.0.1')).toBeNull()
  })
  it('0 is no limit', () => {
    const limiter = makeRateLimiter(0, () => 0)
    for (let i = 0; i < 1000; i++) expect(limiter.take('a')).toBeNull()
  })
  it('beyond `maxKeys` addresses the newcomers share one count: the map cannot grow without bound', () => {
    const limiter = makeRateLimiter(2, () => 0, 60_000, 2)
    expect([limiter.take('a'), limiter.take('b')]).toEqual([null, null])
    expect([limiter.take('c'), limiter.take('d'), limiter.take('e')]).toEqual([null, null, 60])
    expect(limiter.take('a')).toBeNull()
  })
})

describe('field length limits', () => {
  it('names every string and key over the limit, nested, with the limit', () => {
    const rule = 'must be at most 5 characters (SATANG_HTTP_MAX_FIELD_LENGTH)'
    expect(overLongFields({ a: 'short', b: 'longer', c: { d: ['ok', 'too long'] }, abcdefgh: 1, n: 123456789 }, 5)).toEqual([
      { path: 'b', rule },
      { path: 'c.d.1', rule },
      { path: 'abcdefgh…', rule: `key ${rule}` },
    ])
    expect(overLongFields('x'.repeat(6), 5, 'query')).toEqual([{ path: 'query', rule }])
    expect(overLongFields(null, 5)).toEqual([])
  })
})
