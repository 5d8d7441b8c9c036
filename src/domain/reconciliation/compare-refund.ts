import type { NotFound, RefundAnswer, RefundRecordAnswer } from './answer.ts'
import { absDiff, amountIn, breakOf, elapsed, gatewayAmount, heal, matched, pending, unchecked, type ComparePolicy, type Comparison } from './comparison.ts'
import type { RefundItem } from './item.ts'

const stakeOf = (item: RefundItem, answer?: RefundRecordAnswer): bigint => item.recorded?.amount ?? answer?.amount ?? 0n

const notFound = (item: RefundItem, answer: NotFound, policy: ComparePolicy): Comparison => {
  if (item.status === null && item.recorded === null) {
    // Only tracked: the merchant registered it, the gateway has not heard of it (yet).
    return elapsed(item.trackedAt, policy.asOf, policy.stalePendingMs)
      ? breakOf('stale_pending', 0n, `tracked since ${item.trackedAt.toISOString()}; the gateway answers ${String(answer.code)} ${answer.message}`)
      : pending('tracked; the gateway does not know this refund yet')
  }
  const since = item.statusObservedAt ?? item.trackedAt
  return elapsed(since, policy.asOf, policy.notFoundGraceMs)
    ? breakOf('missing_at_gateway', stakeOf(item), `satang observed the refund; the gateway answers ${String(answer.code)} ${answer.message}`)
    : pending('the gateway does not know the refund yet (within the not-found grace)')
}

const found = (item: RefundItem, answer: RefundRecordAnswer, policy: ComparePolicy): Comparison => {
  const stake = stakeOf(item, answer)
  if (!item.orderKnown) return breakOf('missing_internal', stake, `the gateway has refund ${item.merchantRefundId} of order ${answer.merchantOrderId}, which satang never created`)
  if (answer.merchantOrderId !== item.merchantOrderId) {
    return breakOf('status_conflict', stake, `satang tracks the refund for order ${item.merchantOrderId}; the gateway has it for ${answer.merchantOrderId}`)
  }
  const currency = item.recorded?.currency ?? item.orderCurrency
  if (currency !== null && answer.currency !== currency) return breakOf('currency_mismatch', stake, `satang recorded ${currency}; the gateway answers ${answer.currency}`)
  if (item.recorded !== null && answer.amount !== item.recorded.amount) {
    return breakOf('amount_mismatch', answer.amount === null ? stake : absDiff(answer.amount, item.recorded.amount), `satang recorded ${amountIn(item.recorded.amount, item.recorded.currency)}; the gateway answers ${gatewayAmount(answer.amount, answer.amountText, answer.currency)}`)
  }
  if (!answer.status.known) return breakOf('unknown_status', stake, `the gateway reports refund status ${answer.status.code}, which no status table knows`)
  if (item.status !== null && item.status.final) {
    return answer.status.code === item.status.code ? matched : breakOf('status_conflict', stake, `satang holds the final status ${item.status.code}; the gateway says ${answer.status.code}`)
  }
  if (answer.status.final) return heal(answer.status.code, stake)
  return elapsed(item.trackedAt, policy.asOf, policy.stalePendingMs)
    ? breakOf('stale_pending', stake, `still ${answer.status.code} at the gateway since ${item.trackedAt.toISOString()}`)
    : pending(`still ${answer.status.code} at the gateway`)
}

/** Compares a refund with the gateway's refund query answer. Pure; total. */
export const compareRefund = (item: RefundItem, answer: RefundAnswer, policy: ComparePolicy): Comparison => {
  switch (answer._tag) {
    case 'Failed':
      return unchecked(answer.reason, stakeOf(item))
    case 'NotFound':
      return notFound(item, answer, policy)
    case 'Found':
      return found(item, answer, policy)
  }
}
