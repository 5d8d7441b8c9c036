import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { JsonObject } from '../../application/ports/event-store.ts'
import { Instant, nullable, StatusClassificationCodec } from '../../domain/events/codecs.ts'
import { discrepancyObserved } from '../../domain/events/common/discrepancy-observed.ts'
import { OutcomeUnknownReason, RequestFailureReason } from '../../domain/events/request-outcome.ts'
import { describeErrors, keepEventData, KeptEventData, readKeptEventData } from '../kept-state.ts'
import { orderCreated } from '../../domain/order/events/order-created.ts'
import { initialOrderState, type OrderState, type PaymentRequestPhase } from '../../domain/order/state.ts'

/*
 * The order aggregate's state as JSON, so that a projection can keep it between batches and evolve it
 * with the domain's own `evolve`: the read model then agrees with the aggregate by construction.
 * `observationKeys` is not kept: it only serves `decide` (deduplication of new facts), never a read
 * model, and it would grow with every observation. A decoded state carries an empty set.
 */

const embedded = readKeptEventData('order state')

const RequestPhase = t.union([
  t.strict({ phase: t.literal('not_requested') }),
  t.strict({ phase: t.literal('requested'), requestedAt: Instant }),
  t.strict({ phase: t.literal('accepted'), acceptedAt: Instant, linkUrl: nullable(t.string) }),
  t.strict({ phase: t.literal('failed'), reason: RequestFailureReason, failedAt: Instant }),
  t.strict({ phase: t.literal('outcome_unknown'), reason: OutcomeUnknownReason, since: Instant }),
  t.strict({ phase: t.literal('resolved_by_observation'), resolvedAt: Instant }),
])

const CurrentStatus = t.strict({
  code: t.string,
  classification: StatusClassificationCodec,
  source: t.union([t.literal('api_response'), t.literal('notification'), t.literal('query')]),
  observedAt: Instant,
})

const Stored = t.strict({
  order: KeptEventData,
  request: RequestPhase,
  gatewayOrderId: nullable(t.string),
  status: nullable(CurrentStatus),
  redirectStatus: nullable(t.string),
  discrepancies: t.array(KeptEventData),
  unclassifiedStatuses: t.array(t.string),
})

/** The state as JSON; `null` for an order stream without OrderCreated. */
export const encodeOrderState = (s: OrderState): JsonObject | null => {
  if (s._tag === 'NoOrder') return null
  const request: PaymentRequestPhase = s.request
  return Stored.encode({
    order: keepEventData(orderCreated, s.order),
    request,
    gatewayOrderId: s.gatewayOrderId,
    status: s.status,
    redirectStatus: s.redirectStatus,
    discrepancies: s.discrepancies.map((d) => keepEventData(discrepancyObserved, d)),
    unclassifiedStatuses: [...s.unclassifiedStatuses],
  }) as unknown as JsonObject
}

/** The state back from `encodeOrderState`'s JSON (`null` → no order). Throws on anything else: a projection stops on it. */
export const decodeOrderState = (json: unknown): OrderState => {
  if (json === null || json === undefined) return initialOrderState
  const decoded = Stored.decode(json)
  if (E.isLeft(decoded)) throw new Error(`order state does not decode: ${describeErrors(decoded.left)}`)
  const s = decoded.right
  return {
    _tag: 'Order',
    order: embedded(orderCreated)(s.order),
    request: s.request,
    gatewayOrderId: s.gatewayOrderId,
    status: s.status,
    redirectStatus: s.redirectStatus,
    observationKeys: new Set(),
    discrepancies: s.discrepancies.map(embedded(discrepancyObserved)),
    unclassifiedStatuses: s.unclassifiedStatuses,
  }
}
