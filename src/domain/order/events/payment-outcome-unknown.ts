import * as t from 'io-ts'
import { Instant, Integer, nullable } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { OutcomeUnknownReason } from '../../events/request-outcome.ts'

/**
 * The create may or may not have reached the gateway. It is never sent again: a payment query
 * resolves it (a StatusObserved from the query, or PaymentRequestFailed `not_found_by_query`).
 */
const V1 = t.strict(
  { reason: OutcomeUnknownReason, httpStatus: nullable(Integer), traceId: nullable(t.string), since: Instant },
  'PaymentOutcomeUnknownV1',
)

export const paymentOutcomeUnknown = defineEvent('PaymentOutcomeUnknown', { 1: V1 })
export type PaymentOutcomeUnknownData = t.TypeOf<typeof V1>
export type PaymentOutcomeUnknown = DomainEventOf<'PaymentOutcomeUnknown', PaymentOutcomeUnknownData>
