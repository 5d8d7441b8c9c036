import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Position } from '../../src/application/ports/event-store.ts'
import type { DiscrepancyObservedData } from '../../src/domain/events/common/discrepancy-observed.ts'
import type { StatusClassification } from '../../src/domain/gateway/statuses.ts'
import type { Satang } from '../../src/domain/money.ts'
import { fold, initialRefundState, type Refund, type RefundState } from '../../src/domain/refund/index.ts'
import { decodeRefundState, decodeRefundView, encodeRefundState, encodeRefundView, type RefundView } from '../../src/projections/refunds/state.ts'
import { aRefundNotification, aRefundRecord, aRefundTracked, given, refundNotified, refundQueried } from '../domain/refund/builders.ts'

/** Through JSON text, as PostgreSQL's jsonb keeps it. */
const viaJson = (u: unknown): unknown => JSON.parse(JSON.stringify(u)) as unknown

const withoutKeys = (s: RefundState): RefundState => (s._tag === 'Refund' ? { ...s, observationKeys: new Set() } : s)

const instantArb = fc.date({ min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2100-12-31T23:59:59.999Z'), noInvalidDate: true })
const textArb = fc.string({ maxLength: 12 })
const satangArb = fc.bigInt({ min: 0n, max: 99_999_999n }).map((n) => n as Satang)

const classificationArb: fc.Arbitrary<StatusClassification> = fc.record({
  code: textArb,
  meaning: textArb,
  outcome: fc.constantFrom('pending', 'succeeded', 'failed'),
  final: fc.boolean(),
  needsReview: fc.boolean(),
})

const discrepancyArb: fc.Arbitrary<DiscrepancyObservedData> = fc.record({
  source: fc.constantFrom('api_response', 'notification', 'query', 'redirect'),
  observationKey: textArb,
  observedAt: instantArb,
  statusCode: fc.option(textArb, { nil: null }),
  mismatches: fc.array(fc.record({ field: fc.constantFrom('amount', 'currency', 'merchant_order_id', 'final_status', 'refundable_amount'), expected: textArb, observed: textArb }), {
    maxLength: 3,
  }),
})

const refundArb: fc.Arbitrary<Refund> = fc.record({
  _tag: fc.constant('Refund'),
  merchantId: textArb,
  merchantRefundId: textArb,
  merchantOrderId: textArb,
  trackedBy: fc.constantFrom('merchant', 'notification', 'query'),
  trackedAt: instantArb,
  refundOrderId: fc.option(textArb, { nil: null }),
  status: fc.option(fc.record({ code: textArb, classification: classificationArb, source: fc.constantFrom('notification', 'query'), observedAt: instantArb }), { nil: null }),
  recorded: fc.option(fc.record({ amount: satangArb, currency: textArb, recordedAt: instantArb }), { nil: null }),
  observationKeys: fc.array(textArb, { maxLength: 3 }).map((keys): ReadonlySet<string> => new Set(keys)),
  discrepancies: fc.array(discrepancyArb, { maxLength: 3 }),
  unclassifiedStatuses: fc.array(textArb, { maxLength: 3 }),
})

const viewArb: fc.Arbitrary<RefundView> = fc.record({
  state: refundArb,
  completedAt: fc.option(instantArb, { nil: null }),
  notificationsSeen: fc.nat(),
  queriesSeen: fc.nat(),
  lastEventPosition: fc.bigInt({ min: 1n, max: 10n ** 19n }).map((n) => `${n.toString().padStart(20, '0')}-${n.toString().padStart(20, '0')}` as Position),
  updatedAt: instantArb,
})

describe('the refund state codec', () => {
  it('round-trips any state through JSON text (observationKeys are not kept)', () => {
    fc.assert(
      fc.property(refundArb, (s) => {
        expect(decodeRefundState(viaJson(encodeRefundState(s)))).toEqual(withoutKeys(s))
      }),
    )
  })

  it('round-trips states the domain folds: tracked, observed twice, recorded, with a discrepancy and an unknown code', () => {
    const notified = given(aRefundTracked()).when(refundNotified(aRefundNotification())).events()
    const queriedOther = given(aRefundTracked(), ...notified).when(refundQueried(aRefundRecord({ refund_amount: '41.00' }))).events()
    const unknownCode = given(aRefundTracked()).when(refundQueried(aRefundRecord({ refund_status: 'R?' }))).events()
    for (const events of [[aRefundTracked()], [aRefundTracked(), ...notified], [aRefundTracked(), ...notified, ...queriedOther], [aRefundTracked(), ...unknownCode]]) {
      const state = fold(events)
      expect(state._tag).toBe('Refund')
      expect(decodeRefundState(viaJson(encodeRefundState(state)))).toEqual(withoutKeys(state))
    }
  })

  it('keeps amounts as satang digit strings and instants as ISO text', () => {
    const state = fold([aRefundTracked(), ...given(aRefundTracked()).when(refundNotified(aRefundNotification())).events()])
    const json = encodeRefundState(state)
    expect(json).toMatchObject({ recorded: { amount: '4000', currency: 'THB' }, trackedAt: '2026-01-01T03:10:00.000Z' })
    expect(json).not.toHaveProperty('observationKeys')
    expect(json).not.toHaveProperty('_tag')
  })

  it('no refund is null, and null is no refund', () => {
    expect(encodeRefundState(initialRefundState)).toBeNull()
    expect(decodeRefundState(null)).toEqual(initialRefundState)
  })

  it('refuses anything else, naming the field', () => {
    const json = encodeRefundState(fold([aRefundTracked()]))
    expect(() => decodeRefundState({ ...json, trackedAt: 'yesterday' })).toThrow(/trackedAt/)
    expect(() => decodeRefundState({ ...json, recorded: { amount: 12.5, currency: 'THB', recordedAt: '2026-01-01T03:10:00.000Z' } })).toThrow(/recorded/)
    expect(() => decodeRefundState('refund')).toThrow(/does not decode/)
  })
})

describe('the refunds projection view codec', () => {
  it('round-trips any view through JSON text', () => {
    fc.assert(
      fc.property(viewArb, (v) => {
        expect(decodeRefundView(viaJson(encodeRefundView(v)))).toEqual({ ...v, state: withoutKeys(v.state) })
      }),
    )
  })

  it('a view kept by another version asks for a rebuild', () => {
    const v = fc.sample(viewArb, 1)[0]
    if (v === undefined) throw new Error('no sample')
    expect(() => decodeRefundView({ ...encodeRefundView(v), version: 99 })).toThrow(/rebuild/)
    expect(() => decodeRefundView({ ...encodeRefundView(v), state: null })).toThrow()
  })
})
