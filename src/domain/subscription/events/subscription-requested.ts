import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, nullable, PositiveInt } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { RedactedPayload } from '../../events/redaction.ts'
import { SubscriptionPlan } from '../plan.ts'

export const SubscriptionOperation = oneOf('SubscriptionOperation', ['create', 'update', 'cancel'])
export type SubscriptionOperation = t.TypeOf<typeof SubscriptionOperation>

/** The merchant's own pages for a subscription (satang gives the gateway its own). */
export const SubscriptionMerchantUrls = t.strict({ notifyUrl: nullable(t.string), redirectUrl: nullable(t.string) }, 'SubscriptionMerchantUrls')
export type SubscriptionMerchantUrls = t.TypeOf<typeof SubscriptionMerchantUrls>

/**
 * Recorded before a subscription create, update or cancel is sent (endpoints 6–8). `request` is the
 * wire fields as sent, payer data redacted; `requestSeq` numbers the requests of this subscription
 * (1 is the create). `plan` is the requested plan (null for cancel), `merchantUrls` only on create.
 */
const V1 = t.strict(
  {
    requestSeq: PositiveInt,
    operation: SubscriptionOperation,
    merchantId: t.string,
    merchantSubscribeId: t.string,
    plan: nullable(SubscriptionPlan),
    merchantUrls: nullable(SubscriptionMerchantUrls),
    request: RedactedPayload,
    requestedAt: Instant,
  },
  'SubscriptionRequestedV1',
)

export const subscriptionRequested = defineEvent('SubscriptionRequested', { 1: V1 })
export type SubscriptionRequestedData = t.TypeOf<typeof V1>
export type SubscriptionRequested = DomainEventOf<'SubscriptionRequested', SubscriptionRequestedData>
