import { describe, expect, it } from 'vitest'
import { keyOf } from '../../../src/domain/events/natural-key.ts'
import { orderEventNaturalKey, type OrderEvent } from '../../../src/domain/order/index.ts'
import type { RunEvent } from '../../../src/domain/reconciliation/events/index.ts'
import { runEventNaturalKey } from '../../../src/domain/reconciliation/stream.ts'
import { orderEvents, reconciliationEvents } from './catalogue.ts'

/** Natural keys compared whole: which parts each event type adds to its stream and type, and no other. */

const RUN_TYPES = [
  'ReconciliationRunStarted',
  'ReconciliationRunCompleted',
  'ReconciliationRunSuperseded',
  'ReconciliationItemsChecked',
  'ReconciliationBreakDetected',
  'ReconciliationBreakResolved',
  'ReconciliationItemHealed',
] as const

const expectedRunKey = (s: string, e: RunEvent): string => {
  switch (e.type) {
    case 'ReconciliationItemsChecked':
      return keyOf(s, e.type, String(e.data.batch))
    case 'ReconciliationBreakDetected':
    case 'ReconciliationBreakResolved':
      return keyOf(s, e.type, e.data.breakId)
    case 'ReconciliationItemHealed':
      return keyOf(s, e.type, e.data.item.kind, e.data.item.id)
    case 'ReconciliationRunStarted':
    case 'ReconciliationRunCompleted':
    case 'ReconciliationRunSuperseded':
      return keyOf(s, e.type)
  }
}

describe('natural keys, whole', () => {
  it('given every run event type, when keyed, then the key is the stream, the type and only its own part', () => {
    const s = 'reconciliation-140000000000000001-run-1'
    const events = reconciliationEvents().filter((e): e is RunEvent => (RUN_TYPES as ReadonlyArray<string>).includes(e.type))
    // given: the catalogue holds each run event type
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(RUN_TYPES))
    // when/then
    expect(events.map((e) => runEventNaturalKey(s, e))).toEqual(events.map((e) => expectedRunKey(s, e)))
    expect(runEventNaturalKey(s, events.find((e) => e.type === 'ReconciliationRunSuperseded') as RunEvent)).toBe(`${s}:ReconciliationRunSuperseded`)
  })
  it('given the request-cycle events of an order, when keyed, then the key is the stream and the type alone', () => {
    const s = 'order-140000000000000001-ORDER-1'
    const cycle = ['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted', 'PaymentRequestFailed', 'PaymentOutcomeUnknown']
    const events = orderEvents().filter((e: OrderEvent) => cycle.includes(e.type))
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(cycle))
    expect(events.map((e) => orderEventNaturalKey(s, e))).toEqual(events.map((e) => `${s}:${e.type}`))
  })
})
