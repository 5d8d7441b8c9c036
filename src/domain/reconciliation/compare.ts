import type { PaymentAnswer, RefundAnswer } from './answer.ts'
import { comparePayment } from './compare-payment.ts'
import { compareRefund } from './compare-refund.ts'
import type { ComparePolicy, Comparison } from './comparison.ts'
import type { PaymentItem, RefundItem } from './item.ts'

/** An item with the gateway's answer to its query. */
export type CheckedPair =
  | { readonly kind: 'payment'; readonly item: PaymentItem; readonly answer: PaymentAnswer }
  | { readonly kind: 'refund'; readonly item: RefundItem; readonly answer: RefundAnswer }

/**
 * `compare(item, gatewayAnswer)`: the verdict on one order or refund. Pure and total: every item gets
 * exactly one verdict (matched, pending, heal, unchecked, or one break class).
 */
export const compare = (pair: CheckedPair, policy: ComparePolicy): Comparison => {
  switch (pair.kind) {
    case 'payment':
      return comparePayment(pair.item, pair.answer, policy)
    case 'refund':
      return compareRefund(pair.item, pair.answer, policy)
  }
}
