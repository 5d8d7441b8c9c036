import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { refundAmountReserved, type RefundAmountReserved } from '../../../src/domain/refund/events/refund-amount-reserved.ts'
import { refundLedgersOpened } from '../../../src/domain/refund/events/refund-ledgers-opened.ts'
import {
  emptyRefundLedger,
  evolveRefundLedger,
  parseRefundableStreamName,
  refundableStreamName,
  refundLedgerNaturalKey,
  refundLedgersOpenedStreamName,
  reservedByOthers,
} from '../../../src/domain/refund/ledger.ts'
import { MERCHANT_ID, sat, T0 } from '../support/values.ts'

const reserved = (merchantRefundId: string, amount: bigint): RefundAmountReserved =>
  refundAmountReserved.make({
    merchantId: MERCHANT_ID,
    merchantOrderId: 'ORD-1',
    merchantRefundId,
    amount: sat(amount),
    currency: 'THB',
    basis: 'decided',
    source: 'query',
    reservedAt: T0,
  })

describe("an order's refundable ledger", () => {
  it('stream names: the ledger of one order, and where the merchant opened its ledgers', () => {
    expect(refundableStreamName(MERCHANT_ID, 'ORD-1')).toBe(`refundable-${MERCHANT_ID}-ORD-1`)
    expect(refundLedgersOpenedStreamName(MERCHANT_ID)).toBe(`refundable-opened-${MERCHANT_ID}`)
  })

  it('parses a ledger stream name back, an id with dashes and line breaks included; anything else is not one', () => {
    expect(parseRefundableStreamName(`refundable-${MERCHANT_ID}-ORD-1-a\nb`)).toEqual({ merchantId: MERCHANT_ID, merchantOrderId: 'ORD-1-a\nb' })
    expect(parseRefundableStreamName(`refundable-${MERCHANT_ID}-`)).toBeNull()
    expect(parseRefundableStreamName(`refundable-opened-${MERCHANT_ID}`)).toBeNull()
    expect(parseRefundableStreamName(`order-${MERCHANT_ID}-ORD-1`)).toBeNull()
    expect(parseRefundableStreamName(`refundable-12-ORD-1`)).toBeNull()
  })

  it('round-trips any merchant id and order id', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^14\d{16,18}$/), fc.string({ minLength: 1 }), (merchantId, merchantOrderId) => {
        expect(parseRefundableStreamName(refundableStreamName(merchantId, merchantOrderId))).toEqual({ merchantId, merchantOrderId })
      }),
    )
  })

  it('natural keys: one reservation per refund on a ledger; the opening once per merchant', () => {
    const stream = refundableStreamName(MERCHANT_ID, 'ORD-1')
    expect(refundLedgerNaturalKey(stream, reserved('RF-1', 100n))).toBe(`refundable-${MERCHANT_ID}-ORD-1:RefundAmountReserved:RF-1`)
    expect(refundLedgerNaturalKey(stream, reserved('RF-1', 900n))).toBe(refundLedgerNaturalKey(stream, reserved('RF-1', 100n)))
    expect(refundLedgerNaturalKey(stream, reserved('RF-2', 100n))).not.toBe(refundLedgerNaturalKey(stream, reserved('RF-1', 100n)))
    const opened = refundLedgersOpened.make({ merchantId: MERCHANT_ID, refundsCarried: 3, ordersCarried: 2, openedAt: T0 })
    expect(refundLedgerNaturalKey(refundLedgersOpenedStreamName(MERCHANT_ID), opened)).toBe(`refundable-opened-${MERCHANT_ID}:RefundLedgersOpened`)
  })

  it("a refund's first reservation stands; what the other refunds took back excludes the one asked about", () => {
    const l = [reserved('RF-1', 1000n), reserved('RF-2', 250n), reserved('RF-1', 9999n), reserved('RF-3', 5n)].reduce(evolveRefundLedger, emptyRefundLedger)
    expect([...l.reserved]).toEqual([
      ['RF-1', 1000n],
      ['RF-2', 250n],
      ['RF-3', 5n],
    ])
    expect(reservedByOthers(l, 'RF-1')).toBe(255n)
    expect(reservedByOthers(l, 'RF-2')).toBe(1005n)
    expect(reservedByOthers(l, 'RF-9')).toBe(1255n)
    expect(reservedByOthers(emptyRefundLedger, 'RF-1')).toBe(0n)
    expect(emptyRefundLedger.reserved.size).toBe(0)
  })

  it('a reservation leaves the ledger it was given as it was', () => {
    const before = evolveRefundLedger(emptyRefundLedger, reserved('RF-1', 10n))
    const after = evolveRefundLedger(before, reserved('RF-2', 20n))
    expect([...before.reserved]).toEqual([['RF-1', 10n]])
    expect(after).not.toBe(before)
    expect(evolveRefundLedger(after, reserved('RF-2', 30n))).toBe(after)
  })
})
