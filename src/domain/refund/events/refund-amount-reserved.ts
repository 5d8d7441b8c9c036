import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, ObservationSource, SatangAmount } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * `decided`: the refund's first final, succeeded observation fitted what was still refundable, and the
 * amount was reserved before the refund was recorded. `carried_over`: a refund recorded before the order
 * had a refundable ledger, carried over once when the ledgers were opened.
 */
export const ReservationBasis = oneOf('ReservationBasis', ['decided', 'carried_over'])
export type ReservationBasis = t.TypeOf<typeof ReservationBasis>

/**
 * One refund's amount taken from what its order can still refund, in the order's refundable ledger
 * (`refundable-<merchant_id>-<merchant_order_id>`). Appended with the ledger's expected revision, so
 * two refunds decided at the same moment are decided one after the other. Once per refund.
 */
const V1 = t.strict(
  {
    merchantId: t.string,
    merchantOrderId: t.string,
    merchantRefundId: t.string,
    amount: SatangAmount,
    currency: t.string,
    basis: ReservationBasis,
    source: ObservationSource,
    reservedAt: Instant,
  },
  'RefundAmountReservedV1',
)

export const refundAmountReserved = defineEvent('RefundAmountReserved', { 1: V1 })
export type RefundAmountReservedData = t.TypeOf<typeof V1>
export type RefundAmountReserved = DomainEventOf<'RefundAmountReserved', RefundAmountReservedData>
