import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { makeRecording } from '../../src/application/index.ts'
import { makeMemoryEventStore } from './memory-event-store.ts'
import { CALLBACKS, cause, makeFakeGateway, MERCHANT_ID, signedByGateway, testDeps, timedOut, typesOf } from './support.ts'

const STREAM = `subscription-${MERCHANT_ID}-SUB-1`

const createInput = {
  merchant_subscribe_id: 'SUB-1',
  plan_name: 'Streaming',
  interval_type: 'MONTHLY',
  interval: '1',
  total_terms: '12',
  billing_amount: '149',
  billing_currency: 'THB',
  retry: 'Y',
  start_date: '2026-11-21',
  customer: { merchant_user_id: 'u-8', email: 'payer@example.com' },
  notify_url: 'https://shop.example/sub-notify',
  redirect_url: 'https://shop.example/sub-done',
}

const created = E.right({ merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1', recurring_bill_id: 'RB0001', recurring_bill_status: 'CREATED', create_time: '2026-11-21 10:00:00', link_url: 'https://gw.example/s/RB0001' })

const deduction = (status: 'SUCCESS' | 'FAIL', date: string) =>
  signedByGateway({ notify_type: 'SUBSCRIPTION', merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1', recurring_bill_id: 'RB0001', status, type: 'Deducted', billing_amount: '149.00', billing_currency: 'THB', billing_date: date })

describe('subscriptions', () => {
  it('create → update → cancel, each recorded before it is sent and after its answer', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('createSubscription', created)
    gateway.answer('updateSubscription', E.right({ merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1', recurring_bill_id: 'RB0001', recurring_bill_status: 'ACTIVE', link_url: 'https://gw.example/s/RB0001' }))
    gateway.answer('cancelSubscription', E.right(null))
    const { subscriptions } = makeRecording(testDeps(store, gateway))

    const c = await subscriptions.create(createInput, cause)
    expect(c).toMatchObject({ _tag: 'Ok', status: 'created', body: { status: 'CREATED', recurring_bill_id: 'RB0001', link_url: 'https://gw.example/s/RB0001', merchant_urls: { redirect_url: 'https://shop.example/sub-done' } } })
    expect(gateway.calls[0]?.request).toMatchObject({ notify_url: CALLBACKS.notify, redirect_url: CALLBACKS.subscriptionRedirect })
    expect(JSON.stringify(store.all().map((e) => e.data))).not.toContain('payer@example.com')

    const { merchant_subscribe_id: _id, customer: _c, notify_url: _n, redirect_url: _r, ...plan } = createInput
    const u = await subscriptions.update('SUB-1', { ...plan, billing_amount: '199' }, cause)
    expect(u).toMatchObject({ _tag: 'Ok', body: { plan: { billing_amount: '199.00' } } })
    expect(await subscriptions.update('SUB-1', { ...plan, merchant_subscribe_id: 'SUB-2' }, cause)).toMatchObject({ _tag: 'InvalidRequest', violations: [{ path: 'merchant_subscribe_id' }] })

    expect(await subscriptions.cancel('SUB-1', cause)).toMatchObject({ _tag: 'Ok', body: { status: 'CANCELLED' } })
    // cancelling again sends nothing
    expect(await subscriptions.cancel('SUB-1', cause)).toMatchObject({ _tag: 'Ok', body: { status: 'CANCELLED' } })
    expect(gateway.count('cancelSubscription')).toBe(1)
    expect(typesOf(store, STREAM)).toEqual(['SubscriptionRequested', 'SubscriptionCreated', 'SubscriptionRequested', 'SubscriptionUpdated', 'SubscriptionRequested', 'SubscriptionCancelled'])
    expect(await subscriptions.update('SUB-1', plan, cause)).toMatchObject({ _tag: 'Conflict' })
    expect(await subscriptions.get('NOPE')).toMatchObject({ _tag: 'NotFound' })
  })

  it('three consecutive failed charges with retry=Y suspend the subscription', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('createSubscription', created)
    const recording = makeRecording(testDeps(store, gateway))
    await recording.subscriptions.create(createInput, cause)
    const ctx = (n: number) => ({ callbackId: `cb-${String(n)}`, receivedAt: new Date('2026-11-21T03:00:00.000Z') })
    await recording.callbacks.notification(signedByGateway({ notify_type: 'SUBSCRIPTION', merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1', recurring_bill_id: 'RB0001', status: 'SUCCESS', type: 'Created', recurring_bill_status: 'ACTIVE' }), ctx(0))
    for (const [i, date] of ['2026-11-21', '2026-11-22', '2026-11-23'].entries()) {
      expect(await recording.callbacks.notification(deduction('FAIL', date), ctx(i + 1))).toMatchObject({ _tag: 'Recorded' })
    }
    expect(typesOf(store, STREAM).filter((t) => t === 'SubscriptionChargeFailed')).toHaveLength(3)
    expect(typesOf(store, STREAM).at(-1)).toBe('SubscriptionSuspended')
    expect(await recording.subscriptions.get('SUB-1')).toMatchObject({ _tag: 'Ok', body: { status: 'SUSPEND' } })
  })

  it('a create of unknown outcome is answered 202 and never sent again', async () => {
    const store = makeMemoryEventStore()
    const gateway = makeFakeGateway()
    gateway.answer('createSubscription', timedOut())
    const { subscriptions } = makeRecording(testDeps(store, gateway))
    expect(await subscriptions.create(createInput, cause)).toMatchObject({ _tag: 'Ok', status: 'accepted', body: { status: 'OUTCOME_UNKNOWN' } })
    expect(await subscriptions.create(createInput, cause)).toMatchObject({ _tag: 'Conflict' })
    expect(gateway.count('createSubscription')).toBe(1)
  })
})
