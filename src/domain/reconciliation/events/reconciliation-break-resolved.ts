import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { BreakClass } from '../break-class.ts'
import { Evidence, ItemRef } from './values.ts'

/**
 * A run found the item of an open break consistent (`consistent`), healed it (`healed`), or found it
 * broken in another way (`reclassified`: a break of the new class is detected with it).
 */
export const Resolution = oneOf('Resolution', ['consistent', 'healed', 'reclassified'])

const V1 = t.strict(
  { runId: t.string, breakId: t.string, class: BreakClass, item: ItemRef, resolution: Resolution, resolvedAt: Instant, evidence: Evidence },
  'ReconciliationBreakResolvedV1',
)

export const reconciliationBreakResolved = defineEvent('ReconciliationBreakResolved', { 1: V1 })
export type ReconciliationBreakResolvedData = t.TypeOf<typeof V1>
export type ReconciliationBreakResolved = DomainEventOf<'ReconciliationBreakResolved', ReconciliationBreakResolvedData>
