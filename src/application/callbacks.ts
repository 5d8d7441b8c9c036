import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { eventIdOf } from './event-id.ts'
import type { EventStoreFailure } from './ports/event-store.ts'
import { rejectCallback, type CallbackKind, type CallbackRejection } from '../domain/events/common/callback-rejected.ts'
import type { SignatureResult } from '../domain/events/metadata.ts'
import { keyOf } from '../domain/events/natural-key.ts'
import { toEventToAppend } from '../domain/events/registry.ts'
import { MerchantOrderId, MerchantRefundId, MerchantSubscribeId } from '../domain/gateway/fields.ts'
import { notificationReceived } from '../domain/events/common/notification-received.ts'
import { redactPayerData } from '../domain/events/redaction.ts'
import { PaymentNotification, RefundNotification, SubscriptionNotification } from '../domain/gateway/notification.ts'
import { CheckoutRedirectForm, SubscriptionRedirectForm } from '../domain/gateway/redirect-forms.ts'
import { orderStreamName, paymentObservationKey } from '../domain/order/index.ts'
import { refundStreamName } from '../domain/refund/index.ts'
import { subscriptionStreamName } from '../domain/subscription/index.ts'
import { decodeAll, type Violation } from '../domain/violations.ts'
import { describeHandleError, type HandleError, type Handled } from './command-handler.ts'
import type { Cause, RecordingDeps } from './deps.ts'
import { loadRefundOrderContext } from './refund-context.ts'
import type { CallbackResult } from './results.ts'
import { orderKind, record, refundKind, subscriptionKind, type AggregateKind } from './streams.ts'
import type { DomainEvent } from '../domain/events/registry.ts'

/**
 * The gateway's callbacks: checkout and subscription redirect forms (endpoints 5 and 9) and
 * notifications (payment, refund, subscription). Each is verified with the gateway's public key, then
 * recorded through its aggregate: a verified one as evidence (redirect) or authority (notification);
 * one with a bad signature, or that cannot be decoded, only as CallbackRejected — no state changes.
 * Callbacks that name no known order, refund or subscription of this merchant go to the stream
 * `unmatched-callbacks-<merchant_id>`, so that nothing refused is lost from the audit.
 */

/** One delivery attempt of a callback. */
export type CallbackContext = {
  /** This request's id: keys a refused attempt (each refused attempt is kept once). */
  readonly callbackId: string
  readonly receivedAt: Date
}

export const unmatchedCallbacksStream = (merchantId: string): string => `unmatched-callbacks-${merchantId}`

const signatureOf = (deps: Pick<RecordingDeps, 'gatewayVerifier'>, fields: Readonly<Record<string, unknown>>): SignatureResult => {
  const r = deps.gatewayVerifier.verify(fields)
  return r.valid ? { verified: true } : { verified: false, reason: r.reason }
}

const text = (u: unknown): string | undefined => (typeof u === 'string' && u !== '' ? u : undefined)

export type Callbacks = {
  readonly checkoutRedirect: (fields: unknown, ctx: CallbackContext) => Promise<CallbackResult>
  readonly subscriptionRedirect: (fields: unknown, ctx: CallbackContext) => Promise<CallbackResult>
  readonly notification: (body: unknown, ctx: CallbackContext) => Promise<CallbackResult>
}

export const makeCallbacks = (deps: RecordingDeps): Callbacks => {
  const log = deps.log.child({ component: 'callbacks' })
  const recordOrder = record(deps, orderKind)
  const recordRefund = record(deps, refundKind)
  const recordSubscription = record(deps, subscriptionKind)

  const causeOf = (ctx: CallbackContext): Cause => ({ correlationId: ctx.callbackId, causationId: ctx.callbackId })

  const unavailable = (what: string): CallbackResult => ({ _tag: 'Unavailable', message: `could not record the ${what}` })

  const rejectedResult = (r: CallbackRejection): CallbackResult => ({ _tag: 'Rejected', reason: r.reason, detail: r.detail, violations: r.violations })

  /** A refused callback that names nothing this merchant has: kept in the unmatched stream. */
  const recordUnmatched = async (r: CallbackRejection, signature: SignatureResult): Promise<CallbackResult> => {
    const stream = unmatchedCallbacksStream(deps.merchantId)
    const event: DomainEvent = rejectCallback(r)
    const appended = await deps.store.append(
      stream,
      [
        toEventToAppend(event, eventIdOf(keyOf(stream, 'CallbackRejected', r.callbackId)), {
          correlationId: r.callbackId,
          causationId: r.callbackId,
          recordedAt: deps.now().toISOString(),
          source: r.callback === 'checkout_redirect' || r.callback === 'subscription_redirect' ? 'redirect' : 'notification',
          signature,
        }),
      ],
      'any',
    )()
    if (E.isLeft(appended)) {
      log.error({ stream, err: appended.left._tag === 'EventStoreFailure' ? (appended.left satisfies EventStoreFailure).cause : appended.left }, 'could not record a refused callback')
      return unavailable('refused callback')
    }
    return rejectedResult(r)
  }

  /** The outcome of recording through an aggregate: refused (bad signature), recorded, or a failure. */
  const settle = <S, Ev extends DomainEvent, R extends { readonly _tag: string }>(
    what: string,
    stream: string,
    recorded: E.Either<HandleError<R>, Handled<S, Ev>>,
    notFound: R['_tag'] | undefined,
    redirectTo: (s: S) => string | null,
    statusOf: (s: S) => string | null,
  ): CallbackResult => {
    if (E.isLeft(recorded)) {
      const e = recorded.left
      if (e._tag === 'Rejected' && e.rejection._tag === notFound) return { _tag: 'Unknown', message: `no such ${what}` }
      log.error({ stream, err: describeHandleError(e, (r) => r._tag) }, `could not record a ${what} callback`)
      return unavailable(`${what} callback`)
    }
    const refused = recorded.right.appended.find((x) => x.type === 'CallbackRejected')
    if (refused !== undefined && refused.type === 'CallbackRejected') {
      return { _tag: 'Rejected', reason: refused.data.reason, detail: refused.data.detail, violations: refused.data.violations }
    }
    return { _tag: 'Recorded', redirectTo: redirectTo(recorded.right.state), status: statusOf(recorded.right.state) }
  }

  /** A callback that could not be decoded: CallbackRejected on the stream it names, else unmatched. */
  const refuse = async <C, S, Ev extends DomainEvent, R>(
    kind: AggregateKind<C, S, Ev, R>,
    stream: string | undefined,
    rejection: CallbackRejection,
    signature: SignatureResult,
    source: 'redirect' | 'notification',
  ): Promise<CallbackResult> => {
    if (stream === undefined) return recordUnmatched(rejection, signature)
    const done = await record(deps, kind)(stream, () => kind.rejectCallback(rejection), { cause: { correlationId: rejection.callbackId, causationId: rejection.callbackId }, source, signature })()
    if (E.isLeft(done)) {
      log.error({ stream, err: describeHandleError(done.left, () => 'rejected') }, 'could not record a refused callback')
      return unavailable('refused callback')
    }
    return rejectedResult(rejection)
  }

  const rejection = (callback: CallbackKind, signature: SignatureResult, violations: ReadonlyArray<Violation>, fields: Readonly<Record<string, unknown>> | null, ctx: CallbackContext): CallbackRejection =>
    signature.verified
      ? { callback, reason: 'undecodable', detail: 'the fields break the gateway spec', violations, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt, payload: fields }
      : { callback, reason: 'bad_signature', detail: signature.reason ?? 'signature did not verify', violations, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt, payload: fields }

  const ours = (fields: Readonly<Record<string, unknown>>): boolean => fields['merchant_id'] === deps.merchantId

  const orderStreamOf = (fields: Readonly<Record<string, unknown>>): string | undefined => {
    const id = text(fields['merchant_order_id'])
    return ours(fields) && id !== undefined && MerchantOrderId.is(id) ? orderStreamName(deps.merchantId, id) : undefined
  }
  const refundStreamOf = (fields: Readonly<Record<string, unknown>>): string | undefined => {
    const id = text(fields['merchant_refund_id'])
    return ours(fields) && id !== undefined && MerchantRefundId.is(id) ? refundStreamName(deps.merchantId, id) : undefined
  }
  const subscriptionStreamOf = (fields: Readonly<Record<string, unknown>>): string | undefined => {
    const id = text(fields['merchant_subscribe_id'])
    return ours(fields) && id !== undefined && MerchantSubscribeId.is(id) ? subscriptionStreamName(deps.merchantId, id) : undefined
  }

  const notARecord = async (callback: CallbackKind, ctx: CallbackContext): Promise<CallbackResult> =>
    recordUnmatched(
      { callback, reason: 'undecodable', detail: 'the body is not an object of fields', violations: [{ path: '', rule: 'must be an object of fields' }], callbackId: ctx.callbackId, receivedAt: ctx.receivedAt, payload: null },
      { verified: false, reason: 'nothing to verify' },
    )

  const checkoutRedirect = async (input: unknown, ctx: CallbackContext): Promise<CallbackResult> => {
    if (!t.UnknownRecord.is(input)) return notARecord('checkout_redirect', ctx)
    const signature = signatureOf(deps, input)
    const stream = orderStreamOf(input)
    const form = decodeAll(CheckoutRedirectForm, input)
    if (E.isLeft(form) || stream === undefined) {
      const violations = E.isLeft(form) ? form.left : [{ path: 'merchant_id', rule: `must be ${deps.merchantId}` }]
      return refuse(orderKind, stream, rejection('checkout_redirect', signature, violations, input, ctx), signature, 'redirect')
    }
    const done = await recordOrder(
      stream,
      () => ({ type: 'ReceiveCheckoutRedirect', form: form.right, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt }),
      { cause: causeOf(ctx), source: 'redirect', signature },
    )()
    return settle(
      'order',
      stream,
      done,
      'OrderNotFound',
      (s) => (s._tag === 'Order' ? s.order.merchantUrls.redirectUrl : null),
      (s) => (s._tag === 'Order' ? (s.status?.code ?? null) : null),
    )
  }

  const subscriptionRedirect = async (input: unknown, ctx: CallbackContext): Promise<CallbackResult> => {
    if (!t.UnknownRecord.is(input)) return notARecord('subscription_redirect', ctx)
    const signature = signatureOf(deps, input)
    const stream = subscriptionStreamOf(input)
    const form = decodeAll(SubscriptionRedirectForm, input)
    if (E.isLeft(form) || stream === undefined) {
      const violations = E.isLeft(form) ? form.left : [{ path: 'merchant_id', rule: `must be ${deps.merchantId}` }]
      return refuse(subscriptionKind, stream, rejection('subscription_redirect', signature, violations, input, ctx), signature, 'redirect')
    }
    const done = await recordSubscription(
      stream,
      () => ({ type: 'ReceiveSubscriptionRedirect', form: form.right, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt }),
      { cause: causeOf(ctx), source: 'redirect', signature },
    )()
    return settle(
      'subscription',
      stream,
      done,
      'SubscriptionNotFound',
      (s) => (s._tag === 'Subscription' ? s.merchantUrls.redirectUrl : null),
      (s) => (s._tag === 'Subscription' ? s.lifecycle : null),
    )
  }

  /**
   * A verified PAYMENT notification about an order satang never created: kept in the unmatched stream
   * (once per observation, whatever the redeliveries) for reconciliation to report as
   * `missing_internal`. It is still answered "not found", so the gateway delivers it again and, should
   * the order be created meanwhile, it is then recorded on the order.
   */
  const keepUnmatchedPayment = async (n: PaymentNotification, ctx: CallbackContext): Promise<void> => {
    const stream = unmatchedCallbacksStream(deps.merchantId)
    const key = paymentObservationKey('notification', n)
    const event: DomainEvent = notificationReceived.make({ kind: 'PAYMENT', observationKey: key, receivedAt: ctx.receivedAt, payload: redactPayerData(n) })
    const appended = await deps.store.append(
      stream,
      [toEventToAppend(event, eventIdOf(keyOf(stream, 'NotificationReceived', key)), { correlationId: ctx.callbackId, causationId: ctx.callbackId, recordedAt: deps.now().toISOString(), source: 'notification', signature: { verified: true } })],
      'any',
    )()
    if (E.isLeft(appended)) log.error({ stream, err: appended.left._tag === 'EventStoreFailure' ? appended.left.cause : appended.left }, 'could not keep a notification about an unknown order')
  }

  const paymentNotification = async (body: Readonly<Record<string, unknown>>, signature: SignatureResult, ctx: CallbackContext): Promise<CallbackResult> => {
    const stream = orderStreamOf(body)
    const n = decodeAll(PaymentNotification, body)
    if (E.isLeft(n) || stream === undefined) {
      const violations = E.isLeft(n) ? n.left : [{ path: 'merchant_id', rule: `must be ${deps.merchantId}` }]
      return refuse(orderKind, stream, rejection('payment_notification', signature, violations, body, ctx), signature, 'notification')
    }
    const done = await recordOrder(
      stream,
      () => ({ type: 'ReceivePaymentNotification', notification: n.right, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt, statusTable: deps.statusTables.payment }),
      { cause: causeOf(ctx), source: 'notification', signature },
    )()
    if (signature.verified && E.isLeft(done) && done.left._tag === 'Rejected' && done.left.rejection._tag === 'OrderNotFound') await keepUnmatchedPayment(n.right, ctx)
    return settle(
      'order',
      stream,
      done,
      'OrderNotFound',
      () => null,
      (s) => (s._tag === 'Order' ? (s.status?.code ?? null) : null),
    )
  }

  const refundNotification = async (body: Readonly<Record<string, unknown>>, signature: SignatureResult, ctx: CallbackContext): Promise<CallbackResult> => {
    const stream = refundStreamOf(body)
    const n = decodeAll(RefundNotification, body)
    if (E.isLeft(n) || stream === undefined) {
      const violations = E.isLeft(n) ? n.left : [{ path: 'merchant_id', rule: `must be ${deps.merchantId}` }]
      return refuse(refundKind, stream, rejection('refund_notification', signature, violations, body, ctx), signature, 'notification')
    }
    // A forged one changes nothing and needs no order context; only a verified one reads the order.
    const order = signature.verified
      ? await loadRefundOrderContext(deps, deps.merchantId, n.right.merchant_order_id, stream)
      : E.right({ paidAmount: null, currency: null, refundedByOthers: 0n })
    if (E.isLeft(order)) {
      log.error({ stream, err: order.left }, 'could not read the order of a refund')
      return unavailable('refund callback')
    }
    const done = await recordRefund(
      stream,
      () => ({
        type: 'ReceiveRefundNotification',
        notification: n.right,
        signature,
        callbackId: ctx.callbackId,
        receivedAt: ctx.receivedAt,
        statusTable: deps.statusTables.refund,
        order: order.right,
      }),
      { cause: causeOf(ctx), source: 'notification', signature },
    )()
    return settle(
      'refund',
      stream,
      done,
      // A refund nobody tracked is tracked from the notification: never "not found".
      undefined,
      () => null,
      (s) => (s._tag === 'Refund' ? (s.status?.code ?? null) : null),
    )
  }

  const subscriptionNotification = async (body: Readonly<Record<string, unknown>>, signature: SignatureResult, ctx: CallbackContext): Promise<CallbackResult> => {
    const stream = subscriptionStreamOf(body)
    const n = decodeAll(SubscriptionNotification, body)
    if (E.isLeft(n) || stream === undefined) {
      const violations = E.isLeft(n) ? n.left : [{ path: 'merchant_id', rule: `must be ${deps.merchantId}` }]
      return refuse(subscriptionKind, stream, rejection('subscription_notification', signature, violations, body, ctx), signature, 'notification')
    }
    const done = await recordSubscription(
      stream,
      () => ({ type: 'ReceiveSubscriptionNotification', notification: n.right, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt }),
      { cause: causeOf(ctx), source: 'notification', signature },
    )()
    return settle(
      'subscription',
      stream,
      done,
      'SubscriptionNotFound',
      () => null,
      (s) => (s._tag === 'Subscription' ? s.lifecycle : null),
    )
  }

  const notification = async (body: unknown, ctx: CallbackContext): Promise<CallbackResult> => {
    if (!t.UnknownRecord.is(body)) return notARecord('notification', ctx)
    const signature = signatureOf(deps, body)
    switch (body['notify_type']) {
      case 'PAYMENT':
        return paymentNotification(body, signature, ctx)
      case 'REFUND':
        return refundNotification(body, signature, ctx)
      case 'SUBSCRIPTION':
        return subscriptionNotification(body, signature, ctx)
      default:
        return recordUnmatched(
          rejection('notification', signature, [{ path: 'notify_type', rule: body['notify_type'] === undefined ? 'is required' : 'must be PAYMENT, REFUND or SUBSCRIPTION' }], body, ctx),
          signature,
        )
    }
  }

  return { checkoutRedirect, subscriptionRedirect, notification }
}
