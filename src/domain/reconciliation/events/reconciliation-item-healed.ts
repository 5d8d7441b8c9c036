import * as t from 'io-ts'
import { CalendarDateText } from '../../bangkok-time.ts'
import { Instant, nullable } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { Evidence, ItemRef, SatangSum } from './values.ts'

/**
 * A fact satang had missed was recorded from the gateway's answer through the item's own aggregate (a
 * notification that never arrived, a refund never heard of, a create that never reached the gateway).
 * `from`/`to` are the status before and after (`not_found`: the create failed, never sent on).
 */
const V1 = t.strict(
  { runId: t.string, item: ItemRef, day: CalendarDateText, from: nullable(t.string), to: t.string, amount: SatangSum, healedAt: Instant, evidence: Evidence },
  'ReconciliationItemHealedV1',
)

export const reconciliationItemHealed = defineEvent('ReconciliationItemHealed', { 1: V1 })
export type ReconciliationItemHealedData = t.TypeOf<typeof V1>
export type ReconciliationItemHealed = DomainEventOf<'ReconciliationItemHealed', ReconciliationItemHealedData>
