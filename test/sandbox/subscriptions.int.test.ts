import * as t from 'io-ts'
import { afterEach, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import { makeSandboxClock, type SandboxClock } from '../../src/sandbox/clock.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { SubscriptionNotification, SubscriptionRedirectForm } from '../../src/domain/gateway/index.ts'
import type { SubscriptionCreateRequest, SubscriptionUpdateRequest } from '../../src/domain/gateway/subscription.ts'
import { decoded } from '../domain/gateway/builders.ts'
import { clientFor, control, expectLeft, expectRight, gatewayVerifier, MERCHANT_ID, rawGateway, startMerchantServer, startSandbox, type MerchantServer } from './support.ts'

/**
 * Acceptance: subscriptions with the sandbox clock. Monthly from 31 January bills 28/29 February,
 * 31 March, 30 April; interval limits are enforced; three failed charges with retry = Y suspend and a
 * fourth is never tried; cancel stops billing.
 */

/** A Bangkok wall time as an instant. */
const bangkok = (text: string): Date => new Date(`${text.replace(' ', 'T')}+07:00`)

type Setup = { readonly sandbox: Sandbox; readonly client: GatewayClient; readonly merchant: MerchantServer; readonly clock: SandboxClock }

const open: Setup[] = []
const setUp = async (start: string): Promise<Setup> => {
  const clock = makeSandboxClock({ start: bangkok(start) })
  const sandbox = await startSandbox({}, clock)
  const setup = { sandbox, client: clientFor(sandbox), merchant: await startMerchantServer(), clock }
  open.push(setup)
  return setup
}
afterEach(async () => {
  for (const s of open.splice(0)) {
    s.client.close()
    await s.sandbox.close()
    await s.merchant.close()
  }
})

const plan = (merchant: MerchantServer, over: Partial<Omit<SubscriptionCreateRequest, 'version' | 'service'>> = {}): Omit<SubscriptionCreateRequest, 'version' | 'service'> => ({
  merchant_id: MERCHANT_ID,
  merchant_subscribe_id: 'SUB-1',
  plan_name: 'Coffee club',
  interval_type: 'MONTHLY',
  interval: '1',
  total_terms: '4',
  billing_amount: '299',
  billing_currency: 'THB',
  retry: 'Y',
  customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
  notify_url: `${merchant.url}/notify`,
  redirect_url: `${merchant.url}/return`,
  ...over,
})

/** The update request of a plan: no customer, store_id, notify_url or redirect_url (endpoint 7). */
const updateOf = (p: Omit<SubscriptionCreateRequest, 'version' | 'service'>): Omit<SubscriptionUpdateRequest, 'version' | 'service'> => {
  const { customer: _c, notify_url: _n, redirect_url: _r, store_id: _s, ...rest } = p
  return rest
}

const Charges = t.array(t.type({ date: t.string, outcome: t.string, type: t.string }))

const chargesOf = async (s: Setup, recurringBillId: string): Promise<ReadonlyArray<{ date: string; outcome: string; type: string }>> => {
  const got = await control(s.sandbox, 'GET', `/subscriptions/${recurringBillId}`)
  return decoded(Charges, got.json['charges']).map((c) => ({ date: c.date, outcome: c.outcome, type: c.type }))
}

const advanceTo = async (s: Setup, text: string): Promise<void> => {
  const moved = await control(s.sandbox, 'POST', '/clock/set', { to: text })
  expect(moved.status).toBe(200)
  expect(moved.json['bangkok']).toBe(text)
}

const subscriptionNotifications = async (s: Setup, n: number) => {
  const received = await s.merchant.waitFor('/notify', n)
  return received.map((r) => {
    expect(gatewayVerifier.verify(r.fields)).toEqual({ valid: true })
    return decoded(SubscriptionNotification, r.fields)
  })
}

describe('subscriptions on the sandbox clock', () => {
  it.each([
    ['2027', '2027-02-28'],
    ['2028', '2028-02-29'],
  ])('monthly from 31 January %s bills on %s, 31 March and 30 April', async (year, february) => {
    const s = await setUp(`${year}-01-31 09:00:00`)
    const created = expectRight(await s.client.createSubscription(plan(s.merchant, { start_date: `${year}-01-31` }))())
    expect(created.data).toMatchObject({ merchant_subscribe_id: 'SUB-1', recurring_bill_status: 'CREATED' })
    expect(created.data.recurring_bill_id).toMatch(/^\d{20}$/)
    expect(created.data.link_url).toBe(`${s.sandbox.url}/subscriptions/${created.data.recurring_bill_id}`)
    const id = created.data.recurring_bill_id

    // The payer authorises (the browser test clicks the page; here the control API): billed today.
    const authorised = await control(s.sandbox, 'POST', `/subscriptions/${id}/authorise`)
    expect(authorised.status).toBe(200)
    const redirect = authorised.json['redirect']
    if (typeof redirect !== 'object' || redirect === null || !('fields' in redirect) || typeof redirect.fields !== 'object' || redirect.fields === null) throw new Error('no redirect form')
    const form = decoded(SubscriptionRedirectForm, redirect.fields)
    expect(form).toMatchObject({ recurring_bill_id: id, status: 'SUCCESS', type: 'Created_Deducted', billing_amount: '299.00' })
    expect(gatewayVerifier.verify(form)).toEqual({ valid: true })

    await advanceTo(s, `${february.slice(0, 8)}${String(Number(february.slice(8)) - 1).padStart(2, '0')} 23:59:59`)
    expect(await chargesOf(s, id)).toHaveLength(1)
    await advanceTo(s, `${february} 00:00:00`)
    expect((await chargesOf(s, id)).map((c) => c.date)).toEqual([`${year}-01-31`, february])
    await advanceTo(s, `${year}-03-31 08:00:00`)
    await advanceTo(s, `${year}-04-30 08:00:00`)
    await advanceTo(s, `${year}-08-31 08:00:00`)

    const charges = await chargesOf(s, id)
    expect(charges.map((c) => c.date)).toEqual([`${year}-01-31`, february, `${year}-03-31`, `${year}-04-30`])
    expect(charges.map((c) => c.type)).toEqual(['Created_Deducted', 'Deducted', 'Deducted', 'Deducted'])
    expect(charges.every((c) => c.outcome === 'SUCCESS')).toBe(true)

    const notifications = await subscriptionNotifications(s, 4)
    expect(notifications.map((n) => [n.type, n.status])).toEqual([
      ['Created_Deducted', 'SUCCESS'],
      ['Deducted', 'SUCCESS'],
      ['Deducted', 'SUCCESS'],
      ['Deducted', 'SUCCESS'],
    ])
    expect(notifications.map((n) => ('billing_date' in n ? n.billing_date : undefined))).toEqual([`${year}-01-31`, february, `${year}-03-31`, `${year}-04-30`])
  })

  it('enforces the interval limits with an error envelope listing the violation', async () => {
    const s = await setUp('2027-03-01 10:00:00')
    const create = (over: Record<string, string>) =>
      rawGateway(s.sandbox, 'POST', { version: 'v1', service: 'svc.recurring.create', ...plan(s.merchant), merchant_subscribe_id: `L-${Object.values(over).join('-')}`, ...over })
    const rejected: Array<[Record<string, string>, string]> = [
      [{ interval_type: 'DAILY', interval: '6' }, 'interval: must be between 7 and 365 when interval_type is DAILY'],
      [{ interval_type: 'DAILY', interval: '366' }, 'interval: must be between 7 and 365 when interval_type is DAILY'],
      [{ interval_type: 'WEEKLY', interval: '5' }, 'interval: must be between 1 and 4 when interval_type is WEEKLY'],
      [{ interval_type: 'MONTHLY', interval: '13' }, 'interval: must be between 1 and 12 when interval_type is MONTHLY'],
      [{ interval_type: 'YEARLY', interval: '2' }, 'interval: must be 1 when interval_type is YEARLY'],
      [{ interval_type: 'MONTHLY', interval: '0' }, 'interval: must be between 1 and 12 when interval_type is MONTHLY'],
      [{ total_terms: '1' }, 'total_terms: must be at least 2'],
      [{ start_date: '2027-02-28' }, 'start_date: must not be before today (2027-03-01, Asia/Bangkok)'],
    ]
    for (const [over, violation] of rejected) {
      const a = await create(over)
      expect(a.status, JSON.stringify(over)).toBe(400)
      expect(a.envelope['code']).toBe(400001)
      expect(String(a.envelope['message'])).toContain(violation)
    }
    const accepted: Array<Record<string, string>> = [
      { interval_type: 'DAILY', interval: '7' },
      { interval_type: 'DAILY', interval: '365' },
      { interval_type: 'WEEKLY', interval: '4' },
      { interval_type: 'MONTHLY', interval: '12' },
      { interval_type: 'YEARLY', interval: '1' },
    ]
    for (const over of accepted) expect((await create(over)).envelope['code'], JSON.stringify(over)).toBe(200000)
    // Update is held to the same limits.
    const update = await rawGateway(s.sandbox, 'POST', {
      version: 'v1',
      service: 'svc.recurring.update',
      merchant_id: MERCHANT_ID,
      merchant_subscribe_id: 'L-YEARLY-1',
      plan_name: 'x',
      interval_type: 'WEEKLY',
      interval: '9',
      total_terms: '2',
      billing_amount: '1',
      billing_currency: 'THB',
      retry: 'N',
    })
    expect(update.envelope).toMatchObject({ code: 400001, message: expect.stringContaining('interval: must be between 1 and 4 when interval_type is WEEKLY') })
  })

  it('three consecutive failed charges with retry = Y give SUSPEND; a fourth charge is never tried', async () => {
    const s = await setUp('2027-05-10 10:00:00')
    const created = expectRight(await s.client.createSubscription(plan(s.merchant, { interval_type: 'DAILY', interval: '7', total_terms: '10' }))())
    const id = created.data.recurring_bill_id
    expect((await control(s.sandbox, 'PUT', `/subscriptions/${id}/outcomes`, { outcomes: ['FAIL', 'FAIL', 'FAIL', 'SUCCESS'] })).status).toBe(200)
    await control(s.sandbox, 'POST', `/subscriptions/${id}/authorise`)
    await s.clock.advance(86_400_000) // retry on the following day
    await s.clock.advance(86_400_000)
    await advanceTo(s, '2027-07-31 10:00:00')

    const charges = await chargesOf(s, id)
    expect(charges).toEqual([
      { date: '2027-05-10', outcome: 'FAIL', type: 'Created_Deducted' },
      { date: '2027-05-11', outcome: 'FAIL', type: 'Deducted' },
      { date: '2027-05-12', outcome: 'FAIL', type: 'Deducted' },
    ])
    const after = await control(s.sandbox, 'GET', `/subscriptions/${id}`)
    expect(after.json).toMatchObject({ status: 'SUSPEND', outcomes: ['SUCCESS'], charge: { status: 'SUSPEND', nextAttempt: null, consecutiveFailures: 3 } })
    const notifications = await subscriptionNotifications(s, 3)
    expect(notifications.map((n) => [n.status, 'recurring_bill_status' in n ? n.recurring_bill_status : undefined])).toEqual([
      ['FAIL', 'ACTIVE'],
      ['FAIL', 'ACTIVE'],
      ['FAIL', 'SUSPEND'],
    ])

    // An update (spec: "→ ACTIVE") starts the plan over; billing resumes.
    const updated = expectRight(await s.client.updateSubscription(updateOf(plan(s.merchant, { interval_type: 'DAILY', interval: '7', total_terms: '2' })))())
    expect(updated.data.recurring_bill_status).toBe('ACTIVE')
    expect((await chargesOf(s, id)).at(-1)).toEqual({ date: '2027-07-31', outcome: 'SUCCESS', type: 'Updated_Deducted' })
  })

  it('retry = N: a failed term is skipped, not retried the next day', async () => {
    const s = await setUp('2027-05-10 10:00:00')
    const id = expectRight(await s.client.createSubscription(plan(s.merchant, { interval_type: 'WEEKLY', interval: '1', total_terms: '3', retry: 'N' }))()).data.recurring_bill_id
    await control(s.sandbox, 'PUT', `/subscriptions/${id}/outcomes`, { outcomes: ['FAIL'] })
    await control(s.sandbox, 'POST', `/subscriptions/${id}/authorise`)
    await advanceTo(s, '2027-06-30 10:00:00')
    expect((await chargesOf(s, id)).map((c) => [c.date, c.outcome])).toEqual([
      ['2027-05-10', 'FAIL'],
      ['2027-05-17', 'SUCCESS'],
      ['2027-05-24', 'SUCCESS'],
    ])
  })

  it('cancel answers the envelope without data and stops billing', async () => {
    const s = await setUp('2027-05-10 10:00:00')
    const id = expectRight(await s.client.createSubscription(plan(s.merchant, { interval_type: 'DAILY', interval: '7', total_terms: '10' }))()).data.recurring_bill_id
    await control(s.sandbox, 'POST', `/subscriptions/${id}/authorise`)
    await advanceTo(s, '2027-05-17 10:00:00')
    expect(await chargesOf(s, id)).toHaveLength(2)

    const cancelled = await rawGateway(s.sandbox, 'POST', { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1' })
    expect(cancelled.status).toBe(200)
    expect(Object.keys(cancelled.envelope).sort()).toEqual(['code', 'message', 'trace_id'])
    expect(cancelled.envelope).toMatchObject({ code: 200000, message: 'Success' })
    // The client reads it as success with null data; cancelling again is not an error.
    expect(expectRight(await s.client.cancelSubscription({ merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1' })()).data).toBeNull()

    await advanceTo(s, '2027-09-30 10:00:00')
    expect(await chargesOf(s, id)).toHaveLength(2)
    const update = expectLeft(await s.client.updateSubscription(updateOf(plan(s.merchant)))())
    expect(update).toMatchObject({ code: 409001 })
    expect((await control(s.sandbox, 'POST', `/subscriptions/${id}/authorise`)).status).toBe(409)
  })

  it('billing that starts later: authorising notifies Created, the first charge comes on start_date', async () => {
    const s = await setUp('2027-05-10 10:00:00')
    const id = expectRight(await s.client.createSubscription(plan(s.merchant, { start_date: '2027-05-20', total_terms: '2' }))()).data.recurring_bill_id
    const authorised = await control(s.sandbox, 'POST', `/subscriptions/${id}/authorise`)
    expect(authorised.json).toMatchObject({ redirect: { fields: { type: 'Created', status: 'SUCCESS' } }, subscription: { status: 'ACTIVE' } })
    expect(await chargesOf(s, id)).toHaveLength(0)
    await advanceTo(s, '2027-05-20 00:00:01')
    expect(await chargesOf(s, id)).toEqual([{ date: '2027-05-20', outcome: 'SUCCESS', type: 'Deducted' }])
    const notifications = await subscriptionNotifications(s, 2)
    expect(notifications.map((n) => n.type)).toEqual(['Created', 'Deducted'])
  })

  it('does not bill a subscription the payer never authorised', async () => {
    const s = await setUp('2027-05-10 10:00:00')
    const id = expectRight(await s.client.createSubscription(plan(s.merchant))()).data.recurring_bill_id
    await advanceTo(s, '2027-12-31 10:00:00')
    expect(await chargesOf(s, id)).toHaveLength(0)
    expect(s.merchant.at('/notify')).toHaveLength(0)
  })
})
