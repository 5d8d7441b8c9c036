import { describe, expect, it } from 'vitest'
import { canonicalizers, compareUtf8, satangCanonicalV1, sortedJson } from '../../../src/domain/gateway/canonical.ts'

/** satang-canonical-v1 and its JSON, each rule on its own. */

describe('compareUtf8', () => {
  it('orders by code point: a surrogate pair (above U+FFFF) sorts after U+E000–U+FFFF, unlike UTF-16 units', () => {
    const astral = '\u{1F600}' // U+D83D U+DE00 in UTF-16
    expect(Math.sign(compareUtf8(astral, '\uFFFF'))).toBe(1)
    expect(Math.sign(compareUtf8('\uE000', astral))).toBe(-1)
    // The edges of the surrogate range: U+D7FF and U+E000 are not surrogates, U+D800 and U+DFFF are.
    expect(Math.sign(compareUtf8('\uD7FF', '\uE000'))).toBe(-1)
    expect(Math.sign(compareUtf8('\uD800', '\uE000'))).toBe(1)
    expect(Math.sign(compareUtf8('\uDFFF', '\uE000'))).toBe(1)
    expect(Math.sign(compareUtf8('\uD7FF', '\uD800'))).toBe(-1)
    expect(Math.sign(compareUtf8('a', 'b'))).toBe(-1)
    expect(Math.sign(compareUtf8('ab', 'a'))).toBe(1)
    expect(compareUtf8('same', 'same')).toBe(0)
  })
})

describe('sortedJson', () => {
  it('scalars as JSON; undefined as null; arrays in order; object keys sorted at every depth, undefined values dropped', () => {
    expect(sortedJson('a"b')).toBe('"a\\"b"')
    expect(sortedJson(null)).toBe('null')
    expect(sortedJson(undefined)).toBe('null')
    expect(sortedJson(12.5)).toBe('12.5')
    expect(sortedJson(true)).toBe('true')
    expect(sortedJson([2, undefined, { b: 1, a: [] }])).toBe('[2,null,{"a":[],"b":1}]')
    expect(sortedJson({ z: 1, a: { y: undefined, x: null, w: 'v' }, m: [] })).toBe('{"a":{"w":"v","x":null},"m":[],"z":1}')
    expect(sortedJson({})).toBe('{}')
  })
})

describe('satang-canonical-v1', () => {
  it('drops the signature fields and empty values; sorts keys; strings verbatim; numbers, booleans and bigints as text; objects as sorted JSON', () => {
    expect(
      satangCanonicalV1.canonicalize({
        sign: 'S',
        sign_type: 'RSA',
        order_amount: '100.00',
        empty: '',
        none: null,
        missing: undefined,
        count: 3,
        flag: false,
        big: 12345678901234567890n,
        customer: { name: 'Somchai', address: { city: 'Bangkok' } },
        items: [{ b: 2, a: 1 }],
        a: 'x&y=z',
      }),
    ).toBe('a=x&y=z&big=12345678901234567890&count=3&customer={"address":{"city":"Bangkok"},"name":"Somchai"}&flag=false&items=[{"a":1,"b":2}]&order_amount=100.00')
    expect(satangCanonicalV1.canonicalize({})).toBe('')
    expect(satangCanonicalV1.canonicalize({ zero: 0 })).toBe('zero=0')
  })
  it('is the canonicalizer configuration names satang-canonical-v1', () => {
    expect(Object.keys(canonicalizers)).toEqual(['satang-canonical-v1'])
    expect(canonicalizers['satang-canonical-v1']).toBe(satangCanonicalV1)
  })
})
