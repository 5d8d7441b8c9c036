import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isJson, isJsonObject, JsonObjectCodec, toJson, toJsonObject } from '../../../src/domain/events/json.ts'
import { decodeAll } from '../../../src/domain/violations.ts'
import * as E from 'fp-ts/lib/Either.js'

/* JSON as events store it, and the conversion of a decoded message to it. */

describe('isJson', () => {
  it('holds for null, text, booleans, finite numbers, and arrays and plain objects of them', () => {
    for (const u of [null, '', 'x', true, false, 0, -1.5, [], [null, 'a', [1]], {}, { a: { b: [true, null] } }]) expect(isJson(u)).toBe(true)
  })

  it('refuses undefined, non-finite numbers, bigints, functions, symbols, and containers holding them', () => {
    for (const u of [undefined, Number.NaN, Number.POSITIVE_INFINITY, 1n, () => 1, Symbol('s'), [1, undefined], { a: Number.NaN }, { a: { b: 1n } }, [{ c: 2n }]])
      expect(isJson(u)).toBe(false)
  })

  it('refuses class instances, which JSON.stringify would turn into something else: a Date, a Map, a Set, a Buffer, a class of our own, and containers holding them', () => {
    class Money {
      readonly satang = 100
    }
    for (const u of [new Date(0), new Map([['a', 1]]), new Set([1]), Buffer.from('x'), new Money(), new Uint8Array(2), { at: new Date(0) }, [new Map()], { a: { b: new Money() } }]) expect(isJson(u)).toBe(false)
    expect(isJsonObject(new Money())).toBe(false)
    expect(JsonObjectCodec.is(new Map())).toBe(false)
    // An object with no prototype is a plain object; so is what JSON.parse gives.
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
    expect([isJson(bare), isJsonObject(bare), isJson(JSON.parse('{"a":[{"b":null}]}'))]).toEqual([true, true, true])
  })

  it('toJson: a class instance other than a Date becomes null, as any value JSON cannot hold', () => {
    class Money {
      readonly satang = 100
    }
    expect(toJson({ m: new Map([['a', 1]]), o: new Money(), s: new Set([1]), d: new Date(0) })).toStrictEqual({ m: null, o: null, s: null, d: '1970-01-01T00:00:00.000Z' })
  })

  it('isJsonObject: a plain object of JSON only', () => {
    expect([isJsonObject({ a: 1 }), isJsonObject([]), isJsonObject(null), isJsonObject('{}'), isJsonObject({ a: undefined })]).toEqual([true, false, false, false, false])
  })

  it('JsonObjectCodec keeps an object as is, and names the rule otherwise', () => {
    const o = { a: [1, 'b'] }
    expect(JsonObjectCodec.decode(o)).toStrictEqual(E.right(o))
    expect(decodeAll(JsonObjectCodec, [1])).toStrictEqual(E.left([{ path: '', rule: 'must be a JSON object' }]))
    expect(decodeAll(JsonObjectCodec, { a: 1n })).toStrictEqual(E.left([{ path: '', rule: 'must be a JSON object' }]))
    expect([JsonObjectCodec.is(o), JsonObjectCodec.is('x')]).toEqual([true, false])
  })
})

describe('toJson', () => {
  it('keeps JSON values, writes bigints as digits and dates as ISO instants, nulls what JSON cannot hold', () => {
    expect(toJson(null)).toBeNull()
    expect(toJson('x')).toBe('x')
    expect(toJson('')).toBe('')
    expect(toJson(false)).toBe(false)
    expect(toJson(true)).toBe(true)
    expect(toJson(0)).toBe(0)
    expect(toJson(12.5)).toBe(12.5)
    expect(toJson(Number.NaN)).toBeNull()
    expect(toJson(Number.NEGATIVE_INFINITY)).toBeNull()
    expect(toJson(12345678901234567890n)).toBe('12345678901234567890')
    expect(toJson(0n)).toBe('0')
    expect(toJson(new Date('2026-01-01T03:00:00.000Z'))).toBe('2026-01-01T03:00:00.000Z')
    expect(toJson(new Date('nope'))).toBeNull()
    expect(toJson(undefined)).toBeNull()
    expect(toJson(() => 1)).toBeNull()
    expect(toJson(Symbol('s'))).toBeNull()
  })

  it('converts arrays and objects member by member, leaving out undefined members', () => {
    expect(toJson([1n, undefined, { d: new Date(0), u: undefined, n: null }])).toStrictEqual(['1', null, { d: '1970-01-01T00:00:00.000Z', n: null }])
    expect(toJsonObject({ a: 1n, b: undefined, c: { e: [2n] } })).toStrictEqual({ a: '1', c: { e: ['2'] } })
  })

  it('a member named __proto__ stays a member, with its value (fast-check found it dropped)', () => {
    const parsed = JSON.parse('{"__proto__": "", "a": {"__proto__": {"b": 1n}}}'.replace('1n', '"1"')) as Record<string, unknown>
    const out = toJson(parsed)
    expect(JSON.stringify(out)).toBe('{"__proto__":"","a":{"__proto__":{"b":"1"}}}')
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(toJson([{ ['__proto__']: '' }])).toStrictEqual(JSON.parse('[{"__proto__":""}]'))
  })

  it('the result is always JSON, and JSON is left as it was', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withNullPrototype: false }), (u) => {
        expect(isJson(toJson(u))).toBe(true)
      }),
    )
    fc.assert(
      fc.property(fc.jsonValue(), (j) => {
        expect(toJson(j)).toStrictEqual(j)
      }),
    )
  })
})
