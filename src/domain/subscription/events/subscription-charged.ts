import * as t from 'io-ts'
import { CalendarDateText } from '../../bangkok-time.ts'
import { Instant, nullable, SatangAmount } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * A deduction succeeded (a verified notification of type *_Deducted with status SUCCESS). `amount` is
 * the notification's `billing_amount`, or the plan's when the notification carries none
 * (`amountReported` says which).
 */
const V1 = t.strict(
  {
    recurringBillId: t.string,
    observationKey: t.string,
    notificationType: nullable(t.string),
    billingDate: CalendarDateText,
    amount: SatangAmount,
    currency: t.string,
    amountReported: t.boolean,
    observedAt: Instant,
  },
  'SubscriptionChargedV1',
)

export const subscriptionCharged = defineEvent('SubscriptionCharged', { 1: V1 })
export type SubscriptionChargedData = t.TypeOf<typeof V1>
export type SubscriptionCharged = DomainEventOf<'SubscriptionCharged', SubscriptionChargedData>
