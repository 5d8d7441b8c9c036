import * as t from 'io-ts'
import { Instant, Integer, nullable, PositiveInt, ViolationCodec } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RequestFailureReason } from '../../events/request-outcome.ts'
import { SubscriptionOperation } from './subscription-requested.ts'

/** A subscription request definitely did not take effect. A failed create is final for this merchant_subscribe_id. */
const V1 = t.strict(
  {
    requestSeq: PositiveInt,
    operation: SubscriptionOperation,
    reason: RequestFailureReason,
    code: nullable(Integer),
    message: nullable(t.string),
    traceId: nullable(t.string),
    violations: t.array(ViolationCodec),
    failedAt: Instant,
  },
  'SubscriptionRequestFailedV1',
)

export const subscriptionRequestFailed = defineEvent('SubscriptionRequestFailed', { 1: V1 })
export type SubscriptionRequestFailedData = t.TypeOf<typeof V1>
export type SubscriptionRequestFailed = DomainEventOf<'SubscriptionRequestFailed', SubscriptionRequestFailedData>
