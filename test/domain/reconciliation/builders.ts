import { expect } from 'vitest'
import type { NotFound, PaymentAnswer, PaymentRecordAnswer, QueryFailed, RefundAnswer, RefundRecordAnswer } from '../../../src/domain/reconciliation/answer.ts'
import { compare } from '../../../src/domain/reconciliation/compare.ts'
import type { ComparePolicy, Comparison } from '../../../src/domain/reconciliation/comparison.ts'
import type { PaymentItem, RefundItem, StatusView } from '../../../src/domain/reconciliation/item.ts'
import { at, GATEWAY_ORDER_ID, MERCHANT_ID, sat, T0 } from '../support/values.ts'

/** Builders of items and answers, and the given/when/then idiom of the comparison. */

export const HOUR = 3_600_000

export const POLICY: ComparePolicy = { asOf: at(60 * 24 * 3), notFoundGraceMs: HOUR, stalePendingMs: 24 * HOUR }

export const status = (code: string, o: Partial<StatusView> = {}): StatusView => {
  const final = code === 'PS' || code === 'PF' || code === 'RS' || code === 'RF'
  const known = ['WP', 'PI', 'PS', 'PF', 'RS', 'RF', 'RP'].includes(code)
  return { code, final: final && known, outcome: code === 'PF' || code === 'RF' ? 'failed' : final ? 'succeeded' : 'pending', known, ...o }
}

export const aPaymentItem = (o: Partial<PaymentItem> = {}): PaymentItem => ({
  kind: 'payment',
  merchantId: MERCHANT_ID,
  merchantOrderId: 'ORD-1',
  stream: `order-${MERCHANT_ID}-ORD-1`,
  amount: sat(10000n),
  currency: 'THB',
  phase: 'accepted',
  createdAt: T0,
  since: at(1),
  status: status('PI'),
  statusSource: 'api_response',
  statusObservedAt: at(1),
  gatewayOrderId: GATEWAY_ORDER_ID,
  refunded: 0n,
  refundIds: [],
  ...o,
})

export const aPaidItem = (o: Partial<PaymentItem> = {}): PaymentItem => aPaymentItem({ status: status('PS'), statusSource: 'notification', ...o })

export const found = (o: Partial<PaymentRecordAnswer> = {}): PaymentAnswer => ({
  _tag: 'Found',
  status: status('PS'),
  amount: sat(10000n),
  amountText: '100.00',
  currency: 'THB',
  merchantOrderId: 'ORD-1',
  gatewayOrderId: GATEWAY_ORDER_ID,
  dueAt: null,
  completeTime: at(5),
  traceId: 'trace-1',
  ...o,
})

export const notFound: NotFound = { _tag: 'NotFound', code: 404001, message: 'not found', traceId: 'trace-nf' }
export const failed: QueryFailed = { _tag: 'Failed', reason: 'TransportFailed: timeout after 4 attempts' }

export const aRefundItem = (o: Partial<RefundItem> = {}): RefundItem => ({
  kind: 'refund',
  merchantId: MERCHANT_ID,
  merchantRefundId: 'REF-1',
  merchantOrderId: 'ORD-1',
  stream: `refund-${MERCHANT_ID}-REF-1`,
  trackedAt: at(10),
  trackedBy: 'merchant',
  status: null,
  statusSource: null,
  statusObservedAt: null,
  recorded: null,
  orderKnown: true,
  orderCurrency: 'THB',
  ...o,
})

export const aRecordedRefund = (o: Partial<RefundItem> = {}): RefundItem =>
  aRefundItem({ status: status('RS'), statusSource: 'notification', statusObservedAt: at(20), recorded: { amount: sat(4000n), currency: 'THB' }, ...o })

export const refundFound = (o: Partial<RefundRecordAnswer> = {}): RefundAnswer => ({
  _tag: 'Found',
  status: status('RS'),
  amount: sat(4000n),
  amountText: '40.00',
  currency: 'THB',
  merchantOrderId: 'ORD-1',
  refundOrderId: '202601010000000099',
  traceId: 'trace-r',
  ...o,
})

/** given(item).when(answer).then(verdict): the comparison's test idiom. */
export const givenPayment = (item: PaymentItem, policy: ComparePolicy = POLICY) => ({
  when: (answer: PaymentAnswer) => {
    const verdict = compare({ kind: 'payment', item, answer }, policy)
    return { verdict, then: (expected: Partial<Comparison> & { readonly _tag: Comparison['_tag'] }) => expect(verdict).toMatchObject(expected) }
  },
})

export const givenRefund = (item: RefundItem, policy: ComparePolicy = POLICY) => ({
  when: (answer: RefundAnswer) => {
    const verdict = compare({ kind: 'refund', item, answer }, policy)
    return { verdict, then: (expected: Partial<Comparison> & { readonly _tag: Comparison['_tag'] }) => expect(verdict).toMatchObject(expected) }
  },
})

