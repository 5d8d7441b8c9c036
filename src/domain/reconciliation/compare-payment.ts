import type { NotFound, PaymentAnswer, PaymentRecordAnswer } from './answer.ts'
import { absDiff, amountIn, breakOf, elapsed, gatewayAmount, heal, matched, pending, unchecked, type ComparePolicy, type Comparison } from './comparison.ts'
import type { PaymentItem } from './item.ts'

/** Whether satang holds a final status the status table knows. */
const finalIn = (item: PaymentItem): boolean => item.status !== null && item.status.final

/** The create never took effect as far as satang knows: nothing was sent, or it failed definitely. */
const notAtGatewayForSatang = (item: PaymentItem): boolean => item.status === null && (item.phase === 'not_requested' || item.phase === 'failed')

const awaitingOutcome = (item: PaymentItem): boolean => item.status === null && (item.phase === 'requested' || item.phase === 'outcome_unknown')

const notFound = (item: PaymentItem, answer: NotFound, policy: ComparePolicy): Comparison => {
  if (notAtGatewayForSatang(item)) return matched
  const past = elapsed(item.since, policy.asOf, policy.notFoundGraceMs)
  if (awaitingOutcome(item)) return past ? heal('not_found', 0n) : pending('the gateway does not know the order yet; its create may still be in flight')
  return past
    ? breakOf('missing_at_gateway', item.amount, `satang recorded the order as accepted; the gateway answers ${String(answer.code)} ${answer.message}`)
    : pending('the gateway does not know the order yet (within the not-found grace)')
}

/** Refunds recorded above what the order paid (two refunds decided at the same moment can both pass). */
const refundsWithin = (item: PaymentItem): Comparison => {
  const paid = item.status !== null && item.status.final && item.status.outcome === 'succeeded' ? item.amount : 0n
  return item.refunded > paid
    ? breakOf('refund_exceeds_payment', item.refunded - paid, `refunds ${item.refundIds.join(', ')} total ${amountIn(item.refunded, item.currency)}; the order paid ${amountIn(paid, item.currency)}`)
    : matched
}

const found = (item: PaymentItem, answer: PaymentRecordAnswer, policy: ComparePolicy): Comparison => {
  if (item.status === null && item.phase === 'failed') {
    return breakOf('status_conflict', answer.amount ?? item.amount, `satang recorded the create as failed; the gateway has the order with status ${answer.status.code}`)
  }
  if (answer.currency !== item.currency) return breakOf('currency_mismatch', item.amount, `satang recorded ${item.currency}; the gateway answers ${answer.currency}`)
  if (answer.amount === null || answer.amount !== item.amount) {
    return breakOf('amount_mismatch', answer.amount === null ? item.amount : absDiff(answer.amount, item.amount), `satang recorded ${amountIn(item.amount, item.currency)}; the gateway answers ${gatewayAmount(answer.amount, answer.amountText, answer.currency)}`)
  }
  if (!answer.status.known) return breakOf('unknown_status', item.amount, `the gateway reports status ${answer.status.code}, which no status table knows`)
  if (item.status !== null && finalIn(item)) {
    return answer.status.code === item.status.code
      ? refundsWithin(item)
      : breakOf('status_conflict', item.amount, `satang holds the final status ${item.status.code}; the gateway says ${answer.status.code}`)
  }
  if (answer.status.final) return heal(answer.status.code, item.amount)
  const expiry = answer.dueAt ?? item.createdAt
  return elapsed(expiry, policy.asOf, policy.stalePendingMs)
    ? breakOf('stale_pending', item.amount, `still ${answer.status.code} at the gateway since ${expiry.toISOString()}`)
    : pending(`still ${answer.status.code} at the gateway`)
}

/** Compares an order with the gateway's payment query answer. Pure; total. */
export const comparePayment = (item: PaymentItem, answer: PaymentAnswer, policy: ComparePolicy): Comparison => {
  switch (answer._tag) {
    case 'Failed':
      return unchecked(answer.reason, item.amount)
    case 'NotFound':
      return notFound(item, answer, policy)
    case 'Found':
      return found(item, answer, policy)
  }
}
