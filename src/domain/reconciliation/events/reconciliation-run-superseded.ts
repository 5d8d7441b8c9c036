import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * A run that stopped half-way (its process died) was closed by a later run of another scope: it has no
 * verdict. Its open breaks stay open and every later run checks them again.
 */
const V1 = t.strict({ runId: t.string, supersededBy: t.string, reason: t.string, supersededAt: Instant }, 'ReconciliationRunSupersededV1')

export const reconciliationRunSuperseded = defineEvent('ReconciliationRunSuperseded', { 1: V1 })
export type ReconciliationRunSupersededData = t.TypeOf<typeof V1>
export type ReconciliationRunSuperseded = DomainEventOf<'ReconciliationRunSuperseded', ReconciliationRunSupersededData>
