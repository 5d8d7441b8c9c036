import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { keyOf } from '../../../src/domain/events/natural-key.ts'

describe('keyOf', () => {
  it('keeps the keys of well-formed parts as they always were (percent-encoded, joined by :)', () => {
    expect(keyOf('order-1', 'a:b', 'ก')).toBe(`order-1:a%3Ab:${encodeURIComponent('ก')}`)
  })

  it('takes any string, lone surrogates included, and never maps two different part lists to one key', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 4 }), fc.array(fc.string({ unit: 'binary' }), { maxLength: 4 }), (a, b) => {
        const ka = keyOf(...a)
        expect(ka).toBe(keyOf(...a))
        if (JSON.stringify(a) !== JSON.stringify(b) && a.length === b.length) expect(keyOf(...b)).not.toBe(ka)
      }),
    )
    expect(keyOf('\ud800')).toBe('%uD800')
    expect(keyOf('\ud800')).not.toBe(keyOf('\ufffd'))
    // Quick on an idle core; the limit allows for a loaded CI machine (it timed out at 5 s at load 16).
  }, 30_000)
})
