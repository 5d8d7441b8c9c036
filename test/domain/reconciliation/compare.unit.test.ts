import { describe, it } from 'vitest'
import { at, sat } from '../support/values.ts'
import { aPaidItem, aPaymentItem, aRecordedRefund, aRefundItem, failed, found, givenPayment, givenRefund, HOUR, notFound, POLICY, refundFound, status } from './builders.ts'

describe('compare(payment, answer): consistent items', () => {
  it('matched: satang and the gateway hold the same final status and amount', () => {
    givenPayment(aPaidItem()).when(found()).then({ _tag: 'Matched' })
  })
  it('matched: a create that failed definitely, and the gateway does not have it', () => {
    givenPayment(aPaymentItem({ phase: 'failed', status: null })).when(notFound).then({ _tag: 'Matched' })
  })
  it('pending: both still PI, before the link expires (plus the stale grace)', () => {
    givenPayment(aPaymentItem(), { ...POLICY, asOf: at(60) }).when(found({ status: status('PI') })).then({ _tag: 'Pending' })
  })
  it('pending: not found yet, within the not-found grace', () => {
    givenPayment(aPaymentItem({ since: at(0) }), { ...POLICY, asOf: at(30) }).when(notFound).then({ _tag: 'Pending' })
  })
})

describe('compare(payment, answer): healing', () => {
  it('heal: a notification never arrived (gateway PS, satang PI)', () => {
    givenPayment(aPaymentItem()).when(found()).then({ _tag: 'Heal', to: 'PS', amountAtStake: 10000n })
  })
  it('heal: satang WP, the gateway failed it (PF)', () => {
    givenPayment(aPaymentItem({ status: status('WP') })).when(found({ status: status('PF') })).then({ _tag: 'Heal', to: 'PF' })
  })
  it('heal: a create whose outcome is unknown, found PS', () => {
    givenPayment(aPaymentItem({ phase: 'outcome_unknown', status: null })).when(found()).then({ _tag: 'Heal', to: 'PS' })
  })
  it('heal: a create whose outcome is unknown, not found past the grace: it never arrived', () => {
    givenPayment(aPaymentItem({ phase: 'outcome_unknown', status: null, since: at(0) })).when(notFound).then({ _tag: 'Heal', to: 'not_found' })
  })
})

describe('compare(payment, answer): break classes', () => {
  it('amount_mismatch: the gateway holds another amount; the difference is at stake', () => {
    givenPayment(aPaidItem()).when(found({ amount: sat(12000n), amountText: '120.00' })).then({ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 2000n })
  })
  it('amount_mismatch wins over a status difference: amounts are never silently overwritten', () => {
    givenPayment(aPaymentItem()).when(found({ amount: sat(1n), amountText: '0.01' })).then({ _tag: 'Break', class: 'amount_mismatch' })
  })
  it('currency_mismatch', () => {
    givenPayment(aPaidItem()).when(found({ currency: 'USD' })).then({ _tag: 'Break', class: 'currency_mismatch', amountAtStake: 10000n })
  })
  it('status_conflict: satang holds PS, the gateway says PI', () => {
    givenPayment(aPaidItem()).when(found({ status: status('PI') })).then({ _tag: 'Break', class: 'status_conflict' })
  })
  it('status_conflict: satang holds PS, the gateway says PF', () => {
    givenPayment(aPaidItem()).when(found({ status: status('PF') })).then({ _tag: 'Break', class: 'status_conflict' })
  })
  it('status_conflict: satang recorded the create as failed, the gateway has the order', () => {
    givenPayment(aPaymentItem({ phase: 'failed', status: null })).when(found()).then({ _tag: 'Break', class: 'status_conflict' })
  })
  it('missing_at_gateway: satang recorded an accepted create, the gateway says not found past the grace', () => {
    givenPayment(aPaymentItem({ since: at(0) }), { ...POLICY, asOf: at(61) }).when(notFound).then({ _tag: 'Break', class: 'missing_at_gateway', amountAtStake: 10000n })
  })
  it('stale_pending: still PI a day past the link’s expiry', () => {
    givenPayment(aPaymentItem(), { ...POLICY, asOf: new Date(at(0).getTime() + 25 * HOUR) }).when(found({ status: status('PI') })).then({ _tag: 'Break', class: 'stale_pending' })
  })
  it('stale_pending counts from the gateway’s due_date when it sends one', () => {
    const asOf = new Date(at(0).getTime() + 25 * HOUR)
    givenPayment(aPaymentItem(), { ...POLICY, asOf }).when(found({ status: status('PI'), dueAt: new Date(asOf.getTime() - HOUR) })).then({ _tag: 'Pending' })
  })
  it('unknown_status: a code no status table knows', () => {
    givenPayment(aPaidItem()).when(found({ status: status('ZZ') })).then({ _tag: 'Break', class: 'unknown_status' })
  })
  it('refund_exceeds_payment: refunds recorded above what the order paid', () => {
    givenPayment(aPaidItem({ refunded: 15000n, refundIds: ['R-1', 'R-2'] })).when(found()).then({ _tag: 'Break', class: 'refund_exceeds_payment', amountAtStake: 5000n })
  })
  it('query_failed: no answer after the retries: unchecked, never assumed matched', () => {
    givenPayment(aPaidItem()).when(failed).then({ _tag: 'Unchecked', amountAtStake: 10000n })
  })
})

describe('compare(refund, answer)', () => {
  it('matched: RS on both sides with the same amount', () => {
    givenRefund(aRecordedRefund()).when(refundFound()).then({ _tag: 'Matched' })
  })
  it('heal: a refund RS satang never heard of (tracked, no notification)', () => {
    givenRefund(aRefundItem()).when(refundFound()).then({ _tag: 'Heal', to: 'RS', amountAtStake: 4000n })
  })
  it('pending: tracked, the gateway does not know it yet', () => {
    givenRefund(aRefundItem(), { ...POLICY, asOf: at(20) }).when(notFound).then({ _tag: 'Pending' })
  })
  it('stale_pending: tracked for longer than the stale grace and never made at the gateway', () => {
    givenRefund(aRefundItem()).when(notFound).then({ _tag: 'Break', class: 'stale_pending' })
  })
  it('amount_mismatch', () => {
    givenRefund(aRecordedRefund()).when(refundFound({ amount: sat(5000n), amountText: '50.00' })).then({ _tag: 'Break', class: 'amount_mismatch', amountAtStake: 1000n })
  })
  it('currency_mismatch', () => {
    givenRefund(aRecordedRefund()).when(refundFound({ currency: 'USD' })).then({ _tag: 'Break', class: 'currency_mismatch' })
  })
  it('status_conflict: recorded RS, the gateway says another final status', () => {
    givenRefund(aRecordedRefund()).when(refundFound({ status: status('RF') })).then({ _tag: 'Break', class: 'status_conflict' })
  })
  it('missing_at_gateway: satang observed the refund, the gateway does not know it', () => {
    givenRefund(aRecordedRefund()).when(notFound).then({ _tag: 'Break', class: 'missing_at_gateway', amountAtStake: 4000n })
  })
  it('missing_internal: a refund of an order satang never created', () => {
    givenRefund(aRefundItem({ orderKnown: false, orderCurrency: null, trackedBy: 'notification' })).when(refundFound()).then({ _tag: 'Break', class: 'missing_internal' })
  })
  it('unknown_status', () => {
    givenRefund(aRefundItem()).when(refundFound({ status: status('QQ') })).then({ _tag: 'Break', class: 'unknown_status' })
  })
  it('query_failed', () => {
    givenRefund(aRecordedRefund()).when(failed).then({ _tag: 'Unchecked', amountAtStake: 4000n })
  })
})
