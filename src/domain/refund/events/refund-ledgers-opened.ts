import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * The merchant's refundable ledgers are open: every refund recorded before them was carried over
 * (`RefundAmountReserved`, basis `carried_over`) into its order's ledger. Kept once per merchant in
 * `refundable-opened-<merchant_id>`; until it exists no refund is decided.
 */
const V1 = t.strict({ merchantId: t.string, refundsCarried: t.number, ordersCarried: t.number, openedAt: Instant }, 'RefundLedgersOpenedV1')

export const refundLedgersOpened = defineEvent('RefundLedgersOpened', { 1: V1 })
export type RefundLedgersOpenedData = t.TypeOf<typeof V1>
export type RefundLedgersOpened = DomainEventOf<'RefundLedgersOpened', RefundLedgersOpenedData>
