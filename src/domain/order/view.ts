import type { JsonObject } from '../events/envelope.ts'
import { formatAmount } from '../money.ts'
import type { OrderEvent } from './events/index.ts'
import { isPaid, needsReview, type Order, type PaymentRequestPhase } from './state.ts'

const iso = (d: Date): string => d.toISOString()

const requestView = (r: PaymentRequestPhase): JsonObject => {
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
const gatewayResponseOf = (events: ReadonlyArray<OrderEvent>): JsonObject | null => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]
    if (e?.type === 'PaymentRequestAccepted') return e.data.response
  }
  return null
}

/**
 * A payment as the merchant API shows it, folded from its order stream. `status` is authoritative
 * (create answer, notification or query; a final status never regresses); `redirect_status` is what
 * the last redirect said (evidence only).
 */
export const paymentView = (o: Order, events: ReadonlyArray<OrderEvent>): JsonObject => {
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
    status:
      o.status === null
        ? null
        : {
            code: o.status.code,
            meaning: o.status.classification.meaning,
            outcome: o.status.classification.outcome,
            final: o.status.classification.final,
            source: o.status.source,
            observed_at: iso(o.status.observedAt),
          },
    paid: isPaid(o),
    redirect_status: o.redirectStatus,
    needs_review: needsReview(o),
    unclassified_statuses: [...o.unclassifiedStatuses],
    discrepancies: o.discrepancies.map((x) => ({
      source: x.source,
      observed_at: iso(x.observedAt),
      status_code: x.statusCode,
      mismatches: x.mismatches.map((m) => ({ field: m.field, expected: m.expected, observed: m.observed })),
    })),
    merchant_urls: { notify_url: d.merchantUrls.notifyUrl, redirect_url: d.merchantUrls.redirectUrl, cancel_url: d.merchantUrls.cancelUrl },
  }
}
