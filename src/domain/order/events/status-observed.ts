import * as t from 'io-ts'
import { BangkokWallTime, Instant, nullable, ObservationSource, SatangAmount, StatusClassificationCodec } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** What every version observes: the order as the gateway reported it, and how the status table classified its status. */
const core = {
  merchantId: t.string,
  merchantOrderId: t.string,
  gatewayOrderId: t.string,
  statusCode: t.string,
  classification: StatusClassificationCodec,
  amount: SatangAmount,
  currency: t.string,
  /** The natural key: source + gateway ids + status. The same observation twice is one event. */
  observationKey: t.string,
  traceId: nullable(t.string),
}

/** Version 1 wrote times as the gateway does (Bangkok wall time) and only flagged whether a notification was the source. */
const V1 = t.strict({ ...core, completeTime: nullable(BangkokWallTime), notified: t.boolean, observedAt: BangkokWallTime }, 'StatusObservedV1')

/** Version 2 writes ISO-8601 UTC instants and names the source. */
const V2 = t.strict({ ...core, completeTime: nullable(Instant), source: ObservationSource, observedAt: Instant }, 'StatusObservedV2')

const sourceOf = (notified: boolean): ObservationSource => (notified ? 'notification' : 'query')

/**
 * An authoritative observation of a payment's status (a notification whose signature verified, or a
 * payment query). Redirects never produce one: they are evidence (RedirectReceived).
 */
export const statusObserved = defineEvent(
  'StatusObserved',
  { 1: V1, 2: V2 },
  {
    // Times decode to the same instants; only their text changes. `notified` becomes the source it meant.
    1: ({ notified, ...rest }) => ({ ...rest, source: sourceOf(notified) }),
  },
)
export type StatusObservedData = t.TypeOf<typeof V2>
export type StatusObserved = DomainEventOf<'StatusObserved', StatusObservedData>
