import { createHash } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { eventIdOf } from './event-id.ts'
import type { EventStoreFailure } from './ports/event-store.ts'
import { quarantineCallback, quarantineNaturalKey, quarantineStreamName, type Quarantine } from '../domain/events/common/callback-quarantined.ts'
import type { CallbackKind } from '../domain/events/common/callback-rejected.ts'
import { sortedJson } from '../domain/gateway/canonical.ts'
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
import { recordRefundDecision } from './refund-context.ts'
import type { CallbackResult } from './results.ts'
import { orderKind, record, subscriptionKind } from './streams.ts'
import type { DomainEvent } from '../domain/events/registry.ts'

/**
 * The gateway's callbacks: checkout and subscription redirect forms (endpoints 5 and 9) and
 * notifications (payment, refund, subscription). Each is verified with the gateway's public key, then
 * recorded through its aggregate: a verified one as evidence (redirect) or authority (notification).
 * A callback satang cannot trust (bad signature, another merchant, a body or fields it cannot read)
 * never touches the aggregate it names: it is kept once in the quarantine stream of its source and
 * Bangkok day (`CallbackQuarantined`, keyed by the fingerprint of the bytes received), so a forgery
 * replayed ten thousand times is one event and contends with no real writer. A verified notification
 * about an order satang never created is kept in `unmatched-callbacks-<merchant_id>`.
 */

/** One delivery attempt of a callback. */
export type CallbackContext = {
  /** This request's id: the correlation id of what it records. */
  readonly callbackId: string
  readonly receivedAt: Date
  /**
   * SHA-256 (hex) of what was received: the raw body and the headers that shape it (the HTTP adapter
   * computes it). Absent: of the callback kind and the fields' canonical JSON.
   */
  readonly fingerprint?: string
}

export const unmatchedCallbacksStream = (merchantId: string): string => `unmatched-callbacks-${merchantId}`

const signatureOf = (deps: Pick<RecordingDeps, 'gatewayVerifier'>, fields: Readonly<Record<string, unknown>>): SignatureResult => {
  const r = deps.gatewayVerifier.verify(fields)
  return r.valid ? { verified: true } : { verified: false, reason: r.reason }
}

const text = (u: unknown): string | undefined => (typeof u === 'string' && u !== '' ? u : undefined)

/** The redirect routes and the notification route. */
export type CallbackRoute = 'checkout_redirect' | 'subscription_redirect' | 'notification'

/** A body the HTTP adapter could not read into fields (not JSON, a field over the length limit…): every violated rule, and the fields when there were some. */
export type UnreadableBody = { readonly violations: ReadonlyArray<Violation>; readonly fields: Readonly<Record<string, unknown>> | null }

export type Callbacks = {
  readonly checkoutRedirect: (fields: unknown, ctx: CallbackContext) => Promise<CallbackResult>
  readonly subscriptionRedirect: (fields: unknown, ctx: CallbackContext) => Promise<CallbackResult>
  readonly notification: (body: unknown, ctx: CallbackContext) => Promise<CallbackResult>
  /** A body that could not be read: quarantined. */
  readonly unreadable: (route: CallbackRoute, body: UnreadableBody, ctx: CallbackContext) => Promise<CallbackResult>
  /**
   * Whether a callback is the gateway's to this merchant: an object of fields whose signature verifies
   * and whose `merchant_id` is ours. Cheap (one signature check, no IO): rate limiting spares these.
   */
  readonly trusted: (body: unknown) => boolean
}

/** Quarantine events known to be stored already (a cache of a permanent fact, so a flood of one forgery costs no store round trip). */
const KNOWN_QUARANTINED = 4096

export const makeCallbacks = (deps: RecordingDeps): Callbacks => {
  const log = deps.log.child({ component: 'callbacks' })
  const recordOrder = record(deps, orderKind)
  const recordSubscription = record(deps, subscriptionKind)
  const quarantined = new Set<string>()

  const causeOf = (ctx: CallbackContext): Cause => ({ correlationId: ctx.callbackId, causationId: ctx.callbackId })

  const unavailable = (what: string): CallbackResult => ({ _tag: 'Unavailable', message: `could not record the ${what}` })

  const fingerprintOf = (callback: CallbackKind, fields: Readonly<Record<string, unknown>> | null, ctx: CallbackContext): string =>
    ctx.fingerprint ?? createHash('sha256').update(`${callback}\n${fields === null ? 'null' : sortedJson(fields)}`).digest('hex')

  /**
   * A callback that is not trusted: kept once per fingerprint in the quarantine stream of its source
   * and Bangkok day; never on the stream it names.
   */
  const quarantine = async (q: Omit<Quarantine, 'fingerprint' | 'receivedAt'>, ctx: CallbackContext): Promise<CallbackResult> => {
    const source = q.callback === 'checkout_redirect' || q.callback === 'subscription_redirect' ? 'redirect' : 'notification'
    const stream = quarantineStreamName(source, ctx.receivedAt)
    const fingerprint = fingerprintOf(q.callback, q.fields, ctx)
    const key = quarantineNaturalKey(stream, fingerprint)
    const result: CallbackResult = { _tag: 'Rejected', reason: q.reason === 'bad_signature' ? 'bad_signature' : 'undecodable', detail: q.detail, violations: q.violations }
    if (quarantined.has(key)) return result
    const event: DomainEvent = quarantineCallback({ ...q, fingerprint, receivedAt: ctx.receivedAt })
    const signature: SignatureResult = q.signatureVerified ? { verified: true } : { verified: false, reason: q.reason === 'bad_signature' ? q.detail : 'nothing to verify' }
    const appended = await deps.store.append(
      stream,
      [toEventToAppend(event, eventIdOf(key), { correlationId: ctx.callbackId, causationId: ctx.callbackId, recordedAt: deps.now().toISOString(), source, signature })],
      'any',
    )()
    if (E.isLeft(appended)) {
      log.error({ stream, err: appended.left._tag === 'EventStoreFailure' ? (appended.left satisfies EventStoreFailure).cause : appended.left }, 'could not quarantine a callback')
      return unavailable('refused callback')
    }
    if (quarantined.size >= KNOWN_QUARANTINED) quarantined.clear()
    quarantined.add(key)
    return result
  }

  /** The outcome of recording through an aggregate: recorded, refused, or a failure. */
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

  const ours = (fields: Readonly<Record<string, unknown>>): boolean => fields['merchant_id'] === deps.merchantId

  const orderStreamOf = (fields: Readonly<Record<string, unknown>>): string | undefined => {
    const id = text(fields['merchant_order_id'])
    return id !== undefined && MerchantOrderId.is(id) ? orderStreamName(deps.merchantId, id) : undefined
  }
  const refundStreamOf = (fields: Readonly<Record<string, unknown>>): string | undefined => {
    const id = text(fields['merchant_refund_id'])
    return id !== undefined && MerchantRefundId.is(id) ? refundStreamName(deps.merchantId, id) : undefined
  }
  const subscriptionStreamOf = (fields: Readonly<Record<string, unknown>>): string | undefined => {
    const id = text(fields['merchant_subscribe_id'])
    return id !== undefined && MerchantSubscribeId.is(id) ? subscriptionStreamName(deps.merchantId, id) : undefined
  }

  const trusted = (body: unknown): boolean => t.UnknownRecord.is(body) && ours(body) && deps.gatewayVerifier.verify(body).valid

  /**
   * The checks every callback passes before it may touch an aggregate: the signature verifies, the
   * merchant is ours, the fields decode and name a stream. Anything else is quarantined.
   */
  const screen = async <A>(
    callback: CallbackKind,
    fields: Readonly<Record<string, unknown>>,
    decoded: E.Either<ReadonlyArray<Violation>, A>,
    stream: string | undefined,
    ctx: CallbackContext,
    recordIt: (a: A, stream: string, signature: SignatureResult) => Promise<CallbackResult>,
  ): Promise<CallbackResult> => {
    const signature = signatureOf(deps, fields)
    const violations = E.isLeft(decoded) ? decoded.left : []
    if (!signature.verified) {
      return quarantine({ callback, reason: 'bad_signature', detail: signature.reason ?? 'signature did not verify', violations, signatureVerified: false, fields }, ctx)
    }
    if (!ours(fields)) {
      return quarantine({ callback, reason: 'unknown_merchant', detail: 'the callback is for another merchant', violations: [{ path: 'merchant_id', rule: `must be ${deps.merchantId}` }, ...violations], signatureVerified: true, fields }, ctx)
    }
    if (E.isLeft(decoded) || stream === undefined) {
      return quarantine({ callback, reason: 'undecodable', detail: 'the fields break the gateway spec', violations, signatureVerified: true, fields }, ctx)
    }
    return recordIt(decoded.right, stream, signature)
  }

  const notARecord = async (callback: CallbackKind, ctx: CallbackContext): Promise<CallbackResult> =>
    quarantine({ callback, reason: 'undecodable', detail: 'the body is not an object of fields', violations: [{ path: '', rule: 'must be an object of fields' }], signatureVerified: false, fields: null }, ctx)

  const unreadable = async (route: CallbackRoute, body: UnreadableBody, ctx: CallbackContext): Promise<CallbackResult> =>
    quarantine({ callback: route, reason: 'undecodable', detail: 'the body could not be read', violations: body.violations, signatureVerified: false, fields: body.fields }, ctx)

  const checkoutRedirect = async (input: unknown, ctx: CallbackContext): Promise<CallbackResult> => {
    if (!t.UnknownRecord.is(input)) return notARecord('checkout_redirect', ctx)
    return screen('checkout_redirect', input, decodeAll(CheckoutRedirectForm, input), orderStreamOf(input), ctx, async (form, stream, signature) => {
      const done = await recordOrder(stream, () => ({ type: 'ReceiveCheckoutRedirect', form, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt }), {
        cause: causeOf(ctx),
        source: 'redirect',
        signature,
      })()
      return settle(
        'order',
        stream,
        done,
        'OrderNotFound',
        (s) => (s._tag === 'Order' ? s.order.merchantUrls.redirectUrl : null),
        (s) => (s._tag === 'Order' ? (s.status?.code ?? null) : null),
      )
    })
  }

  const subscriptionRedirect = async (input: unknown, ctx: CallbackContext): Promise<CallbackResult> => {
    if (!t.UnknownRecord.is(input)) return notARecord('subscription_redirect', ctx)
    return screen('subscription_redirect', input, decodeAll(SubscriptionRedirectForm, input), subscriptionStreamOf(input), ctx, async (form, stream, signature) => {
      const done = await recordSubscription(stream, () => ({ type: 'ReceiveSubscriptionRedirect', form, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt }), {
        cause: causeOf(ctx),
        source: 'redirect',
        signature,
      })()
      return settle(
        'subscription',
        stream,
        done,
        'SubscriptionNotFound',
        (s) => (s._tag === 'Subscription' ? s.merchantUrls.redirectUrl : null),
        (s) => (s._tag === 'Subscription' ? s.lifecycle : null),
      )
    })
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

  const paymentNotification = (body: Readonly<Record<string, unknown>>, ctx: CallbackContext): Promise<CallbackResult> =>
    screen('payment_notification', body, decodeAll(PaymentNotification, body), orderStreamOf(body), ctx, async (n, stream, signature) => {
      const done = await recordOrder(
        stream,
        () => ({ type: 'ReceivePaymentNotification', notification: n, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt, statusTable: deps.statusTables.payment }),
        { cause: causeOf(ctx), source: 'notification', signature },
      )()
      if (E.isLeft(done) && done.left._tag === 'Rejected' && done.left.rejection._tag === 'OrderNotFound') await keepUnmatchedPayment(n, ctx)
      return settle(
        'order',
        stream,
        done,
        'OrderNotFound',
        () => null,
        (s) => (s._tag === 'Order' ? (s.status?.code ?? null) : null),
      )
    })

  const refundNotification = (body: Readonly<Record<string, unknown>>, ctx: CallbackContext): Promise<CallbackResult> =>
    screen('refund_notification', body, decodeAll(RefundNotification, body), refundStreamOf(body), ctx, async (n, stream, signature) => {
      const done = await recordRefundDecision(deps, stream, n.merchant_order_id, (order) => ({
        type: 'ReceiveRefundNotification',
        notification: n,
        signature,
        callbackId: ctx.callbackId,
        receivedAt: ctx.receivedAt,
        statusTable: deps.statusTables.refund,
        order,
      }), { cause: causeOf(ctx), source: 'notification', signature })
      return settle(
        'refund',
        stream,
        done,
        // A refund nobody tracked is tracked from the notification: never "not found".
        undefined,
        () => null,
        (s) => (s._tag === 'Refund' ? (s.status?.code ?? null) : null),
      )
    })

  const subscriptionNotification = (body: Readonly<Record<string, unknown>>, ctx: CallbackContext): Promise<CallbackResult> =>
    screen('subscription_notification', body, decodeAll(SubscriptionNotification, body), subscriptionStreamOf(body), ctx, async (n, stream, signature) => {
      const done = await recordSubscription(
        stream,
        () => ({ type: 'ReceiveSubscriptionNotification', notification: n, signature, callbackId: ctx.callbackId, receivedAt: ctx.receivedAt }),
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
    })

  const notification = async (body: unknown, ctx: CallbackContext): Promise<CallbackResult> => {
    if (!t.UnknownRecord.is(body)) return notARecord('notification', ctx)
    switch (body['notify_type']) {
      case 'PAYMENT':
        return paymentNotification(body, ctx)
      case 'REFUND':
        return refundNotification(body, ctx)
      case 'SUBSCRIPTION':
        return subscriptionNotification(body, ctx)
      default:
        return screen('notification', body, E.left([{ path: 'notify_type', rule: body['notify_type'] === undefined ? 'is required' : 'must be PAYMENT, REFUND or SUBSCRIPTION' }]), undefined, ctx, () =>
          Promise.resolve(unavailable('notification')),
        )
    }
  }

  return { checkoutRedirect, subscriptionRedirect, notification, unreadable, trusted }
}
