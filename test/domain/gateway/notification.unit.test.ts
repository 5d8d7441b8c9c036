import { describe, expect, it } from 'vitest'
import { Notification } from '../../../src/domain/gateway/notification.ts'
import { decoded, MERCHANT_ID, NOW, ORDER_ID, violations, withFields } from './builders.ts'

const signature = { sign_type: 'RSA', sign: 'c2lnbmF0dXJl' }

const payment = {
  notify_type: 'PAYMENT',
  merchant_id: MERCHANT_ID,
  merchant_order_id: 'ORDER-1',
  order_id: ORDER_ID,
  order_status: 'PS',
  order_amount: '100.00',
  order_currency: 'THB',
  ...signature,
}
const refund = {
  notify_type: 'REFUND',
  merchant_id: MERCHANT_ID,
  merchant_refund_id: 'REFUND-1',
  merchant_order_id: 'ORDER-1',
  order_id: ORDER_ID,
  refund_order_id: '202601020000000001',
  refund_amount: '40.00',
  refund_currency: 'THB',
  refund_status: 'RS',
  create_time: NOW,
  ...signature,
}
const subscription = {
  notify_type: 'SUBSCRIPTION',
  merchant_id: MERCHANT_ID,
  merchant_subscribe_id: 'SUB-1',
  recurring_bill_id: '20260101000000000001',
  status: 'SUCCESS',
  type: 'Deducted',
  ...signature,
}

describe('notifications to notify_url (our default payload)', () => {
  it.each([
    ['PAYMENT', payment],
    ['PAYMENT with the other order fields', { ...payment, order_desc: 'Coffee', payment_method: 'THAI_QR', create_time: NOW, complete_time: NOW, customer: { full_name: 'S' } }],
    ['REFUND', refund],
    ['SUBSCRIPTION', subscription],
  ] as const)('accepts %s and keeps it as sent', (_, n) => {
    expect(decoded(Notification, n)).toEqual(n)
  })
  it('checks the fields of the kind named by notify_type', () => {
    expect(violations(Notification, withFields(payment, { order_status: undefined }))).toEqual([{ path: 'order_status', rule: 'is required' }])
    expect(violations(Notification, withFields(refund, { refund_amount: '-1', create_time: undefined }))).toEqual([
      { path: 'refund_amount', rule: 'must not be negative' },
      { path: 'create_time', rule: 'is required' },
    ])
    expect(violations(Notification, withFields(subscription, { status: 'DONE', sign_type: undefined }))).toEqual([
      { path: 'status', rule: 'must be SUCCESS or FAIL' },
      { path: 'sign_type', rule: 'is required' },
    ])
  })
  it('requires a known notify_type', () => {
    expect(violations(Notification, withFields(payment, { notify_type: 'ORDER' }))).toEqual([{ path: 'notify_type', rule: 'must be PAYMENT, REFUND or SUBSCRIPTION' }])
    expect(violations(Notification, withFields(payment, { notify_type: undefined }))).toEqual([{ path: 'notify_type', rule: 'is required' }])
    expect(violations(Notification, 'notify_type=PAYMENT')).toEqual([{ path: '', rule: 'must be an object' }])
  })
  it('encodes each kind back to what was received', () => {
    for (const n of [payment, refund, subscription]) expect(Notification.encode(decoded(Notification, n))).toEqual(n)
  })
  it('given each kind, when encoded, then exactly the fields received come back, no key added', () => {
    for (const n of [payment, refund, subscription]) expect(Notification.encode(decoded(Notification, n))).toStrictEqual(n)
  })
})
