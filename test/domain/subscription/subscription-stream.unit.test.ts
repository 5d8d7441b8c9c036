import { describe, expect, it } from 'vitest'
import type { SubscriptionEvent } from '../../../src/domain/subscription/events/index.ts'
import {
  callbackDateOf,
  isSubscriptionClaim,
  parseSubscriptionStreamName,
  subscriptionEventNaturalKey,
  subscriptionObservationKey,
  subscriptionStreamName,
} from '../../../src/domain/subscription/stream.ts'
import { MERCHANT_ID } from '../support/values.ts'

/* The subscription stream: its name, the date and natural key of a callback, which events are claims, the natural key of each event. */

const CLAIMS = ['SubscriptionRequested', 'SubscriptionCreated', 'SubscriptionUpdated', 'SubscriptionCancelled', 'SubscriptionRequestFailed', 'SubscriptionOutcomeUnknown'] as const
const OBSERVATIONS = ['SubscriptionActivated', 'SubscriptionCharged', 'SubscriptionChargeFailed', 'SubscriptionSuspended', 'NotificationReceived', 'RedirectReceived', 'DiscrepancyObserved'] as const

/** Only the members the stream functions read (the type, and the request sequence, observation key or callback id). */
const event = (type: string): SubscriptionEvent => ({ type, data: { requestSeq: 3, observationKey: 'obs:1', callbackId: 'cb-1' } }) as unknown as SubscriptionEvent

describe('the subscription stream', () => {
  it('names a subscription and parses the name back; other names are not one', () => {
    const stream = subscriptionStreamName(MERCHANT_ID, 'SUB-1-a\nb')
    expect(stream).toBe(`subscription-${MERCHANT_ID}-SUB-1-a\nb`)
    expect(parseSubscriptionStreamName(stream)).toStrictEqual({ merchantId: MERCHANT_ID, merchantSubscribeId: 'SUB-1-a\nb' })
    expect(parseSubscriptionStreamName(`subscription-${MERCHANT_ID}-`)).toBeNull()
    expect(parseSubscriptionStreamName(`order-${MERCHANT_ID}-SUB-1`)).toBeNull()
    expect(parseSubscriptionStreamName('subscription-12-SUB-1')).toBeNull()
  })

  it("a callback's date: its billing_date when it is a calendar date, else the Bangkok date it was received", () => {
    const receivedAt = new Date('2026-01-31T18:00:00.000Z') // 01:00 on 1 February in Bangkok
    expect(callbackDateOf({ billing_date: '2026-01-15' }, receivedAt)).toBe('2026-01-15')
    expect(callbackDateOf({}, receivedAt)).toBe('2026-02-01')
    expect(callbackDateOf({ billing_date: '2026-02-30' }, receivedAt)).toBe('2026-02-01')
    expect(callbackDateOf({ billing_date: 'soon' }, receivedAt)).toBe('2026-02-01')
    expect(callbackDateOf({ billing_date: 20260115 }, receivedAt)).toBe('2026-02-01')
  })

  it('the observation key of a callback: origin, ids, type (empty when none), status and date', () => {
    const f = { merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1', recurring_bill_id: 'RB-1', status: 'SUCCESS' }
    expect(subscriptionObservationKey('notification', { ...f, type: 'DEDUCTION' }, '2026-01-15')).toBe(`notification:${MERCHANT_ID}:SUB-1:RB-1:DEDUCTION:SUCCESS:2026-01-15`)
    expect(subscriptionObservationKey('redirect', f, '2026-01-15')).toBe(`redirect:${MERCHANT_ID}:SUB-1:RB-1::SUCCESS:2026-01-15`)
    expect(subscriptionObservationKey('redirect', { ...f, type: null }, '2026-01-15')).toBe(`redirect:${MERCHANT_ID}:SUB-1:RB-1::SUCCESS:2026-01-15`)
  })

  it('the steps of a request are claims; observations and rejected callbacks are not', () => {
    for (const type of CLAIMS) expect([type, isSubscriptionClaim(event(type))]).toStrictEqual([type, true])
    for (const type of [...OBSERVATIONS, 'CallbackRejected']) expect([type, isSubscriptionClaim(event(type))]).toStrictEqual([type, false])
  })

  it('natural keys: a request step by its sequence, an observation by its key, a rejected callback by its id', () => {
    const s = subscriptionStreamName(MERCHANT_ID, 'SUB-1')
    for (const type of CLAIMS) expect(subscriptionEventNaturalKey(s, event(type))).toBe(`subscription-${MERCHANT_ID}-SUB-1:${type}:3`)
    for (const type of OBSERVATIONS) expect(subscriptionEventNaturalKey(s, event(type))).toBe(`subscription-${MERCHANT_ID}-SUB-1:${type}:obs%3A1`)
    expect(subscriptionEventNaturalKey(s, event('CallbackRejected'))).toBe(`subscription-${MERCHANT_ID}-SUB-1:CallbackRejected:cb-1`)
  })
})
