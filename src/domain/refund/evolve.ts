import type { RefundEvent } from './events/index.ts'
import { initialRefundState, type Refund, type RefundState } from './state.ts'

const withKey = (s: Refund, key: string): ReadonlySet<string> => new Set([...s.observationKeys, key])

const evolveRefund = (s: Refund, e: RefundEvent): Refund => {
  switch (e.type) {
    case 'RefundTracked':
      return s
    case 'RefundStatusObserved': {
      const d = e.data
      const final = s.status !== null && s.status.classification.final
      return {
        ...s,
        refundOrderId: s.refundOrderId ?? d.refundOrderId,
        status: final ? s.status : { code: d.statusCode, classification: d.classification, source: d.source, observedAt: d.observedAt },
        observationKeys: withKey(s, d.observationKey),
        unclassifiedStatuses: d.classification.needsReview ? [...s.unclassifiedStatuses, d.statusCode] : s.unclassifiedStatuses,
      }
    }
    case 'RefundRecorded':
      return s.recorded === null ? { ...s, recorded: { amount: e.data.amount, currency: e.data.currency, recordedAt: e.data.observedAt } } : s
    case 'NotificationReceived':
      return { ...s, observationKeys: withKey(s, e.data.observationKey) }
    case 'DiscrepancyObserved':
      return { ...s, observationKeys: withKey(s, e.data.observationKey), discrepancies: [...s.discrepancies, e.data] }
    case 'CallbackRejected':
      return s
    case 'QueryNotFound':
      return { ...s, observationKeys: withKey(s, e.data.observationKey) }
  }
}

/** The state after `e`; total. */
export const evolve = (s: RefundState, e: RefundEvent): RefundState => {
  if (s._tag === 'Refund') return evolveRefund(s, e)
  if (e.type !== 'RefundTracked') return s
  return {
    _tag: 'Refund',
    merchantId: e.data.merchantId,
    merchantRefundId: e.data.merchantRefundId,
    merchantOrderId: e.data.merchantOrderId,
    trackedBy: e.data.trackedBy,
    trackedAt: e.data.trackedAt,
    refundOrderId: null,
    status: null,
    recorded: null,
    observationKeys: new Set(),
    discrepancies: [],
    unclassifiedStatuses: [],
  }
}

export const fold = (events: ReadonlyArray<RefundEvent>): RefundState => events.reduce(evolve, initialRefundState)
