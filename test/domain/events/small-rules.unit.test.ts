import { describe, expect, it } from 'vitest'
import { rejectCallback } from '../../../src/domain/events/common/callback-rejected.ts'
import { notFoundObservationKey } from '../../../src/domain/events/common/query-not-found.ts'
import { methodRule } from '../../../src/domain/gateway/direct-payment-methods.ts'
import { escapeRefusedText } from '../../../src/domain/gateway/text-rules.ts'
import { at, MERCHANT_ID } from '../support/values.ts'

/** Small rules of the domain, each compared whole at the input that tells its branches apart. */

describe('small rules, whole', () => {
  it('given a not-found answer, when its observation key is made, then it names the query source, the kind, the ids, not_found and the code', () => {
    expect(notFoundObservationKey('payment', MERCHANT_ID, 'ORD-1', 404001)).toBe(`query:payment:${MERCHANT_ID}:ORD-1:not_found:404001`)
  })
  it('given a method of two other services on an open service, when checked, then both owners are listed with a comma', () => {
    expect(methodRule('svc.bankcard.pay', 'MERCHANT_SCAN')).toBe('is a payment_method of svc.wallet_a.offline.pay, svc.wallet_b.pay, not of svc.bankcard.pay')
  })
  it('given a value holding null, when refused text is escaped, then null stays null', () => {
    expect(escapeRefusedText({ a: null, b: ['x\u0000', null], c: 'ok' })).toEqual({ a: null, b: ['x\\u0000', null], c: 'ok' })
    expect(escapeRefusedText(null)).toBeNull()
  })
  it('given a rejected callback without a payload, when the event is made, then its payload is null', () => {
    const e = rejectCallback({ callback: 'payment_notification', reason: 'bad_signature', detail: 'x', violations: [], callbackId: 'r-1', receivedAt: at(1), payload: null })
    expect(e).toEqual({ type: 'CallbackRejected', data: { callback: 'payment_notification', reason: 'bad_signature', detail: 'x', violations: [], callbackId: 'r-1', receivedAt: at(1), payload: null } })
  })
})
