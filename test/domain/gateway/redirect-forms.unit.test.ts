import { describe, expect, it } from 'vitest'
import { CheckoutRedirectForm, SubscriptionRedirectForm } from '../../../src/domain/gateway/redirect-forms.ts'
import { decoded, MERCHANT_ID, ORDER_ID, violations, withFields } from './builders.ts'

const checkoutForm = {
  merchant_id: MERCHANT_ID,
  merchant_order_id: 'ORDER-1',
  order_id: ORDER_ID,
  order_amount: '1500.00',
  order_status: 'PS',
  order_currency: 'THB',
  sign_type: 'RSA',
  sign: 'c2lnbmF0dXJl',
}

const subscriptionForm = {
  merchant_id: '14000000000000000001',
  merchant_subscribe_id: 'SUB-1',
  recurring_bill_id: '20260101000000000001',
  status: 'SUCCESS',
  billing_amount: '299.00',
  billing_currency: 'THB',
  type: 'Created_Deducted',
  sign_type: 'RSA',
  sign: 'c2lnbmF0dXJl',
}

describe('endpoint 5: checkout redirect form', () => {
  it('accepts the eight fields and keeps unlisted ones (they are signed)', () => {
    const form = { ...checkoutForm, extra_field: 'x' }
    expect(decoded(CheckoutRedirectForm, form)).toEqual(form)
  })
  it('rejects every broken field at once', () => {
    expect(violations(CheckoutRedirectForm, withFields(checkoutForm, { sign_type: 'MD5', sign: undefined, order_amount: '1,500.00', order_id: 'o'.repeat(19) }))).toEqual([
      { path: 'order_id', rule: 'must be at most 18 characters' },
      { path: 'order_amount', rule: 'must be digits with an optional decimal point' },
      { path: 'sign_type', rule: 'must be RSA' },
      { path: 'sign', rule: 'is required' },
    ])
  })
})

describe('endpoint 9: subscription redirect form', () => {
  it('accepts every type, SUCCESS and FAIL, and the optional fields absent or empty', () => {
    for (const type of ['Created', 'Created_Deducted', 'Updated', 'Updated_Deducted', 'Deducted']) {
      expect(violations(SubscriptionRedirectForm, { ...subscriptionForm, type })).toEqual([])
    }
    expect(violations(SubscriptionRedirectForm, { ...subscriptionForm, status: 'FAIL' })).toEqual([])
    expect(violations(SubscriptionRedirectForm, withFields(subscriptionForm, { billing_amount: undefined, billing_currency: '', type: undefined }))).toEqual([])
  })
  it('accepts a 344-character RSA-2048 signature although endpoint 9 declares sign string(256)', () => {
    expect(violations(SubscriptionRedirectForm, { ...subscriptionForm, sign: `${'A'.repeat(342)}==` })).toEqual([])
  })
  it('rejects a wrong status, type, empty sign and merchant id', () => {
    expect(violations(SubscriptionRedirectForm, { ...subscriptionForm, status: 'OK', type: 'Cancelled', sign: '', merchant_id: 'M1' })).toEqual([
      { path: 'merchant_id', rule: 'must be 18 to 20 digits starting with 14' },
      { path: 'status', rule: 'must be SUCCESS or FAIL' },
      { path: 'sign', rule: 'must not be empty' },
      { path: 'type', rule: 'must be Created, Created_Deducted, Updated, Updated_Deducted or Deducted' },
    ])
  })
})
