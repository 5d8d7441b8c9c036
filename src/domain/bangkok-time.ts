import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'

/**
 * The gateway's timestamps are `yyyy-MM-dd HH:mm:ss` in Asia/Bangkok (UTC+7). Thailand has kept
 * UTC+7 without daylight saving since 1920, so a fixed offset is exact for every date we handle.
 */
export const BANGKOK_OFFSET_MS = 7 * 60 * 60 * 1000

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

// Computed by hand: Date.UTC maps years 0–99 to 1900–1999, which broke years 0000–0099.
export const isLeapYear = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
/** Days in a month of the proleptic Gregorian calendar; 0 for a month outside 1–12. */
export const daysInMonth = (year: number, month: number): number => (month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0))

/** Milliseconds since the epoch of a UTC wall time; exact for every year, including 0000–0099. */
const utcMillis = (y: number, mo: number, d: number, h: number, mi: number, s: number): number => {
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  date.setUTCHours(h, mi, s, 0)
  return date.getTime()
}

const calendarRules = (y: number, mo: number, d: number): string[] => {
  const rules: string[] = []
  if (mo < 1 || mo > 12) rules.push('month must be 01 to 12')
  else if (d < 1 || d > daysInMonth(y, mo)) rules.push(`day must be 01 to ${daysInMonth(y, mo)} in ${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}`)
  return rules
}

/** Parses a gateway timestamp (Bangkok wall time) into an instant. */
export const parseBangkokDateTime = (text: string): E.Either<ReadonlyArray<string>, Date> => {
  const m = DATE_TIME.exec(text)
  if (m === null) return E.left(['must be yyyy-MM-dd HH:mm:ss (Asia/Bangkok)'])
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  const rules = calendarRules(y, mo, d)
  if (h > 23) rules.push('hour must be 00 to 23')
  if (mi > 59) rules.push('minute must be 00 to 59')
  if (s > 59) rules.push('second must be 00 to 59')
  if (rules.length > 0) return E.left(rules)
  return E.right(new Date(utcMillis(y, mo, d, h, mi, s) - BANGKOK_OFFSET_MS))
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0')

/**
 * Formats an instant as a gateway timestamp in Bangkok wall time. Sub-second parts are truncated.
 * Only instants whose Bangkok year is 0000–9999 have a gateway form.
 */
export const formatBangkokDateTime = (instant: Date): string => {
  const b = new Date(instant.getTime() + BANGKOK_OFFSET_MS)
  return `${pad(b.getUTCFullYear(), 4)}-${pad(b.getUTCMonth() + 1)}-${pad(b.getUTCDate())} ${pad(b.getUTCHours())}:${pad(b.getUTCMinutes())}:${pad(b.getUTCSeconds())}`
}

/** A calendar date (`yyyy-MM-dd`), as `start_date` carries it. */
export type CalendarDate = { readonly year: number; readonly month: number; readonly day: number }

export const parseCalendarDate = (text: string): E.Either<ReadonlyArray<string>, CalendarDate> => {
  const m = DATE.exec(text)
  if (m === null) return E.left(['must be yyyy-MM-dd'])
  const [year, month, day] = m.slice(1).map(Number) as [number, number, number]
  const rules = calendarRules(year, month, day)
  return rules.length > 0 ? E.left(rules) : E.right({ year, month, day })
}

export const formatCalendarDate = (d: CalendarDate): string => `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`

/** The Bangkok calendar date on which an instant falls. */
export const bangkokDateOf = (instant: Date): CalendarDate => {
  const b = new Date(instant.getTime() + BANGKOK_OFFSET_MS)
  return { year: b.getUTCFullYear(), month: b.getUTCMonth() + 1, day: b.getUTCDate() }
}

const textCodec = (name: string, parse: (s: string) => E.Either<ReadonlyArray<string>, unknown>) =>
  new t.Type<string, string, unknown>(
    name,
    (u): u is string => typeof u === 'string' && E.isRight(parse(u)),
    (u, c) => {
      if (u === undefined) return t.failure(u, c, 'is required')
      if (typeof u !== 'string') return t.failure(u, c, 'must be a string')
      const r = parse(u)
      return E.isRight(r) ? t.success(u) : t.failures(r.left.map((message) => ({ value: u, context: c, message })))
    },
    t.identity,
  )

/** Codec for a gateway timestamp kept as text (what signatures cover), validated. */
export const BangkokDateTimeText = textCodec('BangkokDateTime', parseBangkokDateTime)
/** Codec for a `yyyy-MM-dd` date kept as text, validated. */
export const CalendarDateText = textCodec('CalendarDate', parseCalendarDate)
