import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { itemKeyOf, SatangSum } from '../../../src/domain/reconciliation/events/values.ts'
import { decodeAll } from '../../../src/domain/violations.ts'

const RULE = [{ path: '', rule: 'must be a whole number of satang as a digit string' }]

describe('SatangSum', () => {
  it('decodes digit strings of up to 25 digits, with no leading zero', () => {
    expect(SatangSum.decode('0')).toStrictEqual(E.right(0n))
    expect(SatangSum.decode('1234567890123456789012345')).toStrictEqual(E.right(1234567890123456789012345n))
  })

  it.each([['01'], ['-1'], ['1.0'], [''], [' 1'], ['1 '], ['x1'], ['1x'], ['12345678901234567890123456'], [1], [1n], [null]])('%s is refused with its rule', (u) => {
    expect(decodeAll(SatangSum, u)).toStrictEqual(E.left(RULE))
  })

  it('is() holds for non-negative bigints only; encodes as digits', () => {
    expect([SatangSum.is(0n), SatangSum.is(5n), SatangSum.is(-1n), SatangSum.is('5'), SatangSum.is(5)]).toEqual([true, true, false, false, false])
    expect(SatangSum.encode(120n)).toBe('120')
  })

  it('round-trips any sum', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 25n - 1n }), (n) => {
        expect(SatangSum.decode(SatangSum.encode(n))).toStrictEqual(E.right(n))
      }),
    )
  })

  it('itemKeyOf: kind and id', () => {
    expect(itemKeyOf({ kind: 'refund', id: 'RF-1' })).toBe('refund:RF-1')
  })
})
