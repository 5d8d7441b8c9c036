import * as t from 'io-ts'
import { SubscriptionStatus } from '../../gateway/statuses.ts'
import { Instant, nullable, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RedactedPayload } from '../../events/redaction.ts'
import { SubscriptionPlan } from '../plan.ts'

/** The gateway accepted an update (endpoint 7): `plan` is now the plan, billed from its start date. */
const V1 = t.strict(
  {
    requestSeq: PositiveInt,
    recurringBillId: t.string,
    gatewayStatus: SubscriptionStatus,
    linkUrl: nullable(t.string),
    traceId: t.string,
    plan: SubscriptionPlan,
    response: RedactedPayload,
    receivedAt: Instant,
  },
  'SubscriptionUpdatedV1',
)

export const subscriptionUpdated = defineEvent('SubscriptionUpdated', { 1: V1 })
export type SubscriptionUpdatedData = t.TypeOf<typeof V1>
export type SubscriptionUpdated = DomainEventOf<'SubscriptionUpdated', SubscriptionUpdatedData>
