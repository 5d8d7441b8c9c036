import * as t from 'io-ts'
import { DiscrepancySource, MismatchField, type DiscrepancyObservedData } from './events/common/discrepancy-observed.ts'
import { nullable } from './events/codecs.ts'
import { oneOf } from './gateway/text-codecs.ts'
import { StatusOutcome, type StatusClassification } from './gateway/statuses.ts'

/*
 * The parts the merchant API's views of a payment, refund and subscription share, as io-ts codecs of
 * their JSON: each view function is typed by its codec, and the OpenAPI document's response schemas are
 * generated from the same codecs (src/adapters/http/openapi.ts), so the two cannot drift apart.
 */

/** An instant as the views print it: ISO-8601 in UTC (`Date#toISOString`). */
export const IsoInstantText = new t.Type<string, string, unknown>('IsoInstantText', t.string.is, t.string.validate, t.identity)

/** An amount as the views print it: baht with two decimals ("250.00"). */
export const BahtText = new t.Type<string, string, unknown>('BahtText', t.string.is, t.string.validate, t.identity)

export const StatusView = t.type(
  {
    code: t.string,
    meaning: t.string,
    outcome: StatusOutcome,
    final: t.boolean,
    source: oneOf('StatusSource', ['api_response', 'notification', 'query']),
    observed_at: IsoInstantText,
  },
  'StatusView',
)
export type StatusView = t.TypeOf<typeof StatusView>

export const statusView = (s: { readonly code: string; readonly classification: StatusClassification; readonly source: StatusView['source']; readonly observedAt: Date }): StatusView => ({
  code: s.code,
  meaning: s.classification.meaning,
  outcome: s.classification.outcome,
  final: s.classification.final,
  source: s.source,
  observed_at: s.observedAt.toISOString(),
})

export const DiscrepancyView = t.type(
  {
    source: DiscrepancySource,
    observed_at: IsoInstantText,
    status_code: nullable(t.string),
    mismatches: t.array(t.type({ field: MismatchField, expected: t.string, observed: t.string }, 'MismatchView')),
  },
  'DiscrepancyView',
)
export type DiscrepancyView = t.TypeOf<typeof DiscrepancyView>

export const discrepancyView = (x: DiscrepancyObservedData): DiscrepancyView => ({
  source: x.source,
  observed_at: x.observedAt.toISOString(),
  status_code: x.statusCode,
  mismatches: x.mismatches.map((m) => ({ field: m.field, expected: m.expected, observed: m.observed })),
})
