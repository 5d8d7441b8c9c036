import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describe, expect, it } from 'vitest'
import { absentable, anyText, listOr, oneOf, text, textWith } from '../../../src/domain/gateway/text-codecs.ts'
import { decodeAll } from '../../../src/domain/violations.ts'

/** The text codecs: is(), every broken rule, and what an absent value encodes to. */

describe('text', () => {
  const Name = text('name', 5)
  it('is() holds for a string that keeps every rule only', () => {
    expect([Name.is('abc'), Name.is('abcdef'), Name.is(''), Name.is('a\u0000'), Name.is(5), Name.is(undefined)]).toEqual([true, false, false, false, false, false])
    expect([textWith('x', [], true).is(''), anyText('y').is('')]).toEqual([true, false])
  })
  it('decode: the string as it is, or every rule it breaks', () => {
    expect(decodeAll(Name, 'abc')).toEqual(E.right('abc'))
    expect(decodeAll(textWith('x', [], true), '')).toEqual(E.right(''))
    expect(decodeAll(Name, '')).toEqual(E.left([{ path: '', rule: 'must not be empty' }]))
    expect(decodeAll(Name, 7)).toEqual(E.left([{ path: '', rule: 'must be a string' }]))
    expect(decodeAll(Name, undefined)).toEqual(E.left([{ path: '', rule: 'is required' }]))
  })
})

describe('listOr and oneOf', () => {
  it('lists allowed values as a rule says them', () => {
    expect([listOr([]), listOr(['A']), listOr(['A', 'B']), listOr(['A', 'B', 'C'])]).toEqual(['', 'A', 'A or B', 'A, B or C'])
  })
  it('a member, or the rule naming every allowed value', () => {
    const Kind = oneOf('Kind', ['PAYMENT', 'REFUND'])
    expect([Kind.is('PAYMENT'), Kind.is('REFUND'), Kind.is('payment'), Kind.is(undefined)]).toEqual([true, true, false, false])
    expect(decodeAll(Kind, 'OTHER')).toEqual(E.left([{ path: '', rule: 'must be PAYMENT or REFUND' }]))
    expect(decodeAll(Kind, undefined)).toEqual(E.left([{ path: '', rule: 'is required' }]))
    expect(Kind.values).toEqual(['PAYMENT', 'REFUND'])
  })
})

describe('absentable', () => {
  const Url = absentable(text('link_url', 10))
  it('null and "" are absent: valid, and encoded as they came', () => {
    expect([Url.is(null), Url.is(''), Url.is('http://x'), Url.is('http://too-long.example'), Url.is(undefined)]).toEqual([true, true, true, false, false])
    expect([decodeAll(Url, null), decodeAll(Url, '')]).toEqual([E.right(null), E.right('')])
    expect([Url.encode(null), Url.encode(''), Url.encode('http://x')]).toEqual([null, '', 'http://x'])
    expect(decodeAll(Url, 'http://too-long.example')).toEqual(E.left([{ path: '', rule: 'must be at most 10 characters' }]))
  })
  it('encodes a present value with its own codec', () => {
    const Cents = absentable(new t.Type<number, string, unknown>('Cents', (u): u is number => typeof u === 'number', (u, c) => (typeof u === 'string' ? t.success(Number(u)) : t.failure(u, c)), (n) => String(n)))
    expect([Cents.encode(5), Cents.encode(null), Cents.encode('')]).toEqual(['5', null, ''])
  })
})

describe('codecs built within the test', () => {
  it('given an absentable codec built here, when asked is(), then null, "" and valid values are its values', () => {
    const Url = absentable(text('link_url', 10))
    expect([Url.is(null), Url.is(''), Url.is('http://x'), Url.is('http://too-long.example'), Url.is(undefined)]).toEqual([true, true, true, false, false])
  })
  it('given a present value whose codec would not give "" back, when "" is encoded, then it stays ""', () => {
    // given: a codec whose encoding of "" (read as 0) is "0"
    const Hundredths = absentable(new t.Type<number, string, unknown>('Hundredths', (u): u is number => typeof u === 'number', (u, c) => (typeof u === 'string' ? t.success(Number(u)) : t.failure(u, c)), (n) => String(n * 100)))
    // when/then
    expect([Hundredths.encode(''), Hundredths.encode(null), Hundredths.encode(2)]).toEqual(['', null, '200'])
  })
  it('given anyText built here, when any text is decoded, then only the character rules apply', () => {
    const Note = anyText('note')
    expect([decodeAll(Note, 'x'.repeat(2000)), decodeAll(Note, '')]).toEqual([E.right('x'.repeat(2000)), E.left([{ path: '', rule: 'must not be empty' }])])
  })
})
