import * as t from 'io-ts'
import { Count, Instant, nullable, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RunScope, RunTrigger } from './values.ts'

/** A reconciliation run started: its scope, the parameters it compares with, and who or what started it. */
const V1 = t.strict(
  {
    runId: t.string,
    merchantId: t.string,
    scope: RunScope,
    parameters: t.strict({
      concurrency: PositiveInt,
      /** The instant graces are measured as of (the run's start unless given). */
      asOf: Instant,
      notFoundGraceMs: Count,
      stalePendingMs: Count,
      chargeGraceMs: Count,
    }),
    startedBy: t.strict({ trigger: RunTrigger, actor: nullable(t.string) }),
    itemsInScope: Count,
    startedAt: Instant,
  },
  'ReconciliationRunStartedV1',
)

export const reconciliationRunStarted = defineEvent('ReconciliationRunStarted', { 1: V1 })
export type ReconciliationRunStartedData = t.TypeOf<typeof V1>
export type ReconciliationRunStarted = DomainEventOf<'ReconciliationRunStarted', ReconciliationRunStartedData>
