import * as t from 'io-ts'
import { CalendarDateText } from '../../bangkok-time.ts'
import { Instant, nullable } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** A deduction failed (a verified notification of type *_Deducted with status FAIL). `billingDate` is the attempt's date. */
const V1 = t.strict(
  { recurringBillId: t.string, observationKey: t.string, notificationType: nullable(t.string), billingDate: CalendarDateText, observedAt: Instant },
  'SubscriptionChargeFailedV1',
)

export const subscriptionChargeFailed = defineEvent('SubscriptionChargeFailed', { 1: V1 })
export type SubscriptionChargeFailedData = t.TypeOf<typeof V1>
export type SubscriptionChargeFailed = DomainEventOf<'SubscriptionChargeFailed', SubscriptionChargeFailedData>
