import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { BangkokWallTime, Count, Instant, Integer, PositiveInt } from '../../../src/domain/events/codecs.ts'
import { decodeAll } from '../../../src/domain/violations.ts'

/** The event codecs at their edges: each rule of an instant, a wall time and a count, one at a time. */

const iso = (u: unknown): E.Either<ReadonlyArray<{ path: string; rule: string }>, string> => E.map((d: Date) => d.toISOString())(decodeAll(Instant, u))
const NOT_ISO = [{ path: '', rule: 'must be an ISO-8601 UTC instant such as 2026-01-01T03:00:00.000Z' }]
const NOT_REAL = [{ path: '', rule: 'must be a real calendar instant' }]

describe('Instant', () => {
  it.each([
    ['2026-01-01T03:00:00.000Z', '2026-01-01T03:00:00.000Z'],
    ['2026-01-01T03:00:00Z', '2026-01-01T03:00:00.000Z'],
    ['2026-12-31T23:59:59.9Z', '2026-12-31T23:59:59.900Z'],
    ['2028-02-29T00:00:00.000Z', '2028-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00.000Z', '2000-02-29T00:00:00.000Z'],
    ['2026-04-30T00:00:00.000Z', '2026-04-30T00:00:00.000Z'],
    ['2026-01-31T00:00:00.000Z', '2026-01-31T00:00:00.000Z'],
    ['2026-02-28T00:00:00.000Z', '2026-02-28T00:00:00.000Z'],
  ])('%s is an instant', (text, expected) => {
    expect(iso(text)).toEqual(E.right(expected))
  })

  it.each([
    '2026-02-29T00:00:00.000Z',
    '1900-02-29T00:00:00.000Z',
    '2100-02-29T00:00:00.000Z',
    '2026-04-31T00:00:00.000Z',
    '2026-06-31T00:00:00.000Z',
    '2026-09-31T00:00:00.000Z',
    '2026-11-31T00:00:00.000Z',
    '2026-01-32T00:00:00.000Z',
    '2026-00-10T00:00:00.000Z',
    '2026-13-10T00:00:00.000Z',
    '2026-01-00T00:00:00.000Z',
    '2026-01-01T24:00:00.000Z',
    '2026-01-01T23:60:00.000Z',
    '2026-01-01T23:59:60.000Z',
  ])('%s names no real calendar time', (text) => {
    expect(iso(text)).toEqual(E.left(NOT_REAL))
  })

  it.each(['2026-01-01 03:00:00', '2026-01-01T03:00:00+07:00', '2026-01-01T03:00:00.0000Z', 'x2026-01-01T03:00:00Z', '2026-01-01T03:00:00Zx', ''])('%j is not ISO-8601 UTC', (text) => {
    expect(iso(text)).toEqual(E.left(NOT_ISO))
  })

  it('not a string: refused with the format it must have', () => {
    expect(iso(1767236400000)).toEqual(E.left(NOT_ISO))
    expect(iso(new Date('2026-01-01T00:00:00Z'))).toEqual(E.left(NOT_ISO))
    // a list of one ISO text would pass the pattern (RegExp.test reads it as its text): still not an instant
    expect(iso(['2026-01-01T03:00:00.000Z'])).toEqual(E.left(NOT_ISO))
  })

  it('is() holds for valid Dates only; encodes as ISO text', () => {
    expect([Instant.is(new Date('2026-01-01T00:00:00Z')), Instant.is(new Date('nope')), Instant.is('2026-01-01T00:00:00Z')]).toEqual([true, false, false])
    expect(Instant.encode(new Date('2026-01-01T00:00:00Z'))).toBe('2026-01-01T00:00:00.000Z')
  })
})

describe('BangkokWallTime', () => {
  it('a gateway timestamp: the instant it names; every broken rule; not a string', () => {
    expect(E.map((d: Date) => d.toISOString())(decodeAll(BangkokWallTime, '2026-01-01 10:00:00'))).toEqual(E.right('2026-01-01T03:00:00.000Z'))
    expect(decodeAll(BangkokWallTime, '2026-02-30 24:00:00')).toEqual(E.left([{ path: '', rule: 'day must be 01 to 28 in 2026-02; hour must be 00 to 23' }]))
    expect(decodeAll(BangkokWallTime, 20260101)).toEqual(E.left([{ path: '', rule: 'must be a string' }]))
    expect(BangkokWallTime.encode(new Date('2026-01-01T03:00:00.000Z'))).toBe('2026-01-01 10:00:00')
  })
})

describe('whole numbers', () => {
  it.each([
    [PositiveInt, 1, true],
    [PositiveInt, 0, false],
    [Count, 0, true],
    [Count, -1, false],
    [Integer, Number.MIN_SAFE_INTEGER, true],
    [Integer, -1, true],
    [PositiveInt, 1.5, false],
    [Count, Number.MAX_SAFE_INTEGER + 1, false],
    [Count, '1', false],
  ] as const)('%s: %j → %s', (codec, value, ok) => {
    expect(codec.is(value)).toBe(ok)
    expect(E.isRight(codec.decode(value))).toBe(ok)
  })
  it('names its floor when it refuses', () => {
    expect(decodeAll(PositiveInt, 0)).toEqual(E.left([{ path: '', rule: 'must be a whole number of at least 1' }]))
    expect(decodeAll(Count, '3')).toEqual(E.left([{ path: '', rule: 'must be a whole number of at least 0' }]))
  })
})
