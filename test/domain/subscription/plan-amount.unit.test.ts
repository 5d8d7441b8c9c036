import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { planOfRequest } from '../../../src/domain/subscription/plan.ts'
import { at } from '../support/values.ts'
import { aCreateRequest } from './builders.ts'

describe('the plan of a request whose amount is no amount', () => {
  it('given a billing_amount of three decimals, when the plan is made, then that field alone is named', () => {
    expect(planOfRequest(aCreateRequest({ billing_amount: '2.999' }), at(0))).toEqual(E.left([{ path: 'billing_amount', rule: 'must be an amount' }]))
  })
})
