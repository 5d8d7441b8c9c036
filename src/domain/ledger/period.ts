import * as E from 'fp-ts/lib/Either.js'
import { formatCalendarDate, parseCalendarDate } from '../bangkok-time.ts'
import { keyOf } from '../events/natural-key.ts'
import { CHARACTER_RULES } from '../gateway/text-rules.ts'
import { addDays } from '../subscription-schedule.ts'
import type { Violation } from '../violations.ts'
import { ledgerPeriodClosed, type LedgerPeriodClosed } from './events/ledger-period-closed.ts'
import { endOfBangkokDay } from './report.ts'

/*
 * Closing periods of the ledger. A period is a Bangkok business day; the books close in order, so a
 * close through a day closes every open day up to it. One stream per merchant holds the closes: an
 * append at the expected revision orders them, so two people closing at once cannot both decide.
 */

export type LedgerPeriodEvent = LedgerPeriodClosed

export const isLedgerPeriodEvent = (e: { readonly type: string }): e is LedgerPeriodEvent => e.type === 'LedgerPeriodClosed'

export const LEDGER_PERIODS_STREAM_PREFIX = 'ledger-periods-'

/** The stream of a merchant's period closes. */
export const ledgerPeriodsStreamName = (merchantId: string): string => `${LEDGER_PERIODS_STREAM_PREFIX}${merchantId}`

/** One close per day closed through: the same close decided twice is one event. */
export const ledgerPeriodEventNaturalKey = (stream: string, e: LedgerPeriodEvent): string => keyOf(stream, e.type, e.data.throughDate)

export type PeriodsState = {
  /** The last Bangkok day closed (yyyy-MM-dd), null while every day is open. */
  readonly closedThrough: string | null
  /** The rule version of the last close. */
  readonly ruleVersion: number | null
}

export const initialPeriodsState: PeriodsState = { closedThrough: null, ruleVersion: null }

export const evolvePeriods = (_s: PeriodsState, e: LedgerPeriodEvent): PeriodsState => ({ closedThrough: e.data.throughDate, ruleVersion: e.data.ruleVersion })

export type ClosePeriod = {
  readonly type: 'ClosePeriod'
  readonly merchantId: string
  /** yyyy-MM-dd, Asia/Bangkok. */
  readonly date: string
  /** The posting rules the closed days are booked by: the version in force where the command runs. */
  readonly ruleVersion: number
  readonly closedBy: string
  readonly reason: string | null
  readonly at: Date
}

export type PeriodRejection =
  | { readonly _tag: 'InvalidClose'; readonly violations: ReadonlyArray<Violation> }
  | { readonly _tag: 'PeriodNotOver'; readonly date: string; readonly endsAt: Date }
  | { readonly _tag: 'PeriodAlreadyClosed'; readonly date: string; readonly closedThrough: string }
  | { readonly _tag: 'RuleVersionBehind'; readonly ruleVersion: number; readonly lastClosedWith: number }

export const MAX_CLOSED_BY_LENGTH = 200
export const MAX_CLOSE_REASON_LENGTH = 1000

/** Every rule a close's input breaks. */
export const closeViolations = (c: Pick<ClosePeriod, 'date' | 'closedBy' | 'reason'>): ReadonlyArray<Violation> => {
  const date = parseCalendarDate(c.date)
  return [
    ...(E.isLeft(date) ? date.left.map((rule) => ({ path: 'date', rule })) : []),
    ...(c.closedBy.trim() === '' ? [{ path: 'closed_by', rule: 'must name who closes the period' }] : []),
    ...(c.closedBy.length > MAX_CLOSED_BY_LENGTH ? [{ path: 'closed_by', rule: `must be at most ${String(MAX_CLOSED_BY_LENGTH)} characters` }] : []),
    ...(c.reason !== null && c.reason.length > MAX_CLOSE_REASON_LENGTH ? [{ path: 'reason', rule: `must be at most ${String(MAX_CLOSE_REASON_LENGTH)} characters` }] : []),
    // The texts every message keeps (no NUL, other control characters or lone surrogates), here too.
    ...CHARACTER_RULES.flatMap((rule) => rule(c.closedBy) ?? []).map((rule) => ({ path: 'closed_by', rule })),
    ...CHARACTER_RULES.flatMap((rule) => rule(c.reason ?? '') ?? []).map((rule) => ({ path: 'reason', rule })),
  ]
}

/** The day after a yyyy-MM-dd date. */
export const nextDate = (date: string): string => {
  const d = parseCalendarDate(date)
  if (E.isLeft(d)) throw new Error(`not a date: ${date}`)
  return formatCalendarDate(addDays(d.right, 1))
}

/** Closes the books through `date`: only a day that is over, after the last closed one, at a rule version not older than the last close's. */
export const decideClose = (c: ClosePeriod, s: PeriodsState): E.Either<PeriodRejection, ReadonlyArray<LedgerPeriodEvent>> => {
  const violations = closeViolations(c)
  if (violations.length > 0) return E.left({ _tag: 'InvalidClose', violations })
  if (s.closedThrough !== null && c.date <= s.closedThrough) return E.left({ _tag: 'PeriodAlreadyClosed', date: c.date, closedThrough: s.closedThrough })
  const endsAt = endOfBangkokDay(c.date)
  if (c.at.getTime() < endsAt.getTime()) return E.left({ _tag: 'PeriodNotOver', date: c.date, endsAt })
  if (s.ruleVersion !== null && c.ruleVersion < s.ruleVersion) return E.left({ _tag: 'RuleVersionBehind', ruleVersion: c.ruleVersion, lastClosedWith: s.ruleVersion })
  return E.right([
    ledgerPeriodClosed.make({
      merchantId: c.merchantId,
      fromDate: s.closedThrough === null ? null : nextDate(s.closedThrough),
      throughDate: c.date,
      ruleVersion: c.ruleVersion,
      closedBy: c.closedBy.trim(),
      reason: c.reason === null || c.reason.trim() === '' ? null : c.reason.trim(),
      closedAt: c.at,
    }),
  ])
}
