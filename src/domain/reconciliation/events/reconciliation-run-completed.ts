import * as t from 'io-ts'
import { CalendarDateText } from '../../bangkok-time.ts'
import { Count, Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { Verdict } from '../verdict.ts'
import { SatangSum } from './values.ts'

/** How many items came out each way, and the breaks by class. */
export const OutcomeCounts = t.strict(
  {
    checked: Count,
    matched: Count,
    healed: Count,
    pending: Count,
    unchecked: Count,
    acknowledged: Count,
    breaks: Count,
    byClass: t.record(t.string, Count),
  },
  'OutcomeCounts',
)
export type OutcomeCounts = t.TypeOf<typeof OutcomeCounts>

export const OutcomeTotals = t.strict({ checked: SatangSum, healed: SatangSum, atStake: SatangSum, unchecked: SatangSum }, 'OutcomeTotals')
export type OutcomeTotals = t.TypeOf<typeof OutcomeTotals>

export const DaySummary = t.strict({ day: CalendarDateText, verdict: Verdict, counts: OutcomeCounts, totals: OutcomeTotals }, 'DaySummary')
export type DaySummary = t.TypeOf<typeof DaySummary>

/** The run finished: its counts and totals (from the items its stream holds), its verdict, and the verdict of each day in scope. */
const V1 = t.strict(
  { runId: t.string, verdict: Verdict, counts: OutcomeCounts, totals: OutcomeTotals, days: t.array(DaySummary), completedAt: Instant },
  'ReconciliationRunCompletedV1',
)

export const reconciliationRunCompleted = defineEvent('ReconciliationRunCompleted', { 1: V1 })
export type ReconciliationRunCompletedData = t.TypeOf<typeof V1>
export type ReconciliationRunCompleted = DomainEventOf<'ReconciliationRunCompleted', ReconciliationRunCompletedData>
