import * as t from 'io-ts'
import { Instant, nullable } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** The payer authorised the subscription on the gateway's page: a verified notification said so (Created, or a first deduction). Charges start. */
const V1 = t.strict(
  { recurringBillId: t.string, observationKey: t.string, notificationType: nullable(t.string), activatedAt: Instant },
  'SubscriptionActivatedV1',
)

export const subscriptionActivated = defineEvent('SubscriptionActivated', { 1: V1 })
export type SubscriptionActivatedData = t.TypeOf<typeof V1>
export type SubscriptionActivated = DomainEventOf<'SubscriptionActivated', SubscriptionActivatedData>
