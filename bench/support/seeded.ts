// The bench's seeded identities (merchant, order numbers, amounts) and the event the store figures
// append, without the random order plans of event-log.ts: the load processes that only need these
// (store-load.ts, the notification signer) start without sampling thousands of plans.
import { randomUUID } from 'node:crypto'
import type { EventToAppend } from '../../src/application/ports/event-store.ts'
import { rejectCallback } from '../../src/domain/events/common/callback-rejected.ts'
import { toEventToAppend } from '../../src/domain/events/registry.ts'

export const MERCHANT_ID = '140000000000000001'

/** The 18-character gateway order id of seeded order `n`. */
export const seededGatewayOrderId = (n: number): string => `2026112500${String(n).padStart(8, '0')}`
export const seededOrderId = (n: number): string => `BN-${String(n)}`
export const seededAmountText = (n: number): string => {
  const s = 10_000 + (n % 90_000)
  return `${String(Math.floor(s / 100))}.${String(s % 100).padStart(2, '0')}`
}

/**
 * The event the store figures append: a refused callback (as the gateway's noise is kept), a valid
 * domain event of realistic size that every projection can apply, on streams of the bench's own.
 */
export const noiseEvent = (i: number, sentAt: number): EventToAppend =>
  toEventToAppend(
    rejectCallback({
      callback: 'payment_notification',
      reason: 'bad_signature',
      detail: 'signature did not verify',
      violations: [],
      callbackId: randomUUID(),
      receivedAt: new Date(),
      payload: { notify_type: 'PAYMENT', merchant_id: MERCHANT_ID, merchant_order_id: `NOISE-${String(i)}`, order_id: seededGatewayOrderId(i % 1e8), order_status: 'PS', order_amount: '99.50', order_currency: 'THB', sent_at: sentAt.toFixed(3) },
    }),
    randomUUID(),
    { correlationId: 'bench', causationId: 'bench', recordedAt: new Date().toISOString(), source: 'notification', signature: { verified: false, reason: 'bench' } },
  )
