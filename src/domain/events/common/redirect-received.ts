import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import { RedactedPayload } from '../redaction.ts'

export const RedirectKind = oneOf('RedirectKind', ['CHECKOUT', 'SUBSCRIPTION'])

/**
 * A redirect form whose signature verified (endpoints 5 and 9). Evidence, not authority: the gateway
 * spec takes the final state from notifications and queries, so this changes no status. `status` is
 * the form's `order_status` (checkout) or `status` (subscription).
 */
const V1 = t.strict(
  { kind: RedirectKind, observationKey: t.string, status: t.string, receivedAt: Instant, payload: RedactedPayload },
  'RedirectReceivedV1',
)

export const redirectReceived = defineEvent('RedirectReceived', { 1: V1 })
export type RedirectReceivedData = t.TypeOf<typeof V1>
export type RedirectReceived = DomainEventOf<'RedirectReceived', RedirectReceivedData>
