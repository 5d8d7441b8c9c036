import { describe, expect, it } from 'vitest'
import { keyOf } from '../../src/domain/events/natural-key.ts'
import { fold as foldOrder } from '../../src/domain/order/index.ts'
import { fold as foldRefund, needsReview as refundNeedsReview, parseRefundStreamName, recordedAmountOf, refundEventNaturalKey, refundOrderContext, type Refund } from '../../src/domain/refund/index.ts'
import { fold as foldSubscription, needsReview as subscriptionNeedsReview, subscriptionStatusOf, type Subscription } from '../../src/domain/subscription/index.ts'
import { refundEvents } from './events/catalogue.ts'
import { anAcceptedCheckout, aStatusObserved } from './order/builders.ts'
import { aRefundTracked } from './refund/builders.ts'
import { anActiveSubscription, aSubscriptionRequested } from './subscription/builders.ts'
import { at, sat } from './support/values.ts'

/** The small questions asked of aggregate states, each on its own condition; keys of every refund event. */

const discrepancy = { source: 'query' as const, observationKey: 'k', observedAt: at(1), statusCode: 'RS', mismatches: [] }

const refund = (o: Partial<Refund> = {}): Refund => {
  const s = foldRefund([aRefundTracked()])
  if (s._tag !== 'Refund') throw new Error('no refund')
  return { ...s, ...o }
}
const subscription = (o: Partial<Subscription> = {}): Subscription => {
  const s = foldSubscription(anActiveSubscription())
  if (s._tag !== 'Subscription') throw new Error('no subscription')
  return { ...s, ...o }
}

describe('refund state', () => {
  it('recorded amount and review', () => {
    expect([recordedAmountOf({ _tag: 'NoRefund' }), recordedAmountOf(refund()), recordedAmountOf(refund({ recorded: { amount: sat(4000n), currency: 'THB', recordedAt: at(1) } }))]).toEqual([null, null, 4000n])
    expect([refundNeedsReview({ _tag: 'NoRefund' }), refundNeedsReview(refund()), refundNeedsReview(refund({ unclassifiedStatuses: ['R?'] })), refundNeedsReview(refund({ discrepancies: [discrepancy] }))]).toEqual([false, false, true, true])
  })
  it('the order context: paid only when paid, currency when the order exists', () => {
    const paid = foldOrder([...anAcceptedCheckout(), aStatusObserved({ statusCode: 'PS' })])
    const open = foldOrder(anAcceptedCheckout())
    expect(refundOrderContext(paid, [refund({ recorded: { amount: sat(1500n), currency: 'THB', recordedAt: at(1) } }), refund(), { _tag: 'NoRefund' }])).toEqual({ paidAmount: 10000n, currency: 'THB', refundedByOthers: 1500n })
    expect(refundOrderContext(open, [])).toEqual({ paidAmount: null, currency: 'THB', refundedByOthers: 0n })
    expect(refundOrderContext({ _tag: 'NoOrder' }, [])).toEqual({ paidAmount: null, currency: null, refundedByOthers: 0n })
  })
  it('stream names that are not a refund stream are not parsed', () => {
    expect(parseRefundStreamName('refund-140000000000000001-')).toBeNull()
    expect(parseRefundStreamName('order-140000000000000001-R')).toBeNull()
    expect(parseRefundStreamName('refund-140000000000000001-R-1')).toEqual({ merchantId: '140000000000000001', merchantRefundId: 'R-1' })
  })
  it('natural keys: once per stream for tracking and recording; per observation otherwise', () => {
    const stream = 'refund-140000000000000001-R'
    const keys = Object.fromEntries(refundEvents().map((e) => [e.type, refundEventNaturalKey(stream, e)]))
    expect(keys['RefundTracked']).toBe(keyOf(stream, 'RefundTracked'))
    expect(keys['RefundRecorded']).toBe(keyOf(stream, 'RefundRecorded'))
    for (const e of refundEvents()) {
      if (e.type === 'RefundStatusObserved' || e.type === 'NotificationReceived' || e.type === 'QueryNotFound' || e.type === 'DiscrepancyObserved') {
        expect(refundEventNaturalKey(stream, e)).toBe(keyOf(stream, e.type, e.data.observationKey))
      }
    }
    expect(Object.keys(keys)).toEqual(expect.arrayContaining(['RefundTracked', 'RefundStatusObserved', 'RefundRecorded', 'NotificationReceived', 'QueryNotFound']))
  })
})

describe('subscription state', () => {
  it('the status shown for each lifecycle; COMPLETED once every term is charged', () => {
    expect(subscriptionStatusOf({ _tag: 'NoSubscription' })).toBeNull()
    expect(subscriptionStatusOf(foldSubscription([aSubscriptionRequested()]))).toBe('REQUESTED')
    expect(subscriptionStatusOf(subscription())).toBe('ACTIVE')
    expect(subscriptionStatusOf(subscription({ charges: null }))).toBe('ACTIVE')
    expect(subscriptionStatusOf(subscription({ charges: { termsCharged: 12, consecutiveFailures: 0, status: 'COMPLETED', nextAttempt: null } }))).toBe('COMPLETED')
    expect(subscriptionStatusOf(subscription({ lifecycle: 'suspended' }))).toBe('SUSPEND')
  })
  it('review: a discrepancy only', () => {
    expect([subscriptionNeedsReview({ _tag: 'NoSubscription' }), subscriptionNeedsReview(subscription()), subscriptionNeedsReview(subscription({ discrepancies: [discrepancy] }))]).toEqual([false, false, true])
  })
})

describe('natural keys of parts with surrogates', () => {
  it('a pair is one character, a lone one is written %uXXXX, both alone and beside others', () => {
    expect(keyOf('a\u{1F600}b')).toBe(encodeURIComponent('a\u{1F600}b'))
    expect(keyOf('a\ud800b')).toBe('a%uD800b')
    expect(keyOf('\udfff')).toBe('%uDFFF')
    expect(keyOf('\u{1F600}\ud83d')).toBe(`${encodeURIComponent('\u{1F600}')}%uD83D`)
    expect(keyOf('\udc00\u{1F600}')).toBe(`%uDC00${encodeURIComponent('\u{1F600}')}`)
    expect(keyOf('x\ud7ff\ud800 ')).toBe(`x${encodeURIComponent('\ud7ff')}%uD800%20`)
    expect(keyOf('\ue000\udbff')).toBe(`${encodeURIComponent('\ue000')}%uDBFF`)
  })
})
