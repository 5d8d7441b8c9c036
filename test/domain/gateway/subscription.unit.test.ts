import { describe, expect, it } from 'vitest'
import { billingAmountOf } from '../../../src/domain/gateway/amounts.ts'
import {
  SubscriptionCancelRequest,
  SubscriptionCreateRequest,
  SubscriptionCreateResponse,
  SubscriptionUpdateRequest,
  SubscriptionUpdateResponse,
} from '../../../src/domain/gateway/subscription.ts'
import { decoded, MERCHANT_ID, NOW, violations, withFields } from './builders.ts'

const aCreate = (o: Record<string, unknown> = {}) =>
  withFields(
    {
      version: 'v1',
      service: 'svc.recurring.create',
      merchant_id: MERCHANT_ID,
      merchant_subscribe_id: 'SUB-2026-0001',
      plan_name: 'Gold monthly',
      interval_type: 'MONTHLY',
      interval: '1',
      total_terms: '12',
      billing_amount: '299',
      billing_currency: 'THB',
      retry: 'Y',
      customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
    },
    o,
  )

const anUpdate = (o: Record<string, unknown> = {}) =>
  withFields(aCreate({ service: 'svc.recurring.update', customer: undefined }), o)

describe('subscription create and update: interval limits (Limits 3)', () => {
  const LIMITS = [
    { type: 'DAILY', min: '7', max: '365', below: '6', above: '366', rule: 'must be between 7 and 365 when interval_type is DAILY' },
    { type: 'WEEKLY', min: '1', max: '4', below: '0', above: '5', rule: 'must be between 1 and 4 when interval_type is WEEKLY' },
    { type: 'MONTHLY', min: '1', max: '12', below: '0', above: '13', rule: 'must be between 1 and 12 when interval_type is MONTHLY' },
    { type: 'YEARLY', min: '1', max: '1', below: '0', above: '2', rule: 'must be 1 when interval_type is YEARLY' },
  ] as const

  const CODECS = [
    { name: 'create', check: (o: Record<string, unknown>) => violations(SubscriptionCreateRequest, aCreate(o)) },
    { name: 'update', check: (o: Record<string, unknown>) => violations(SubscriptionUpdateRequest, anUpdate(o)) },
  ]
  for (const { name, check } of CODECS) {
    describe(name, () => {
      it.each(LIMITS)('$type accepts $min and $max', ({ type, min, max }) => {
        expect(check({ interval_type: type, interval: min })).toEqual([])
        expect(check({ interval_type: type, interval: max })).toEqual([])
      })
      it.each(LIMITS)('$type rejects $below and $above', ({ type, below, above, rule }) => {
        expect(check({ interval_type: type, interval: below })).toEqual([{ path: 'interval', rule }])
        expect(check({ interval_type: type, interval: above })).toEqual([{ path: 'interval', rule }])
      })
    })
  }

  it('accepts 3 digits only for DAILY (the string(2) declaration contradicts DAILY 365)', () => {
    expect(violations(SubscriptionCreateRequest, aCreate({ interval_type: 'DAILY', interval: '100' }))).toEqual([])
    expect(violations(SubscriptionCreateRequest, aCreate({ interval_type: 'MONTHLY', interval: '001' }))).toEqual([
      { path: 'interval', rule: 'must be at most 2 characters (3 are accepted only when interval_type is DAILY)' },
    ])
    expect(violations(SubscriptionCreateRequest, aCreate({ interval_type: 'DAILY', interval: '1000' }))).toEqual([
      { path: 'interval', rule: 'must be at most 3 characters' },
    ])
  })

  it('rejects a non-digit interval and an unknown interval_type', () => {
    expect(violations(SubscriptionCreateRequest, aCreate({ interval: '1m' }))).toEqual([{ path: 'interval', rule: 'must contain only digits' }])
    expect(violations(SubscriptionCreateRequest, aCreate({ interval_type: 'HOURLY' }))).toEqual([
      { path: 'interval_type', rule: 'must be DAILY, WEEKLY, MONTHLY or YEARLY' },
    ])
  })
})

describe('subscription create: field rules', () => {
  const REJECTED: ReadonlyArray<{ name: string; o: Record<string, unknown>; path: string; rule: string }> = [
    { name: 'total_terms 1', o: { total_terms: '1' }, path: 'total_terms', rule: 'must be at least 2' },
    { name: 'total_terms 11 digits', o: { total_terms: '12345678901' }, path: 'total_terms', rule: 'must be at most 10 characters' },
    { name: 'total_terms not digits', o: { total_terms: 'two' }, path: 'total_terms', rule: 'must contain only digits' },
    { name: 'retry yes', o: { retry: 'yes' }, path: 'retry', rule: 'must be Y or N' },
    { name: 'start_date 2026-02-29', o: { start_date: '2026-02-29' }, path: 'start_date', rule: 'day must be 01 to 28 in 2026-02' },
    { name: 'start_date month 13', o: { start_date: '2026-13-01' }, path: 'start_date', rule: 'month must be 01 to 12' },
    { name: 'start_date with a time', o: { start_date: '2026-03-01 00:00:00' }, path: 'start_date', rule: 'must be yyyy-MM-dd' },
    { name: 'merchant_id of 21 digits', o: { merchant_id: '140000000000000000001' }, path: 'merchant_id', rule: 'must be 18 to 20 digits starting with 14' },
    { name: 'store_id not starting with 14', o: { store_id: '1500000000000000001' }, path: 'store_id', rule: 'must be 18 to 20 digits starting with 14' },
    { name: 'plan_name of 256', o: { plan_name: 'p'.repeat(256) }, path: 'plan_name', rule: 'must be at most 255 characters' },
    { name: 'plan_desc of 257', o: { plan_desc: 'p'.repeat(257) }, path: 'plan_desc', rule: 'must be at most 256 characters' },
    { name: 'merchant_subscribe_id of 65', o: { merchant_subscribe_id: 's'.repeat(65) }, path: 'merchant_subscribe_id', rule: 'must be at most 64 characters' },
    { name: 'billing_amount with 3 decimals', o: { billing_amount: '9.999' }, path: 'billing_amount', rule: 'must have at most two decimals (8,2)' },
    { name: 'billing_amount zero', o: { billing_amount: '0.00' }, path: 'billing_amount', rule: 'must be more than 0' },
    { name: 'billing_currency lower case', o: { billing_currency: 'thb' }, path: 'billing_currency', rule: 'must be THB (the only currency the gateway uses)' },
    { name: 'billing_currency USD', o: { billing_currency: 'USD' }, path: 'billing_currency', rule: 'must be THB (the only currency the gateway uses)' },
    { name: 'customer missing', o: { customer: undefined }, path: 'customer', rule: 'is required' },
    { name: 'redirect_url not a URL', o: { redirect_url: 'merchant.example' }, path: 'redirect_url', rule: 'must be an absolute http or https URL' },
    { name: 'wrong service', o: { service: 'svc.recurring.update' }, path: 'service', rule: 'must be svc.recurring.create' },
    { name: 'unknown field', o: { intervall: '1' }, path: 'intervall', rule: 'is not a field of svc.recurring.create' },
  ]
  it('accepts a full request: total_terms 2, retry N, a leap-day start_date, merchant_id of 18 to 20 digits', () => {
    for (const merchant_id of ['140000000000000001', '1400000000000000001', '14000000000000000001']) {
      const input = aCreate({ merchant_id, store_id: merchant_id, total_terms: '2', retry: 'N', start_date: '2028-02-29', plan_desc: 'ทองคำ', notify_url: 'https://m.example/n', redirect_url: 'https://m.example/r' })
      expect(violations(SubscriptionCreateRequest, input)).toEqual([])
    }
  })
  it.each(REJECTED.map((r) => [r.name, r] as const))('rejects %s', (_, r) => {
    expect(violations(SubscriptionCreateRequest, aCreate(r.o))).toEqual([{ path: r.path, rule: r.rule }])
  })
  it('keeps the amount text and gives satang', () => {
    const r = decoded(SubscriptionCreateRequest, aCreate({ billing_amount: '299.9' }))
    expect(r.billing_amount).toBe('299.9')
    expect(billingAmountOf(r)).toEqual({ _tag: 'Right', right: 29990n })
  })
  it('reports per-field and cross-field violations in one list', () => {
    expect(violations(SubscriptionCreateRequest, aCreate({ interval_type: 'WEEKLY', interval: '9', total_terms: '1', retry: 'X' }))).toEqual([
      { path: 'total_terms', rule: 'must be at least 2' },
      { path: 'retry', rule: 'must be Y or N' },
      { path: 'interval', rule: 'must be between 1 and 4 when interval_type is WEEKLY' },
    ])
  })
})

describe('subscription update and cancel', () => {
  it('update carries no customer, store_id, notify_url or redirect_url', () => {
    expect(violations(SubscriptionUpdateRequest, anUpdate())).toEqual([])
    expect(violations(SubscriptionUpdateRequest, anUpdate({ customer: {}, store_id: MERCHANT_ID, notify_url: 'https://m.example/n', redirect_url: 'https://m.example/r' }))).toEqual([
      { path: 'customer', rule: 'is not a field of svc.recurring.update' },
      { path: 'store_id', rule: 'is not a field of svc.recurring.update' },
      { path: 'notify_url', rule: 'is not a field of svc.recurring.update' },
      { path: 'redirect_url', rule: 'is not a field of svc.recurring.update' },
    ])
  })
  it('update requires the same fields as create', () => {
    expect(violations(SubscriptionUpdateRequest, anUpdate({ plan_name: undefined, retry: undefined }))).toEqual([
      { path: 'plan_name', rule: 'is required' },
      { path: 'retry', rule: 'is required' },
    ])
  })
  it('update: a plan of THB only, and of more than nothing per cycle', () => {
    expect(violations(SubscriptionUpdateRequest, anUpdate({ billing_amount: '0', billing_currency: 'EUR' }))).toEqual([
      { path: 'billing_amount', rule: 'must be more than 0' },
      { path: 'billing_currency', rule: 'must be THB (the only currency the gateway uses)' },
    ])
  })
  it('cancel has four required fields and nothing else', () => {
    const cancel = { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: 'SUB-1' }
    expect(violations(SubscriptionCancelRequest, cancel)).toEqual([])
    expect(violations(SubscriptionCancelRequest, withFields(cancel, { merchant_subscribe_id: undefined, reason: 'x' }))).toEqual([
      { path: 'merchant_subscribe_id', rule: 'is required' },
      { path: 'reason', rule: 'is not a field of svc.recurring.cancel' },
    ])
  })
})

describe('subscription responses', () => {
  const created = {
    merchant_id: MERCHANT_ID,
    merchant_subscribe_id: 'SUB-1',
    recurring_bill_id: '20260101000000000001',
    recurring_bill_status: 'CREATED',
    create_time: NOW,
    link_url: 'https://pay.example/sub/1',
  }
  it('create: all six fields required; status CREATED, ACTIVE or SUSPEND', () => {
    expect(violations(SubscriptionCreateResponse, created)).toEqual([])
    expect(violations(SubscriptionCreateResponse, withFields(created, { create_time: undefined, recurring_bill_status: 'CANCELLED' }))).toEqual([
      { path: 'recurring_bill_status', rule: 'must be CREATED, ACTIVE or SUSPEND' },
      { path: 'create_time', rule: 'is required' },
    ])
  })
  it('update: create_time may be absent (the sample has none)', () => {
    expect(violations(SubscriptionUpdateResponse, withFields(created, { recurring_bill_status: 'ACTIVE', create_time: undefined }))).toEqual([])
    expect(violations(SubscriptionUpdateResponse, withFields(created, { link_url: undefined, recurring_bill_id: 'x'.repeat(21) }))).toEqual([
      { path: 'recurring_bill_id', rule: 'must be at most 20 characters' },
      { path: 'link_url', rule: 'is required' },
    ])
  })
})

describe('subscription create: counts with padding or of the wrong type', () => {
  it('given total_terms with a leading zero or a space, when decoded, then each is named by the one rule it breaks', () => {
    expect(violations(SubscriptionCreateRequest, aCreate({ total_terms: '01' }))).toEqual([{ path: 'total_terms', rule: 'must be at least 2' }])
    expect(violations(SubscriptionCreateRequest, aCreate({ total_terms: '1 ' }))).toEqual([{ path: 'total_terms', rule: 'must contain only digits' }])
    expect(violations(SubscriptionCreateRequest, aCreate({ total_terms: ' 1' }))).toEqual([{ path: 'total_terms', rule: 'must contain only digits' }])
  })
  it('given an interval sent as a number out of the range, when decoded, then only its type is named', () => {
    expect(violations(SubscriptionCreateRequest, aCreate({ interval: 99 }))).toEqual([{ path: 'interval', rule: 'must be a string' }])
  })
})
