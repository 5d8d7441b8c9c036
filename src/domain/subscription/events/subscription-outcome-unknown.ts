import * as t from 'io-ts'
import { Instant, Integer, nullable, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { OutcomeUnknownReason } from '../../events/request-outcome.ts'
import { SubscriptionOperation } from './subscription-requested.ts'

/**
 * A subscription request may or may not have taken effect. A create is never sent again: the spec has
 * no subscription query, so a verified callback about the subscription resolves it. An update or a
 * cancel may be requested again (both are idempotent at the gateway).
 */
const V1 = t.strict(
  {
    requestSeq: PositiveInt,
    operation: SubscriptionOperation,
    reason: OutcomeUnknownReason,
    httpStatus: nullable(Integer),
    traceId: nullable(t.string),
    since: Instant,
  },
  'SubscriptionOutcomeUnknownV1',
)

export const subscriptionOutcomeUnknown = defineEvent('SubscriptionOutcomeUnknown', { 1: V1 })
export type SubscriptionOutcomeUnknownData = t.TypeOf<typeof V1>
export type SubscriptionOutcomeUnknown = DomainEventOf<'SubscriptionOutcomeUnknown', SubscriptionOutcomeUnknownData>
