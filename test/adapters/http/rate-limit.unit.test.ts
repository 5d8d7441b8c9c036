import { describe, expect, it } from 'vitest'
import { overLongFields } from '../../../src/adapters/http/json-body.ts'
import { makeRateLimiter } from '../../../src/adapters/http/rate-limit.ts'

describe('the per-address rate limiter of unverified callbacks', () => {
  it('lets `perWindow` through per address in a minute, then says how long until one more fits, and that is when it does', () => {
    let now = 60_000 * 10 + 15_000
    const limiter = makeRateLimiter(3, () => now)
    expect([1, 2, 3].map(() => limiter.take('10.0.0.1'))).toEqual([null, null, null])
    const wait = limiter.take('10.0.0.1')
    expect(wait).toBe(75)
    expect(limiter.take('10.0.0.2')).toBeNull()
    // One second early it is still refused (each refusal counts too, so the next wait is longer).
    now += ((wait ?? 0) - 1) * 1000
    expect(limiter.take('10.0.0.1')).not.toBeNull()
    // A fresh limiter, the same four requests: at the wait given, one more fits.
    let then = 60_000 * 10 + 15_000
    const again = makeRateLimiter(3, () => then)
    for (let i = 0; i < 4; i++) again.take('10.0.0.1')
    then += 75_000
    expect(again.take('10.0.0.1')).toBeNull()
  })
  it('a burst across the edge of a minute gets the limit once, not twice', () => {
    // The limit at the end of one minute, then the same again just after it: a fixed window let all 60 through.
    let now = 60_000 * 10 + 59_900
    const limiter = makeRateLimiter(30, () => now)
    const before = Array.from({ length: 30 }, () => limiter.take('10.0.0.9'))
    now += 200
    const after = Array.from({ length: 30 }, () => limiter.take('10.0.0.9'))
    expect(before.every((w) => w === null)).toBe(true)
    expect(after.filter((w) => w === null)).toHaveLength(0)
    // Under the limit, evenly spread (20 a minute for nine minutes), every request gets through.
    const under = makeRateLimiter(30, () => now)
    let through = 0
    for (let i = 0; i < 180; i++) {
      now += 60_000 / 20
      if (under.take('10.0.0.8') === null) through++
    }
    expect(through).toBe(180)
  })
  it('0 is no limit', () => {
    const limiter = makeRateLimiter(0, () => 0)
    for (let i = 0; i < 1000; i++) expect(limiter.take('a')).toBeNull()
  })
  it('beyond `maxKeys` addresses the newcomers share one count: the map cannot grow without bound', () => {
    const limiter = makeRateLimiter(2, () => 0, 60_000, 2)
    expect([limiter.take('a'), limiter.take('b')]).toEqual([null, null])
    expect([limiter.take('c'), limiter.take('d'), limiter.take('e')]).toEqual([null, null, 100])
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
