import * as t from 'io-ts'
import { CalendarDateText } from '../../bangkok-time.ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { JsonObjectCodec } from '../../events/json.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { BreakClass } from '../break-class.ts'
import { Evidence, ItemRef, SatangSum } from './values.ts'

/**
 * A run found a break: `new` the first run it appears in, `persisting` while later runs still see it
 * (same `breakId`, `firstSeenAt` carried over). The views are what each side says, as JSON.
 */
const V1 = t.strict(
  {
    runId: t.string,
    breakId: t.string,
    class: BreakClass,
    status: oneOf('DetectedStatus', ['new', 'persisting']),
    item: ItemRef,
    day: CalendarDateText,
    satangView: JsonObjectCodec,
    gatewayView: JsonObjectCodec,
    amountAtStake: SatangSum,
    detail: t.string,
    firstSeenAt: Instant,
    firstSeenRunId: t.string,
    detectedAt: Instant,
    evidence: Evidence,
  },
  'ReconciliationBreakDetectedV1',
)

export const reconciliationBreakDetected = defineEvent('ReconciliationBreakDetected', { 1: V1 })
export type ReconciliationBreakDetectedData = t.TypeOf<typeof V1>
export type ReconciliationBreakDetected = DomainEventOf<'ReconciliationBreakDetected', ReconciliationBreakDetectedData>
