import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describe, expect, it } from 'vitest'
import { decodeAll, decodeAt, formatViolations, violationsOf } from '../../src/domain/violations.ts'

/** Violations name the field path and the rule, once each, in order. */

const Customer = t.strict({ name: t.string, address: t.strict({ city: t.string }) }, 'Customer')

describe('violations', () => {
  it('paths are dotted; a missing field is required; a wrong type names the codec', () => {
    expect(decodeAll(Customer, { address: { city: 7 } })).toEqual(
      E.left([
        { path: 'name', rule: 'is required' },
        { path: 'address.city', rule: 'must be string' },
      ]),
    )
  })
  it('union members add no path segment; the same violation twice is reported once', () => {
    const Either = t.union([t.strict({ a: t.string }), t.strict({ a: t.number })])
    expect(decodeAll(Either, { a: true })).toEqual(E.left([{ path: 'a', rule: 'must be string' }, { path: 'a', rule: 'must be number' }]))
    expect(decodeAll(t.union([t.string, t.string]), 5)).toEqual(E.left([{ path: '', rule: 'must be string' }]))
  })
  it('an error with no context is invalid', () => {
    expect(violationsOf([{ value: 1, context: [] }])).toEqual([{ path: '', rule: 'is invalid' }])
  })
  it('decodeAt names the value by the path it sits at', () => {
    expect(decodeAt('limit', t.number, 'x')).toEqual(E.left([{ path: 'limit', rule: 'must be number' }]))
    expect(decodeAt('customer', Customer, { name: 'a', address: {} })).toEqual(E.left([{ path: 'customer.address.city', rule: 'is required' }]))
    expect(decodeAt('limit', t.number, 5)).toEqual(E.right(5))
  })
  it('formatted: one per line, the path before the rule when there is one', () => {
    expect(formatViolations([{ path: '', rule: 'must be an object' }, { path: 'a.b', rule: 'is required' }])).toBe('must be an object\na.b: is required')
  })
})

describe('violationsOf with a context that starts at a named field', () => {
  it('given errors of a codec validated under a keyed root entry, when turned into violations, then the path starts with that key', () => {
    // given: a caller validates a part of a body under the name of its field
    const codec = t.type({ amount: t.number })
    const result = codec.validate({ amount: 'x' }, [{ key: 'body', type: codec, actual: { amount: 'x' } }])
    // when/then
    expect(E.isLeft(result) ? violationsOf(result.left) : []).toEqual([{ path: 'body.amount', rule: 'must be number' }])
  })
})
