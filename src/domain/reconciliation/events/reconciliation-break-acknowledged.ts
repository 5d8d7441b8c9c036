import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { BreakClass } from '../break-class.ts'

/** A person closed a break with a reason (`satang reconcile ack`, `POST /v1/reconciliation/breaks/{id}/acknowledge`). */
const V1 = t.strict(
  { breakId: t.string, class: BreakClass, actor: t.string, reason: t.string, acknowledgedAt: Instant },
  'ReconciliationBreakAcknowledgedV1',
)

export const reconciliationBreakAcknowledged = defineEvent('ReconciliationBreakAcknowledged', { 1: V1 })
export type ReconciliationBreakAcknowledgedData = t.TypeOf<typeof V1>
export type ReconciliationBreakAcknowledged = DomainEventOf<'ReconciliationBreakAcknowledged', ReconciliationBreakAcknowledgedData>
