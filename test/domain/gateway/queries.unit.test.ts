import { describe, expect, it } from 'vitest'
import { refundAmountOf } from '../../../src/domain/gateway/amounts.ts'
import { PaymentQueryRequest, PaymentQueryResponse } from '../../../src/domain/gateway/payment-query.ts'
import { RefundQueryRequest, RefundRecord } from '../../../src/domain/gateway/refund-query.ts'
import { decoded, MERCHANT_ID, NOW, ORDER_ID, violations, withFields } from './builders.ts'

const paymentQuery = { version: 'v1', service: 'svc.payment.query', merchant_id: MERCHANT_ID, merchant_order_id: 'ORDER-1' }
const refundQuery = { version: 'v1', service: 'svc.refund.query', merchant_id: MERCHANT_ID, merchant_refund_id: 'REFUND 1/a' }

describe('endpoint 2: payment query', () => {
  it('accepts the four parameters', () => {
    expect(violations(PaymentQueryRequest, paymentQuery)).toEqual([])
  })
  it('rejects every broken parameter and unknown ones, all at once', () => {
    expect(violations(PaymentQueryRequest, { version: 'v1', service: 'svc.refund.query', merchant_id: '14', merchant_order_id: 'ORDER 1', page: '2' })).toEqual([
      { path: 'service', rule: 'must be svc.payment.query' },
      { path: 'merchant_id', rule: 'must be 18 digits starting with 14' },
      { path: 'merchant_order_id', rule: 'must contain only digits, letters, dash and underline' },
      { path: 'page', rule: 'is not a field of svc.payment.query' },
    ])
  })

  const order = {
    merchant_id: MERCHANT_ID,
    merchant_order_id: 'ORDER-1',
    order_id: ORDER_ID,
    order_status: 'PS',
    order_amount: '100.00',
    order_currency: 'THB',
    order_desc: 'Iced coffee',
    create_time: NOW,
  }
  it('response: required fields, optional ones (product_code and payment_method up to 64)', () => {
    expect(violations(PaymentQueryResponse, order)).toEqual([])
    const full = { ...order, product_code: 'P'.repeat(64), payment_method: 'M'.repeat(64), customer: { full_name: 'S' }, products: [{ name: 'Coffee' }], complete_time: '2026-01-01 10:05:00' }
    expect(violations(PaymentQueryResponse, full)).toEqual([])
    expect(violations(PaymentQueryResponse, { ...full, product_code: 'P'.repeat(65) })).toEqual([{ path: 'product_code', rule: 'must be at most 64 characters' }])
  })
  it('response: reports missing required fields', () => {
    expect(violations(PaymentQueryResponse, withFields(order, { order_desc: undefined, create_time: undefined, order_status: undefined }))).toEqual([
      { path: 'order_status', rule: 'is required' },
      { path: 'order_desc', rule: 'is required' },
      { path: 'create_time', rule: 'is required (order_create_time is accepted in its place)' },
    ])
  })
  it('response: accepts order_create_time (wallet_a offline) and null optional fields', () => {
    expect(violations(PaymentQueryResponse, withFields(order, { create_time: undefined, order_create_time: NOW, complete_time: null, customer: null }))).toEqual([])
  })
})

describe('endpoint 3: refund query', () => {
  it('accepts the four parameters (merchant_refund_id has no character set)', () => {
    expect(violations(RefundQueryRequest, refundQuery)).toEqual([])
  })
  it('rejects a missing or too long merchant_refund_id', () => {
    expect(violations(RefundQueryRequest, withFields(refundQuery, { merchant_refund_id: undefined }))).toEqual([{ path: 'merchant_refund_id', rule: 'is required' }])
    expect(violations(RefundQueryRequest, withFields(refundQuery, { merchant_refund_id: 'r'.repeat(65) }))).toEqual([
      { path: 'merchant_refund_id', rule: 'must be at most 64 characters' },
    ])
  })

  const refund = {
    merchant_id: MERCHANT_ID,
    merchant_refund_id: 'REFUND-1',
    merchant_order_id: 'ORDER-1',
    order_id: ORDER_ID,
    refund_order_id: '202601020000000001',
    refund_amount: '40.5',
    refund_currency: 'THB',
    refund_status: 'RS',
    create_time: NOW,
  }
  it('Refund record: required and optional fields', () => {
    expect(violations(RefundRecord, refund)).toEqual([])
    expect(violations(RefundRecord, { ...refund, refund_reason: 'damaged', notify_url: 'https://m.example/r', complete_time: NOW })).toEqual([])
    expect(refundAmountOf(decoded(RefundRecord, refund))).toEqual({ _tag: 'Right', right: 4050n })
  })
  it('Refund record: every missing required field and broken optional one', () => {
    expect(violations(RefundRecord, withFields(refund, { refund_order_id: undefined, refund_status: 'R', refund_reason: 'r'.repeat(257), complete_time: '2026-01-01' }))).toEqual([
      { path: 'refund_order_id', rule: 'is required' },
      { path: 'refund_status', rule: 'must be a 2-character status code such as WP or PS' },
      { path: 'refund_reason', rule: 'must be at most 256 characters' },
      { path: 'complete_time', rule: 'must be yyyy-MM-dd HH:mm:ss (Asia/Bangkok)' },
    ])
  })
})
