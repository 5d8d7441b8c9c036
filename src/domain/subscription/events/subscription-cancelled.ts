import * as t from 'io-ts'
import { Instant, nullable, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** The gateway accepted a cancel (endpoint 8, no `data`). The spec names no status for it: satang derives `CANCELLED`. */
const V1 = t.strict({ requestSeq: PositiveInt, traceId: nullable(t.string), cancelledAt: Instant }, 'SubscriptionCancelledV1')

export const subscriptionCancelled = defineEvent('SubscriptionCancelled', { 1: V1 })
export type SubscriptionCancelledData = t.TypeOf<typeof V1>
export type SubscriptionCancelled = DomainEventOf<'SubscriptionCancelled', SubscriptionCancelledData>
