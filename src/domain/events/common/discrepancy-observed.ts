import * as t from 'io-ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, nullable } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'

export const DiscrepancySource = oneOf('DiscrepancySource', ['api_response', 'notification', 'query', 'redirect'])
export type DiscrepancySource = t.TypeOf<typeof DiscrepancySource>

/**
 * What disagreed. Amounts are satang digit strings; `refundable_amount` compares what was still
 * refundable (expected, a maximum) with the refund amount observed; `final_status` a final status
 * already recorded with a different final status observed.
 */
export const MismatchField = oneOf('MismatchField', [
  'merchant_id',
  'operation',
  'service',
  'amount',
  'currency',
  'gateway_order_id',
  'refund_order_id',
  'merchant_order_id',
  'merchant_refund_id',
  'merchant_subscribe_id',
  'recurring_bill_id',
  'final_status',
  'refundable_amount',
])
export type MismatchField = t.TypeOf<typeof MismatchField>

export const Mismatch = t.strict({ field: MismatchField, expected: t.string, observed: t.string }, 'Mismatch')
export type Mismatch = t.TypeOf<typeof Mismatch>

/**
 * An observation that disagrees with what satang knows. It is recorded instead of being applied: the
 * status, charge or refund it reports is NOT applied, and the aggregate is flagged for review.
 */
const V1 = t.strict(
  {
    source: DiscrepancySource,
    observationKey: t.string,
    observedAt: Instant,
    statusCode: nullable(t.string),
    mismatches: t.array(Mismatch),
  },
  'DiscrepancyObservedV1',
)

export const discrepancyObserved = defineEvent('DiscrepancyObserved', { 1: V1 })
export type DiscrepancyObservedData = t.TypeOf<typeof V1>
export type DiscrepancyObserved = DomainEventOf<'DiscrepancyObserved', DiscrepancyObservedData>

/** The mismatches among `checks`: each `[field, expected, observed]` whose two values differ. */
export const mismatchesOf = (checks: ReadonlyArray<readonly [MismatchField, string | null, string | null]>): Array<Mismatch> =>
  checks.flatMap(([field, expected, observed]) =>
    expected !== null && expected !== observed ? [{ field, expected, observed: observed ?? '(absent or unreadable)' }] : [],
  )
