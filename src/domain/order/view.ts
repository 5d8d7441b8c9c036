import * as t from 'io-ts'
import { JsonObjectCodec } from '../events/json.ts'
import { nullable } from '../events/codecs.ts'
import { OutcomeUnknownReason, RequestFailureReason } from '../events/request-outcome.ts'
import { formatAmount } from '../money.ts'
import { BahtText, DiscrepancyView, discrepancyView, IsoInstantText, StatusView, statusView } from '../views.ts'
import { OrderOperation } from './events/order-created.ts'
import type { OrderEvent } from './events/index.ts'
import { isPaid, needsReview, type Order, type PaymentRequestPhase } from './state.ts'

/** Where the create request stands (`request` of a payment). */
export const PaymentRequestView = t.union(
  [
    t.type({ phase: t.literal('not_requested') }),
    t.type({ phase: t.literal('requested'), requested_at: IsoInstantText }),
    t.type({ phase: t.literal('accepted'), accepted_at: IsoInstantText }),
    t.type({ phase: t.literal('failed'), reason: RequestFailureReason, failed_at: IsoInstantText }),
    t.type({ phase: t.literal('outcome_unknown'), reason: OutcomeUnknownReason, since: IsoInstantText }),
    t.type({ phase: t.literal('resolved_by_observation'), resolved_at: IsoInstantText }),
  ],
  'PaymentRequestView',
)

/** A payment as the merchant API shows it (the JSON of `paymentView`). */
export const PaymentView = t.type(
  {
    merchant_id: t.string,
    merchant_order_id: t.string,
    operation: OrderOperation,
    service: t.string,
    payment_method: nullable(t.string),
    product_code: nullable(t.string),
    order_amount: BahtText,
    order_currency: t.string,
    order_desc: t.string,
    created_at: IsoInstantText,
    request: PaymentRequestView,
    gateway_order_id: nullable(t.string),
    link_url: nullable(t.string),
    gateway_response: nullable(JsonObjectCodec),
    status: nullable(StatusView),
    paid: t.boolean,
    redirect_status: nullable(t.string),
    needs_review: t.boolean,
    unclassified_statuses: t.array(t.string),
    discrepancies: t.array(DiscrepancyView),
    merchant_urls: t.type({ notify_url: nullable(t.string), redirect_url: nullable(t.string), cancel_url: nullable(t.string) }),
  },
  'PaymentView',
)
export type PaymentView = t.TypeOf<typeof PaymentView>

const iso = (d: Date): string => d.toISOString()

const requestView = (r: PaymentRequestPhase): t.TypeOf<typeof PaymentRequestView> => {
  switch (r.phase) {
    case 'not_requested':
      return { phase: r.phase }
    case 'requested':
      return { phase: r.phase, requested_at: iso(r.requestedAt) }
    case 'accepted':
      return { phase: r.phase, accepted_at: iso(r.acceptedAt) }
    case 'failed':
      return { phase: r.phase, reason: r.reason, failed_at: iso(r.failedAt) }
    case 'outcome_unknown':
      return { phase: r.phase, reason: r.reason, since: iso(r.since) }
    case 'resolved_by_observation':
      return { phase: r.phase, resolved_at: iso(r.resolvedAt) }
  }
}

/** The channel data of the accepted create (link, QR code, SDK parameters), from the stored answer. */
const gatewayResponseOf = (events: ReadonlyArray<OrderEvent>): PaymentView['gateway_response'] => {
  // Stryker disable next-line ArithmeticOperator: starting past the end only reads missing slots first, which the ?. below skips
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]
    // Stryker disable next-line OptionalChaining: i stays within the list, so e is always an event (the ?. is for noUncheckedIndexedAccess)
    if (e?.type === 'PaymentRequestAccepted') return e.data.response
  }
  return null
}

/**
 * A payment as the merchant API shows it, folded from its order stream. `status` is authoritative
 * (create answer, notification or query; a final status never regresses); `redirect_status` is what
 * the last redirect said (evidence only).
 */
export const paymentView = (o: Order, events: ReadonlyArray<OrderEvent>): PaymentView => {
  const d = o.order
  return {
    merchant_id: d.merchantId,
    merchant_order_id: d.merchantOrderId,
    operation: d.operation,
    service: d.service,
    payment_method: d.paymentMethod,
    product_code: d.productCode,
    order_amount: formatAmount(d.amount),
    order_currency: d.currency,
    order_desc: d.orderDesc,
    created_at: iso(d.createdAt),
    request: requestView(o.request),
    gateway_order_id: o.gatewayOrderId,
    link_url: o.request.phase === 'accepted' ? o.request.linkUrl : null,
    gateway_response: gatewayResponseOf(events),
    status: o.status === null ? null : statusView(o.status),
    paid: isPaid(o),
    redirect_status: o.redirectStatus,
    needs_review: needsReview(o),
    unclassified_statuses: [...o.unclassifiedStatuses],
    discrepancies: o.discrepancies.map(discrepancyView),
    merchant_urls: { notify_url: d.merchantUrls.notifyUrl, redirect_url: d.merchantUrls.redirectUrl, cancel_url: d.merchantUrls.cancelUrl },
  }
}
