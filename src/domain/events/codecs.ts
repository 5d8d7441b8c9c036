import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { formatBangkokDateTime, parseBangkokDateTime } from '../bangkok-time.ts'
import { StatusOutcome } from '../gateway/statuses.ts'
import { oneOf } from '../gateway/text-codecs.ts'
import { SatangFromString } from '../money.ts'

/*
 * Codecs for event data. Events are JSON: amounts are satang as digit strings, instants are ISO-8601
 * UTC strings, absent values are `null` (never a missing key), so every version of every event has one
 * shape on disk.
 */

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/

const isValidDate = (u: unknown): u is Date => u instanceof Date && !Number.isNaN(u.getTime())

const daysInMonth = (year: number, month: number): number => (month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31)

/** An instant: `Date` in memory, ISO-8601 UTC text (`2026-01-01T03:00:00.000Z`) in events. */
export const Instant = new t.Type<Date, string, unknown>(
  'Instant',
  isValidDate,
  (u, c) => {
    if (typeof u !== 'string' || !ISO_INSTANT.test(u)) return t.failure(u, c, 'must be an ISO-8601 UTC instant such as 2026-01-01T03:00:00.000Z')
    // A stored instant must name a real calendar time. Date refuses a month outside 01-12, a day 00 and a
    // minute or second 60 itself (an invalid Date), but rolls 2026-02-30 over into March and reads hour 24
    // as the next midnight: those two are checked on the digits (this runs for every instant of every
    // event a projection reads). test/domain/events/codecs.unit.test.ts holds a case of each.
    const real = Number(u.slice(8, 10)) <= daysInMonth(Number(u.slice(0, 4)), Number(u.slice(5, 7))) && Number(u.slice(11, 13)) < 24
    const d = new Date(u)
    return real && isValidDate(d) ? t.success(d) : t.failure(u, c, 'must be a real calendar instant')
  },
  (d) => d.toISOString(),
)

/** An instant written as the gateway writes times: `yyyy-MM-dd HH:mm:ss` in Asia/Bangkok. */
export const BangkokWallTime = new t.Type<Date, string, unknown>(
  'BangkokWallTime',
  isValidDate,
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'must be a string')
    const parsed = parseBangkokDateTime(u)
    return E.isRight(parsed) ? t.success(parsed.right) : t.failure(u, c, parsed.left.join('; '))
  },
  formatBangkokDateTime,
)

/** `A` or `null`. */
export const nullable = <A, O>(codec: t.Type<A, O, unknown>): t.Type<A | null, O | null, unknown> => t.union([codec, t.null], `${codec.name} | null`)

/** Satang in events: a digit string. */
export const SatangAmount = SatangFromString

const integerAtLeast = (name: string, min: number): t.Type<number, number, unknown> =>
  new t.Type<number, number, unknown>(
    name,
    (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= min,
    (u, c) => (typeof u === 'number' && Number.isSafeInteger(u) && u >= min ? t.success(u) : t.failure(u, c, `must be a whole number of at least ${String(min)}`)),
    t.identity,
  )

/** A whole number of at least 1. */
export const PositiveInt = integerAtLeast('PositiveInt', 1)
/** A whole number of at least 0 (counts). */
export const Count = integerAtLeast('Count', 0)
/** A whole number (gateway error codes, HTTP statuses). */
export const Integer = integerAtLeast('Integer', Number.MIN_SAFE_INTEGER)

export const ViolationCodec = t.strict({ path: t.string, rule: t.string }, 'Violation')

/** How a status table classified an observed code (see gateway/statuses.ts). */
export const StatusClassificationCodec = t.strict(
  { code: t.string, meaning: t.string, outcome: StatusOutcome, final: t.boolean, needsReview: t.boolean },
  'StatusClassification',
)

/** Where an authoritative observation came from: the gateway spec makes notifications and queries the authority. */
export const ObservationSource = oneOf('ObservationSource', ['notification', 'query'])
export type ObservationSource = t.TypeOf<typeof ObservationSource>
