import { describe, expect, it } from 'vitest'
import { CheckoutApplyRequest, CheckoutApplyResponse } from '../../../src/domain/gateway/checkout.ts'
import { MERCHANT_ID, NOW, ORDER_ID, violations, withFields } from './builders.ts'

const aCheckout = (o: Record<string, unknown> = {}) =>
  withFields(
    {
      version: 'v1',
      service: 'svc.checkout.apply',
      merchant_id: MERCHANT_ID,
      merchant_order_id: 'ORDER-1',
      order_amount: '1500',
      order_currency: 'THB',
      order_desc: 'Sneakers',
      customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee' },
    },
    o,
  )

describe('endpoint 4: checkout apply request', () => {
  it('accepts the required fields alone and with every optional one', () => {
    expect(violations(CheckoutApplyRequest, aCheckout())).toEqual([])
    const full = aCheckout({
      store_id: '140000000000000002',
      product_code: 'BANKCARD_PAY_ONLINE',
      payment_method: 'CARD',
      products: [{ name: 'Sneakers', unit_price: '1500.00', quantity: '1' }],
      notify_url: 'https://m.example/n',
      redirect_url: 'https://m.example/r',
      cancel_url: 'https://m.example/c',
      interest_absorb: 'MERCHANT',
      link_account_id: ['LA1', 'LA2'],
    })
    expect(violations(CheckoutApplyRequest, full)).toEqual([])
  })
  it.each([
    ['customer missing', { customer: undefined }, 'customer', 'is required'],
    ['order_desc missing (no order_info quirk here)', { order_desc: undefined, order_info: 'x' }, 'order_desc', 'is required'],
    ['interest_absorb BANK', { interest_absorb: 'BANK' }, 'interest_absorb', 'must be MERCHANT or USER'],
    ['cancel_url not a URL', { cancel_url: 'back' }, 'cancel_url', 'must be an absolute http or https URL'],
    ['link_account_id a string', { link_account_id: 'LA1' }, 'link_account_id', 'must be a list of strings'],
    ['link_account_id element of 19', { link_account_id: ['LA1', 'L'.repeat(19)] }, 'link_account_id.1', 'must be at most 18 characters'],
    ['payment_method of 33', { payment_method: 'M'.repeat(33) }, 'payment_method', 'must be at most 32 characters'],
    ['an unknown field', { order_info: 'x' }, 'order_info', 'is not a field of svc.checkout.apply'],
    ['order_amount zero', { order_amount: '0.00' }, 'order_amount', 'must be more than 0'],
    ['order_currency USD', { order_currency: 'USD' }, 'order_currency', 'must be THB (the only currency the gateway uses)'],
  ] as const)('rejects %s', (_, o, path, rule) => {
    expect(violations(CheckoutApplyRequest, aCheckout(o))).toContainEqual({ path, rule })
  })
})

describe('endpoint 4: checkout apply response', () => {
  const response = {
    merchant_id: MERCHANT_ID,
    merchant_order_id: 'ORDER-1',
    order_id: ORDER_ID,
    order_status: 'PI',
    order_amount: '1500.00',
    order_currency: 'THB',
    create_time: NOW,
    link_url: 'https://pay.example/checkout/1',
  }
  it('accepts the eight required fields', () => {
    expect(violations(CheckoutApplyResponse, response)).toEqual([])
  })
  it('requires link_url', () => {
    expect(violations(CheckoutApplyResponse, withFields(response, { link_url: undefined }))).toEqual([{ path: 'link_url', rule: 'is required' }])
  })
})
