import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fold } from '../../src/domain/order/index.ts'
import { decodeOrderState, encodeOrderState } from '../../src/projections/orders/state.ts'
import { orderEventsOf, orderPlanArb } from './scenarios.ts'

describe('the order state as JSON (kept by the orders projection between batches)', () => {
  it('round-trips every state the aggregate reaches, except the observation keys it does not keep', () => {
    fc.assert(
      fc.property(orderPlanArb, fc.nat({ max: 1000 }), (plan, i) => {
        const { events } = orderEventsOf(i, plan)
        for (let n = 0; n <= events.length; n++) {
          const state = fold(events.slice(0, n))
          const back = decodeOrderState(JSON.parse(JSON.stringify(encodeOrderState(state))))
          if (state._tag === 'NoOrder') expect(back).toEqual(state)
          else expect(back).toEqual({ ...state, observationKeys: new Set() })
        }
      }),
    )
  })

  it('refuses JSON that is not a kept state, saying what is wrong', () => {
    expect(() => decodeOrderState({ order: {} })).toThrow(/order state does not decode/)
    expect(decodeOrderState(null)).toEqual({ _tag: 'NoOrder' })
  })
})
