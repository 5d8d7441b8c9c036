import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  bangkokDateOf,
  BangkokDateTimeText,
  CalendarDateText,
  daysInMonth,
  formatBangkokDateTime,
  formatCalendarDate,
  isLeapYear,
  parseBangkokDateTime,
  parseCalendarDate,
} from '../../src/domain/bangkok-time.ts'
import { decodeAll } from '../../src/domain/violations.ts'

describe('Bangkok timestamps (yyyy-MM-dd HH:mm:ss, UTC+7)', () => {
  it.each([
    ['2026-01-01 06:59:59', '2025-12-31T23:59:59.000Z'],
    ['2026-01-01 07:00:00', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01 00:00:00', '2025-12-31T17:00:00.000Z'],
    ['2028-02-29 12:30:00', '2028-02-29T05:30:00.000Z'],
    ['0050-06-15 12:00:00', '0050-06-15T05:00:00.000Z'],
  ])('parses %s as %s and formats it back', (text, iso) => {
    const parsed = parseBangkokDateTime(text)
    expect(E.map((d: Date) => d.toISOString())(parsed)).toEqual(E.right(iso))
    expect(formatBangkokDateTime(new Date(iso))).toBe(text)
  })
  it.each([
    ['2026-02-29 00:00:00', 'day must be 01 to 28 in 2026-02'],
    ['1900-02-29 00:00:00', 'day must be 01 to 28 in 1900-02'],
    ['2026-04-31 00:00:00', 'day must be 01 to 30 in 2026-04'],
    ['2026-13-01 00:00:00', 'month must be 01 to 12'],
    ['2026-01-01 24:00:00', 'hour must be 00 to 23'],
    ['2026-01-01 23:60:00', 'minute must be 00 to 59'],
    ['2026-01-01 23:59:60', 'second must be 00 to 59'],
    ['2026-01-01T00:00:00', 'must be yyyy-MM-dd HH:mm:ss (Asia/Bangkok)'],
    ['2026-1-1 00:00:00', 'must be yyyy-MM-dd HH:mm:ss (Asia/Bangkok)'],
  ])('rejects %s: %s', (text, rule) => {
    const r = parseBangkokDateTime(text)
    expect(E.isLeft(r) && r.left).toContain(rule)
  })
  it('accepts 2028-02-29 and 2000-02-29 (leap years)', () => {
    expect(E.isRight(parseBangkokDateTime('2028-02-29 00:00:00'))).toBe(true)
    expect(E.isRight(parseBangkokDateTime('2000-02-29 00:00:00'))).toBe(true)
  })
  it('truncates sub-seconds when formatting', () => {
    expect(formatBangkokDateTime(new Date('2025-12-31T23:59:59.999Z'))).toBe('2026-01-01 06:59:59')
  })

  const pad = (n: number, w = 2) => String(n).padStart(w, '0')
  const anyTimestamp = fc
    .record({ y: fc.integer({ min: 0, max: 9999 }), mo: fc.integer({ min: 1, max: 12 }), d: fc.integer({ min: 1, max: 31 }), h: fc.integer({ min: 0, max: 23 }), mi: fc.integer({ min: 0, max: 59 }), s: fc.integer({ min: 0, max: 59 }) })
    .map(({ y, mo, d, h, mi, s }) => `${pad(y, 4)}-${pad(mo)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(s)}`)
    .filter((text) => E.isRight(parseBangkokDateTime(text)))

  it('property: format(parse(x)) = x for every valid timestamp of years 0000-9999', () => {
    fc.assert(
      fc.property(anyTimestamp, (text) => {
        expect(E.map(formatBangkokDateTime)(parseBangkokDateTime(text))).toEqual(E.right(text))
      }),
    )
  })
  it('property: parse(format(instant)) = instant, to the second', () => {
    const min = new Date('2000-01-01T00:00:00Z').getTime()
    const max = new Date('2100-01-01T00:00:00Z').getTime()
    fc.assert(
      fc.property(fc.integer({ min, max }), (ms) => {
        const seconds = Math.floor(ms / 1000) * 1000
        expect(E.map((d: Date) => d.getTime())(parseBangkokDateTime(formatBangkokDateTime(new Date(ms))))).toEqual(E.right(seconds))
      }),
    )
  })
  it('BangkokDateTimeText keeps the text and names a missing field as required', () => {
    expect(BangkokDateTimeText.decode('2026-01-01 06:59:59')).toEqual(E.right('2026-01-01 06:59:59'))
    expect(decodeAll(BangkokDateTimeText, undefined)).toEqual(E.left([{ path: '', rule: 'is required' }]))
  })
})

describe('calendar dates (start_date)', () => {
  it('parses and formats yyyy-MM-dd', () => {
    expect(parseCalendarDate('2028-02-29')).toEqual(E.right({ year: 2028, month: 2, day: 29 }))
    expect(formatCalendarDate({ year: 2028, month: 2, day: 29 })).toBe('2028-02-29')
    expect(parseCalendarDate('0004-02-29')).toEqual(E.right({ year: 4, month: 2, day: 29 }))
  })
  it('rejects impossible dates', () => {
    expect(decodeAll(CalendarDateText, '2026-02-29')).toEqual(E.left([{ path: '', rule: 'day must be 01 to 28 in 2026-02' }]))
    expect(decodeAll(CalendarDateText, '0100-02-29')).toEqual(E.left([{ path: '', rule: 'day must be 01 to 28 in 0100-02' }]))
    expect(decodeAll(CalendarDateText, '2026-02-01 00:00:00')).toEqual(E.left([{ path: '', rule: 'must be yyyy-MM-dd' }]))
  })
  it('gives the Bangkok date of an instant', () => {
    expect(bangkokDateOf(new Date('2025-12-31T17:00:00Z'))).toEqual({ year: 2026, month: 1, day: 1 })
    expect(bangkokDateOf(new Date('2025-12-31T16:59:59Z'))).toEqual({ year: 2025, month: 12, day: 31 })
  })
})

describe('edges of the date grammar: day 00, month 00, junk around a date, each rule alone', () => {
  const TS = 'must be yyyy-MM-dd HH:mm:ss (Asia/Bangkok)'
  it.each([
    ['2026-01-00 00:00:00', ['day must be 01 to 31 in 2026-01']],
    ['2026-00-01 00:00:00', ['month must be 01 to 12']],
    ['2026-00-00 00:00:00', ['month must be 01 to 12']],
    ['2026-12-32 00:00:00', ['day must be 01 to 31 in 2026-12']],
    ['2026-02-29 24:60:60', ['day must be 01 to 28 in 2026-02', 'hour must be 00 to 23', 'minute must be 00 to 59', 'second must be 00 to 59']],
    ['2026-01-01 23:59:59', null],
    ['x2026-01-01 00:00:00', [TS]],
    ['2026-01-01 00:00:00x', [TS]],
    [' 2026-01-01 00:00:00', [TS]],
    ['2026-01-01 00:00:00\n', [TS]],
    ['12026-01-01 00:00:00', [TS]],
    ['2026-01-01 00:00:000', [TS]],
    ['2026-01-01  00:00:00', [TS]],
    ['2026-01-01 0a:00:00', [TS]],
    ['', [TS]],
  ])('%j: %j', (text, rules) => {
    const r = parseBangkokDateTime(text)
    if (rules === null) expect(E.isRight(r)).toBe(true)
    else expect(r).toEqual(E.left(rules))
  })

  it.each([
    ['2026-01-00', ['day must be 01 to 31 in 2026-01']],
    ['2026-00-10', ['month must be 01 to 12']],
    ['2026-13-10', ['month must be 01 to 12']],
    ['x2026-01-01', ['must be yyyy-MM-dd']],
    ['2026-01-01x', ['must be yyyy-MM-dd']],
    ['2026-01-1', ['must be yyyy-MM-dd']],
    ['226-01-01', ['must be yyyy-MM-dd']],
  ])('calendar date %j: %j', (text, rules) => {
    expect(parseCalendarDate(text)).toEqual(E.left(rules))
  })

  it('the first and last day of every month are accepted; the day after the last is not', () => {
    for (const mo of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
      const mm = String(mo).padStart(2, '0')
      const last = daysInMonth(2026, mo)
      expect(E.isRight(parseCalendarDate(`2026-${mm}-01`))).toBe(true)
      expect(parseCalendarDate(`2026-${mm}-${String(last)}`)).toEqual(E.right({ year: 2026, month: mo, day: last }))
      expect(E.isLeft(parseCalendarDate(`2026-${mm}-${String(last + 1)}`))).toBe(true)
    }
  })

  it('days in a month, and leap years of the proleptic Gregorian calendar', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((m) => daysInMonth(2026, m))).toEqual([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    expect([daysInMonth(2028, 2), daysInMonth(2000, 2), daysInMonth(1900, 2), daysInMonth(2028, 3), daysInMonth(2026, 0), daysInMonth(2026, 13)]).toEqual([29, 29, 28, 31, 0, 0])
    expect([0, 4, 2000, 2028].map(isLeapYear)).toEqual([true, true, true, true])
    expect([1, 100, 1900, 2026].map(isLeapYear)).toEqual([false, false, false, false])
  })

  it('a timestamp of a year 0000-0099 is that year, not 1900-1999', () => {
    expect(E.map((d: Date) => d.toISOString())(parseBangkokDateTime('0001-03-01 07:00:00'))).toEqual(E.right('0001-03-01T00:00:00.000Z'))
    expect(formatBangkokDateTime(new Date('0001-03-01T00:00:00.000Z'))).toBe('0001-03-01 07:00:00')
  })

  it('formats every field with its own width and value', () => {
    expect(formatBangkokDateTime(new Date('2026-03-04T01:02:03.000Z'))).toBe('2026-03-04 08:02:03')
    expect(formatCalendarDate({ year: 5, month: 3, day: 4 })).toBe('0005-03-04')
    expect(bangkokDateOf(new Date('2026-03-04T01:02:03.000Z'))).toEqual({ year: 2026, month: 3, day: 4 })
  })

  it('the text codecs: a string that keeps the rules; every broken rule; a non-string; is()', () => {
    expect(decodeAll(BangkokDateTimeText, '2026-00-00 25:00:00')).toEqual(E.left([{ path: '', rule: 'month must be 01 to 12' }, { path: '', rule: 'hour must be 00 to 23' }]))
    expect(decodeAll(BangkokDateTimeText, 20260101)).toEqual(E.left([{ path: '', rule: 'must be a string' }]))
    expect(decodeAll(CalendarDateText, undefined)).toEqual(E.left([{ path: '', rule: 'is required' }]))
    expect(CalendarDateText.decode('2026-01-31')).toEqual(E.right('2026-01-31'))
    // An array of one valid text reads as that text to a pattern: is() must still refuse it.
    expect([BangkokDateTimeText.is('2026-01-01 00:00:00'), BangkokDateTimeText.is('2026-01-00 00:00:00'), BangkokDateTimeText.is(1), BangkokDateTimeText.is(['2026-01-01 00:00:00'])]).toEqual([
      true,
      false,
      false,
      false,
    ])
    expect([CalendarDateText.is('2026-01-01'), CalendarDateText.is('2026-01-00'), CalendarDateText.is(undefined)]).toEqual([true, false, false])
    expect([BangkokDateTimeText.name, CalendarDateText.name]).toEqual(['BangkokDateTime', 'CalendarDate'])
  })
})
