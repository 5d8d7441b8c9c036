import { describe, expect, it } from 'vitest'
import { fold, paymentOutcomeUnknown, type Order, type OrderEvent, type OrderState } from '../../../src/domain/order/index.ts'
import { at } from '../support/values.ts'
import { anOrderCreated, aPaymentRequestAccepted, aPaymentRequested, aStatusObserved } from './builders.ts'

/** The order state after events that the deciders seldom produce in this order: each compared whole. */

const order = (s: OrderState): Order => {
  if (s._tag !== 'Order') throw new Error('no order')
  return s
}
const accepted = (o: Record<string, unknown>): OrderEvent => {
  const e = aPaymentRequestAccepted()
  return { ...e, data: { ...e.data, ...o } } as OrderEvent
}
const unknown = (): OrderEvent => paymentOutcomeUnknown.make({ reason: 'interrupted', httpStatus: null, traceId: null, since: at(6) })

describe('order evolve at its edges', () => {
  it('given an answer of the right amount in another currency, when accepted, then its status is not taken', () => {
    // given/when
    const s = order(fold([anOrderCreated(), aPaymentRequested(), accepted({ currency: 'USD' })]))
    const agreeing = order(fold([anOrderCreated(), aPaymentRequested(), aPaymentRequestAccepted()]))
    // then: the same order as with an agreeing answer, but without a status
    expect(s).toEqual({ ...agreeing, status: null })
    expect(agreeing.status).not.toBeNull()
  })
  it('given a status known only from the create answer, when the outcome is recorded as unknown, then the outcome is open', () => {
    const before = order(fold([anOrderCreated(), aPaymentRequested(), aPaymentRequestAccepted()]))
    const s = order(fold([anOrderCreated(), aPaymentRequested(), aPaymentRequestAccepted(), unknown()]))
    expect(s).toEqual({ ...before, request: { phase: 'outcome_unknown', reason: 'interrupted', since: at(6) } })
  })
  it('given an order with no gateway order id yet, when a status is observed, then the id comes from the observation', () => {
    const s = order(fold([anOrderCreated(), aPaymentRequested(), aStatusObserved({ gatewayOrderId: 'G-OBSERVED' })]))
    expect(s.gatewayOrderId).toBe('G-OBSERVED')
    const later = order(fold([anOrderCreated(), aPaymentRequested(), aStatusObserved({ gatewayOrderId: 'G-OBSERVED' }), aStatusObserved({ statusCode: 'PS', gatewayOrderId: 'G-OTHER', observationKey: 'k2' })]))
    expect(later.gatewayOrderId).toBe('G-OBSERVED')
  })
})
