import { redactPayerData } from '../../../src/domain/events/redaction.ts'
import { eventDefinitions, type DomainEvent } from '../../../src/domain/events/registry.ts'
import { classifyPaymentStatus, DEFAULT_PAYMENT_STATUS_TABLE, extendStatusTable, type StatusTable } from '../../../src/domain/gateway/statuses.ts'
import { orderStreamName, paymentObservationKey } from '../../../src/domain/order/stream.ts'
import { refundStreamName } from '../../../src/domain/refund/stream.ts'
import { subscriptionStreamName } from '../../../src/domain/subscription/stream.ts'
import { at, MERCHANT_ID, sat, T0 } from '../support/values.ts'

/** Events of the ledger tests: orders, refunds and subscription charges of one merchant, by id. */

const extended = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { PF: { meaning: 'failed', outcome: 'failed' } })
/** The default table plus PF = failed (final). ZZ stays unknown (non-final, flagged). */
export const STATUS_TABLE: StatusTable = extended._tag === 'Right' ? extended.right : DEFAULT_PAYMENT_STATUS_TABLE

export const orderStream = (id: string): string => orderStreamName(MERCHANT_ID, id)
export const refundStream = (id: string): string => refundStreamName(MERCHANT_ID, id)
export const subscriptionStream = (id: string): string => subscriptionStreamName(MERCHANT_ID, id)

export const orderCreated = (id: string, o: { amount?: bigint; service?: string; currency?: string; createdAt?: Date } = {}): DomainEvent =>
  eventDefinitions.OrderCreated.make({
    merchantId: MERCHANT_ID,
    storeId: null,
    merchantOrderId: id,
    operation: 'direct',
    service: o.service ?? 'svc.thaiqr.pay',
    paymentMethod: null,
    productCode: null,
    amount: sat(o.amount ?? 10000n),
    currency: o.currency ?? 'THB',
    orderDesc: 'Iced coffee',
    merchantUrls: { notifyUrl: null, redirectUrl: null, cancelUrl: null },
    createdAt: o.createdAt ?? T0,
  })

export const paymentRequested = (): DomainEvent =>
  eventDefinitions.PaymentRequested.make({ operation: 'direct', service: 'svc.thaiqr.pay', request: redactPayerData({}), requestedAt: at(1) })

export const accepted = (id: string, o: { status?: string; amount?: bigint; receivedAt?: Date } = {}): DomainEvent =>
  eventDefinitions.PaymentRequestAccepted.make({
    gatewayOrderId: `G-${id}`,
    statusCode: o.status ?? 'WP',
    classification: classifyPaymentStatus(STATUS_TABLE, o.status ?? 'WP'),
    amount: sat(o.amount ?? 10000n),
    currency: 'THB',
    createTime: at(1),
    linkUrl: null,
    traceId: 'trace',
    response: redactPayerData({}),
    receivedAt: o.receivedAt ?? at(1),
  })

export const observed = (
  id: string,
  status: string,
  o: { source?: 'notification' | 'query'; amount?: bigint; observedAt?: Date; completeTime?: Date | null; nonce?: string } = {},
): DomainEvent => {
  const source = o.source ?? 'notification'
  return eventDefinitions.StatusObserved.make({
    merchantId: MERCHANT_ID,
    merchantOrderId: id,
    gatewayOrderId: `G-${id}`,
    statusCode: status,
    classification: classifyPaymentStatus(STATUS_TABLE, status),
    amount: sat(o.amount ?? 10000n),
    currency: 'THB',
    completeTime: o.completeTime ?? null,
    source,
    observedAt: o.observedAt ?? at(5),
    observationKey: `${paymentObservationKey(source, { merchant_id: MERCHANT_ID, merchant_order_id: id, order_id: `G-${id}`, order_status: status })}${o.nonce ?? ''}`,
    traceId: null,
  })
}

export const redirect = (id: string, status: string): DomainEvent =>
  eventDefinitions.RedirectReceived.make({
    kind: 'CHECKOUT',
    status,
    receivedAt: at(4),
    payload: redactPayerData({}),
    observationKey: paymentObservationKey('redirect', { merchant_id: MERCHANT_ID, merchant_order_id: id, order_id: `G-${id}`, order_status: status }),
  })

export const refundRecorded = (refundId: string, orderId: string, amount: bigint, o: { observedAt?: Date; completeTime?: Date | null; currency?: string } = {}): DomainEvent =>
  eventDefinitions.RefundRecorded.make({
    merchantId: MERCHANT_ID,
    merchantRefundId: refundId,
    merchantOrderId: orderId,
    refundOrderId: `RG-${refundId}`,
    amount: sat(amount),
    currency: o.currency ?? 'THB',
    completeTime: o.completeTime ?? null,
    source: 'notification',
    observedAt: o.observedAt ?? at(30),
    observationKey: `refund-${refundId}`,
  })

export const charged = (billingDate: string, amount: bigint, o: { observedAt?: Date; currency?: string } = {}): DomainEvent =>
  eventDefinitions.SubscriptionCharged.make({
    recurringBillId: 'RB-1',
    observationKey: `charge-${billingDate}`,
    notificationType: 'Recurring_Deducted',
    billingDate,
    amount: sat(amount),
    currency: o.currency ?? 'THB',
    amountReported: true,
    observedAt: o.observedAt ?? at(60),
  })
