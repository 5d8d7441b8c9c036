import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Count, Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * The subscription is suspended (`SUSPEND`): 3 consecutive failed charges (Limits 5, with the rules of
 * subscription-schedule.ts). No further charge is expected. `observationKey` is that of the failure.
 */
const V1 = t.strict(
  {
    recurringBillId: t.string,
    observationKey: t.string,
    consecutiveFailures: Count,
    reason: oneOf('reason', ['consecutive_failed_charges']),
    suspendedAt: Instant,
  },
  'SubscriptionSuspendedV1',
)

export const subscriptionSuspended = defineEvent('SubscriptionSuspended', { 1: V1 })
export type SubscriptionSuspendedData = t.TypeOf<typeof V1>
export type SubscriptionSuspended = DomainEventOf<'SubscriptionSuspended', SubscriptionSuspendedData>
