import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, Integer } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import { keyOf } from '../natural-key.ts'

/**
 * A payment or refund query answered "not found" (one of the configured not-found codes): the evidence a
 * reconciliation verdict rests on when the gateway does not know an item satang has. It changes no
 * status; the same answer again is the same fact (recorded once).
 */
const V1 = t.strict(
  {
    kind: oneOf('QueryKind', ['payment', 'refund']),
    code: Integer,
    message: t.string,
    traceId: t.string,
    observationKey: t.string,
    observedAt: Instant,
  },
  'QueryNotFoundV1',
)

export const queryNotFound = defineEvent('QueryNotFound', { 1: V1 })
export type QueryNotFoundData = t.TypeOf<typeof V1>
export type QueryNotFound = DomainEventOf<'QueryNotFound', QueryNotFoundData>

/** The natural key of a not-found answer about one item: source, ids, the code. */
export const notFoundObservationKey = (kind: 'payment' | 'refund', merchantId: string, id: string, code: number): string => keyOf('query', kind, merchantId, id, 'not_found', String(code))
