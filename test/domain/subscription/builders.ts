import * as E from 'fp-ts/lib/Either.js'
import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import type { SubscriptionNotification } from '../../../src/domain/gateway/notification.ts'
import type { SubscriptionRedirectForm } from '../../../src/domain/gateway/redirect-forms.ts'
import type { SubscriptionCreateRequest, SubscriptionCreateResponse, SubscriptionUpdateRequest } from '../../../src/domain/gateway/subscription.ts'
import {
  decide,
  evolve,
  initialSubscriptionState,
  planOfRequest,
  subscriptionCreated,
  subscriptionRequested,
  type ReceiveSubscriptionNotification,
  type ReceiveSubscriptionRedirect,
  type SubscriptionEvent,
  type SubscriptionPlan,
} from '../../../src/domain/subscription/index.ts'
import { deciderSpec } from '../support/decider-spec.ts'
import { at, MERCHANT_ID, PAYER } from '../support/values.ts'

export const SUBSCRIBE_ID = 'SUB-1'
export const BILL_ID = '20260101000000000001'

export const given = deciderSpec({ initialState: initialSubscriptionState, evolve, decide })

export const aCreateRequest = (o: Partial<SubscriptionCreateRequest> = {}): SubscriptionCreateRequest => ({
  version: 'v1',
  service: 'svc.recurring.create',
  merchant_id: MERCHANT_ID,
  merchant_subscribe_id: SUBSCRIBE_ID,
  plan_name: 'Coffee club',
  interval_type: 'MONTHLY',
  interval: '1',
  total_terms: '12',
  billing_amount: '299.00',
  billing_currency: 'THB',
  retry: 'Y',
  start_date: '2026-01-15',
  customer: { ...PAYER },
  notify_url: 'https://satang.example/callbacks/notify',
  redirect_url: 'https://satang.example/callbacks/subscription',
  ...o,
})

export const anUpdateRequest = (o: Partial<SubscriptionUpdateRequest> = {}): SubscriptionUpdateRequest => {
  const { customer: _c, notify_url: _n, redirect_url: _r, service: _s, ...plan } = aCreateRequest()
  return { ...plan, service: 'svc.recurring.update', billing_amount: '349.00', ...o }
}

export const planOf = (r: SubscriptionCreateRequest | SubscriptionUpdateRequest): SubscriptionPlan => {
  const plan = planOfRequest(r, at(0))
  if (E.isLeft(plan)) throw new Error('test plan')
  return plan.right
}

export const MERCHANT_URLS = { notifyUrl: 'https://merchant.example/notify', redirectUrl: null }

export const aSubscriptionRequested = (): SubscriptionEvent =>
  subscriptionRequested.make({
    requestSeq: 1,
    operation: 'create',
    merchantId: MERCHANT_ID,
    merchantSubscribeId: SUBSCRIBE_ID,
    plan: planOf(aCreateRequest()),
    merchantUrls: MERCHANT_URLS,
    request: redactPayerData(aCreateRequest()),
    requestedAt: at(0),
  })

export const aCreateAnswer = (o: Partial<SubscriptionCreateResponse> = {}): SubscriptionCreateResponse => ({
  merchant_id: MERCHANT_ID,
  merchant_subscribe_id: SUBSCRIBE_ID,
  recurring_bill_id: BILL_ID,
  recurring_bill_status: 'CREATED',
  create_time: '2026-01-01 10:00:00',
  link_url: 'https://gateway.example/subscriptions/20260101000000000001',
  ...o,
})

export const aSubscriptionCreated = (): SubscriptionEvent =>
  subscriptionCreated.make({
    requestSeq: 1,
    recurringBillId: BILL_ID,
    gatewayStatus: 'CREATED',
    linkUrl: 'https://gateway.example/subscriptions/20260101000000000001',
    createTime: at(0),
    traceId: 'trace-sub',
    resolvedBy: 'api_response',
    response: redactPayerData(aCreateAnswer()),
    receivedAt: at(0),
  })

export const aSubscriptionNotification = (o: Partial<SubscriptionNotification> & { readonly billing_date?: string } = {}): SubscriptionNotification => ({
  notify_type: 'SUBSCRIPTION',
  merchant_id: MERCHANT_ID,
  merchant_subscribe_id: SUBSCRIBE_ID,
  recurring_bill_id: BILL_ID,
  status: 'SUCCESS',
  type: 'Deducted',
  billing_amount: '299.00',
  billing_currency: 'THB',
  sign_type: 'RSA',
  sign: 'c2lnbmF0dXJl',
  ...o,
})

export const subscriptionNotified = (notification: SubscriptionNotification, o: { readonly verified?: boolean; readonly at?: Date } = {}): ReceiveSubscriptionNotification => ({
  type: 'ReceiveSubscriptionNotification',
  notification,
  signature: o.verified === false ? { verified: false, reason: 'bad signature' } : { verified: true },
  callbackId: 'req-s1',
  receivedAt: o.at ?? at(60),
})

export const aSubscriptionRedirect = (o: Partial<SubscriptionRedirectForm> = {}): SubscriptionRedirectForm => ({
  merchant_id: MERCHANT_ID,
  merchant_subscribe_id: SUBSCRIBE_ID,
  recurring_bill_id: BILL_ID,
  status: 'SUCCESS',
  type: 'Created_Deducted',
  billing_amount: '299.00',
  billing_currency: 'THB',
  sign_type: 'RSA',
  sign: 'c2lnbmF0dXJl',
  ...o,
})

export const subscriptionRedirected = (form: SubscriptionRedirectForm): ReceiveSubscriptionRedirect => ({
  type: 'ReceiveSubscriptionRedirect',
  form,
  signature: { verified: true },
  callbackId: 'req-s2',
  receivedAt: at(61),
})

/** Events of a subscription created at the gateway and authorised by the payer. */
export const anActiveSubscription = (): ReadonlyArray<SubscriptionEvent> => {
  const base = [aSubscriptionRequested(), aSubscriptionCreated()]
  return [...base, ...given(...base).when(subscriptionNotified(aSubscriptionNotification({ type: 'Created' }))).events()]
}

/** Decides each command on the events so far and returns every event decided. */
export const run = (start: ReadonlyArray<SubscriptionEvent>, ...notifications: ReadonlyArray<ReceiveSubscriptionNotification>): ReadonlyArray<SubscriptionEvent> =>
  notifications.reduce<ReadonlyArray<SubscriptionEvent>>((events, n) => [...events, ...given(...events).when(n).events()], start)
