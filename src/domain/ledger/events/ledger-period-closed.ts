import * as t from 'io-ts'
import { CalendarDateText } from '../../bangkok-time.ts'
import { Instant, nullable, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * Finance closed the books through a Bangkok business day (`satang ledger close`): every day from
 * `fromDate` (null: from the first) through `throughDate` is closed, booked by the posting rules of
 * `ruleVersion`. Their entries never change again; later facts and rule changes post in the open period.
 */
const V1 = t.strict(
  {
    merchantId: t.string,
    fromDate: nullable(CalendarDateText),
    throughDate: CalendarDateText,
    ruleVersion: PositiveInt,
    closedBy: t.string,
    reason: nullable(t.string),
    closedAt: Instant,
  },
  'LedgerPeriodClosedV1',
)

export const ledgerPeriodClosed = defineEvent('LedgerPeriodClosed', { 1: V1 })
export type LedgerPeriodClosedData = t.TypeOf<typeof V1>
export type LedgerPeriodClosed = DomainEventOf<'LedgerPeriodClosed', LedgerPeriodClosedData>
