import type { MismatchField } from '../events/common/discrepancy-observed.ts'
import type { BreakClass } from './break-class.ts'
import { breakOf, matched, pending, type Comparison } from './comparison.ts'

/** What the aggregate did with the observation a `Heal` asked for. */
export type HealOutcome = {
  /** Fields of a DiscrepancyObserved the aggregate recorded instead of applying the observation. */
  readonly mismatches: ReadonlyArray<MismatchField>
  /** The item was already settled (final, or the create failed) before the command: someone else got there first. */
  readonly wasSettled: boolean
  /** The item is settled after the command. */
  readonly isSettled: boolean
}

const classOf = (field: MismatchField): BreakClass => {
  switch (field) {
    case 'refundable_amount':
      return 'refund_exceeds_payment'
    case 'amount':
      return 'amount_mismatch'
    case 'currency':
      return 'currency_mismatch'
    case 'final_status':
    case 'gateway_order_id':
    case 'merchant_id':
    case 'merchant_order_id':
    case 'merchant_refund_id':
    case 'merchant_subscribe_id':
    case 'operation':
    case 'recurring_bill_id':
    case 'refund_order_id':
    case 'service':
      return 'status_conflict'
  }
}

/**
 * The verdict once a heal went through the aggregate, which stays the authority: when it refused the
 * observation (a discrepancy, e.g. a refund above what the order still allows) the item is a break of
 * the matching class; when the item was settled meanwhile it is matched; when the observation settled
 * it, it is healed (the `Heal` itself).
 */
export const settleHeal = (healing: Extract<Comparison, { readonly _tag: 'Heal' }>, o: HealOutcome): Comparison => {
  const [first] = o.mismatches
  if (first !== undefined) {
    const cls = classOf(first)
    return breakOf(cls, healing.amountAtStake, `the aggregate refused the gateway's answer: ${o.mismatches.join(', ')} disagree`)
  }
  if (o.wasSettled) return matched
  return o.isSettled ? healing : pending('the gateway answer was recorded but did not settle the item')
}
