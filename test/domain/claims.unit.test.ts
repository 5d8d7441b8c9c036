import { describe, expect, it } from 'vitest'
import { isOrderClaim, parseOrderStreamName } from '../../src/domain/order/index.ts'
import { isSubscriptionClaim, parseSubscriptionStreamName } from '../../src/domain/subscription/index.ts'
import { orderEvents, subscriptionEvents } from './events/catalogue.ts'

/** Which events are claims (steps of a request's cycle, keyed by the command that decided them): every event type, by name. */

describe('claims', () => {
  it('of an order: the request cycle, not the observations or refused callbacks', () => {
    const claims = Object.fromEntries(orderEvents().map((e) => [e.type, isOrderClaim(e)]))
    expect(claims).toEqual({
      OrderCreated: true,
      PaymentRequested: true,
      PaymentRequestAccepted: true,
      PaymentRequestFailed: true,
      PaymentOutcomeUnknown: true,
      StatusObserved: false,
      RedirectReceived: false,
      NotificationReceived: false,
      DiscrepancyObserved: false,
      CallbackRejected: false,
      QueryNotFound: false,
    })
  })
  it('of a subscription: the requests and their answers, not what the payer or the gateway reported', () => {
    const claims = Object.fromEntries(subscriptionEvents().map((e) => [e.type, isSubscriptionClaim(e)]))
    expect(Object.keys(claims).length).toBeGreaterThanOrEqual(11)
    expect(claims).toMatchObject({
      SubscriptionRequested: true,
      SubscriptionCreated: true,
      SubscriptionUpdated: true,
      SubscriptionCancelled: true,
      SubscriptionRequestFailed: true,
      SubscriptionOutcomeUnknown: true,
      SubscriptionActivated: false,
      SubscriptionCharged: false,
      SubscriptionChargeFailed: false,
      SubscriptionSuspended: false,
      NotificationReceived: false,
    })
  })
  it('stream names that are not of the kind are not parsed', () => {
    expect(parseOrderStreamName('order-140000000000000001-')).toBeNull()
    expect(parseOrderStreamName('order-1-A')).toBeNull()
    expect(parseSubscriptionStreamName('subscription-140000000000000001-')).toBeNull()
    expect(parseSubscriptionStreamName('subscription-140000000000000001-S-1')).toEqual({ merchantId: '140000000000000001', merchantSubscribeId: 'S-1' })
  })
})
