import * as t from 'io-ts'
import { SubscriptionStatus } from '../../gateway/statuses.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, nullable, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RedactedPayload } from '../../events/redaction.ts'

/**
 * The gateway created the subscription: its create answer (`api_response`), or — when that answer was
 * lost — a verified callback about it (`notification`; the spec has no subscription query).
 */
const V1 = t.strict(
  {
    requestSeq: PositiveInt,
    recurringBillId: t.string,
    gatewayStatus: SubscriptionStatus,
    linkUrl: nullable(t.string),
    createTime: nullable(Instant),
    traceId: nullable(t.string),
    resolvedBy: oneOf('resolvedBy', ['api_response', 'notification']),
    response: nullable(RedactedPayload),
    receivedAt: Instant,
  },
  'SubscriptionCreatedV1',
)

export const subscriptionCreated = defineEvent('SubscriptionCreated', { 1: V1 })
export type SubscriptionCreatedData = t.TypeOf<typeof V1>
export type SubscriptionCreated = DomainEventOf<'SubscriptionCreated', SubscriptionCreatedData>
