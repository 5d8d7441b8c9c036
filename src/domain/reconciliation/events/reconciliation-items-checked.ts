import * as t from 'io-ts'
import { Instant, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { CheckedItem } from './values.ts'

/**
 * A batch of items a run checked, with the outcome of each. Appended atomically with the breaks it
 * detected and resolved, so an item is either wholly recorded or not at all: a run killed half-way is
 * resumed from the items its stream holds, and each item counts once.
 */
const V1 = t.strict({ runId: t.string, batch: PositiveInt, items: t.array(CheckedItem), checkedAt: Instant }, 'ReconciliationItemsCheckedV1')

export const reconciliationItemsChecked = defineEvent('ReconciliationItemsChecked', { 1: V1 })
export type ReconciliationItemsCheckedData = t.TypeOf<typeof V1>
export type ReconciliationItemsChecked = DomainEventOf<'ReconciliationItemsChecked', ReconciliationItemsCheckedData>
