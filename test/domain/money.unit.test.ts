import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Amount, AmountText, amountRuleViolations, formatAmount, MAX_SATANG, parseAmount, satang, SatangFromString } from '../../src/domain/money.ts'
import { decodeAll } from '../../src/domain/violations.ts'
import { sat } from './support/values.ts'

describe('parseAmount', () => {
  it.each([
    ['100', 10000n],
    ['100.0', 10000n],
    ['100.00', 10000n],
    ['0', 0n],
    ['0.5', 50n],
    ['0.05', 5n],
    ['999999.99', 99999999n],
  ])('accepts %s as %s satang', (text, expected) => {
    expect(parseAmount(text)).toEqual(E.right(expected))
  })
  it.each([
    ['100.001', 'must have at most two decimals (8,2)'],
    ['-1', 'must not be negative'],
    ['+1', 'must not carry a sign'],
    ['1e3', 'must not use exponent notation'],
    ['1234567.00', 'must have at most 6 digits before the decimal point (8,2)'],
    ['', 'must be a decimal number such as 100, 100.5 or 100.50 (no spaces)'],
    [' 1', 'must be a decimal number such as 100, 100.5 or 100.50 (no spaces)'],
    ['01', 'must not have leading zeros'],
    ['1.', 'must have digits after the decimal point'],
    ['.5', 'must be digits with an optional decimal point'],
    ['1,000', 'must be digits with an optional decimal point'],
  ])('rejects %j: %s', (text, rule) => {
    const r = parseAmount(text)
    expect(E.isLeft(r) && r.left).toContain(rule)
  })
  it('"100", "100.0" and "100.00" are the same amount', () => {
    expect(new Set(['100', '100.0', '100.00'].map((s) => String(E.getOrElse(() => -1n)(parseAmount(s)))))).toEqual(new Set(['10000']))
  })
})

describe('formatAmount and the codecs', () => {
  const anySatang = fc.bigInt({ min: 0n, max: MAX_SATANG })

  it('round-trips every satang value: parseAmount(formatAmount(n)) = n', () => {
    fc.assert(
      fc.property(anySatang, (n) => {
        expect(parseAmount(formatAmount(n))).toEqual(E.right(n))
      }),
    )
  })
  it('formatting with 0, 1 or 2 decimals parses to the same value', () => {
    fc.assert(
      fc.property(anySatang, (n) => {
        const int = (n / 100n).toString()
        const frac = (n % 100n).toString().padStart(2, '0')
        const texts = [`${int}.${frac}`]
        if (frac.endsWith('0')) texts.push(`${int}.${frac.slice(0, 1)}`)
        if (frac === '00') texts.push(int)
        for (const text of texts) expect(parseAmount(text)).toEqual(E.right(n))
      }),
    )
  })
  it('formats with two decimals', () => {
    expect(formatAmount(12345n)).toBe('123.45')
    expect(formatAmount(5n)).toBe('0.05')
  })
  it('Amount decodes to satang and encodes two decimals; AmountText keeps the text', () => {
    expect(Amount.decode('100.5')).toEqual(E.right(10050n))
    expect(E.map(Amount.encode)(satang(10050n))).toEqual(E.right('100.50'))
    expect(AmountText.decode('100.5')).toEqual(E.right('100.5'))
  })
  it('a missing amount is reported as required, a number as the wrong type', () => {
    expect(decodeAll(AmountText, undefined)).toEqual(E.left([{ path: '', rule: 'is required' }]))
    expect(decodeAll(Amount, 100)).toEqual(E.left([{ path: '', rule: 'must be a string amount such as "100.00"' }]))
  })
  it('satang() bounds', () => {
    expect(satang(-1n)).toEqual(E.left('must not be negative'))
    expect(satang(MAX_SATANG + 1n)).toEqual(E.left('must be at most 999999.99'))
  })
})

describe('amountRuleViolations: every rule broken, and no other', () => {
  it.each([
    ['1e5', ['must not use exponent notation']],
    ['-1e5', ['must not use exponent notation', 'must not be negative']],
    ['1-2', ['must be digits with an optional decimal point']],
    ['1+2', ['must be digits with an optional decimal point']],
    ['-1.5', ['must not be negative']],
    ['+01', ['must not carry a sign', 'must not have leading zeros']],
    // Leading zeros are one rule; the digits before the point are counted without them.
    ['0000123456', ['must not have leading zeros']],
    ['0001234567', ['must not have leading zeros', 'must have at most 6 digits before the decimal point (8,2)']],
    ['00', ['must not have leading zeros']],
    ['0.00', []],
    ['999999.99', []],
    ['1.', ['must have digits after the decimal point']],
    ['1.234', ['must have at most two decimals (8,2)']],
    ['1 ', ['must be a decimal number such as 100, 100.5 or 100.50 (no spaces)']],
  ])('%j breaks %j', (text, rules) => {
    expect(amountRuleViolations(text)).toEqual(rules)
  })
})

describe('satang, formatAmount and the codecs at their edges', () => {
  it('zero is an amount: satang(0n), "0", "0.00"', () => {
    expect(satang(0n)).toEqual(E.right(0n))
    expect(satang(MAX_SATANG)).toEqual(E.right(MAX_SATANG))
    expect(parseAmount('0.00')).toEqual(E.right(0n))
    expect(formatAmount(0n)).toBe('0.00')
  })

  it('formats a negative difference with its sign once', () => {
    expect(formatAmount(-150n)).toBe('-1.50')
    expect(formatAmount(-5n)).toBe('-0.05')
  })

  it('Amount.is holds for satang 0 to MAX_SATANG only', () => {
    expect([0n, 1n, MAX_SATANG].map((n) => Amount.is(n))).toEqual([true, true, true])
    expect([-1n, MAX_SATANG + 1n, '100.00', 100, undefined].map((u) => Amount.is(u))).toEqual([false, false, false, false, false])
  })

  it('AmountText.is holds for amount text that keeps every rule', () => {
    expect(['0', '100.5', '999999.99'].map((u) => AmountText.is(u))).toEqual([true, true, true])
    expect(['01', '1e3', '', 10000n, 100].map((u) => AmountText.is(u))).toEqual([false, false, false, false, false])
  })

  it('Amount: a missing amount is required; amount text that breaks rules names every rule', () => {
    expect(decodeAll(Amount, undefined)).toEqual(E.left([{ path: '', rule: 'is required' }]))
    expect(decodeAll(Amount, '-01')).toEqual(E.left([{ path: '', rule: 'must not be negative' }, { path: '', rule: 'must not have leading zeros' }]))
    expect(decodeAll(AmountText, '-01')).toEqual(E.left([{ path: '', rule: 'must not be negative' }, { path: '', rule: 'must not have leading zeros' }]))
    expect(decodeAll(AmountText, 100)).toEqual(E.left([{ path: '', rule: 'must be a string amount such as "100.00"' }]))
  })

  it('SatangFromString: digit strings only, never a number; is() holds for non-negative bigints', () => {
    expect(SatangFromString.decode('0')).toEqual(E.right(0n))
    expect(SatangFromString.decode('12345')).toEqual(E.right(12345n))
    expect(decodeAll(SatangFromString, 123)).toEqual(E.left([{ path: '', rule: 'must be a whole number of satang as a digit string' }]))
    expect(['-1', '01', '1.5', ' 1', '1 ', '1234567890123456789'].map((u) => E.isLeft(SatangFromString.decode(u)))).toEqual([true, true, true, true, true, true])
    expect([0n, 5n].map((u) => SatangFromString.is(u))).toEqual([true, true])
    expect([-1n, '5', 5].map((u) => SatangFromString.is(u))).toEqual([false, false, false])
    expect(SatangFromString.encode(sat(12345n))).toBe('12345')
  })

  it('the codecs carry their names (what a generic violation says: "must be <name>")', () => {
    expect([Amount.name, AmountText.name, SatangFromString.name]).toEqual(['Amount', 'AmountText', 'SatangFromString'])
  })
})
