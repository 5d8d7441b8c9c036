import { createHash } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { EventStoreFailure, ExpectedRevision, ReadItem } from './ports/event-store.ts'
import {
  quarantineCallback,
  quarantineNaturalKey,
  quarantineStreamName,
  withDayTotals,
  type Quarantine,
  type QuarantineDayTotal,
  type QuarantineSource,
} from '../domain/events/common/callback-quarantined.ts'
import type { CallbackKind } from '../domain/events/common/callback-rejected.ts'
import { sortedJson } from '../domain/gateway/canonical.ts'
import type { SignatureResult } from '../domain/events/metadata.ts'
import { keyOf } from '../domain/events/natural-key.ts'
import { decodeDomainEvent, encodeDomainEvent } from '../domain/events/registry.ts'
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
import type { Cause, QuarantineBudget, RecordingDeps } from './deps.ts'
import { recordRefundDecision } from './refund-context.ts'
import type { CallbackResult } from './results.ts'
import { appendEvents, orderKind, record, subscriptionKind, type Provenance } from './streams.ts'
import type { DomainEvent } from '../domain/events/registry.ts'

/**
 * The gateway's callbacks: checkout and subscription redirect forms (endpoints 5 and 9) and
 * notifications (payment, refund, subscription). Each is verified with the gateway's public key, then
 * recorded through its aggregate: a verified one as evidence (redirect) or authority (notification).
 * A callback satang cannot trust (bad signature, another merchant, a body or fields it cannot read)
 * never touches the aggregate it names: it is kept once in the quarantine stream of its source and
 * Bangkok day (`CallbackQuarantined`, keyed by the fingerprint of the bytes received), so a forgery
 * replayed ten thousand times is one event and contends with no real writer. What is kept is bounded:
 * per callback kind and Bangkok day, at most `QuarantineBudget` events and bytes of callbacks whose
 * signature did not verify (anyone can send those); past it they are counted, not kept. A verified
 * notification about an order satang never created is kept in `unmatched-callbacks-<merchant_id>`.
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
  /** The raw body as received (the HTTP adapter gives it). Absent: the fields' canonical JSON. */
  readonly body?: Uint8Array
}

/** The defaults of `SATANG_QUARANTINE_DAY_EVENTS`, `SATANG_QUARANTINE_DAY_BYTES` and `SATANG_QUARANTINE_BODY_BYTES`. */
export const DEFAULT_QUARANTINE_BUDGET: QuarantineBudget = { eventsPerDay: 500, bytesPerDay: 2_097_152, bodyBytes: 2048 }

export const unmatchedCallbacksStream = (merchantId: string): string => `unmatched-callbacks-${merchantId}`

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

/** Tries at keeping one quarantined callback when other processes append to the same quarantine stream meanwhile. */
const KEEP_ATTEMPTS = 50

const encoder = new TextEncoder()

/** The day totals of a quarantine stream as its last event holds them (none before the first, or in a version 1 event). */
const totalsOf = (last: ReadItem | undefined): ReadonlyArray<QuarantineDayTotal> => {
  if (last === undefined || E.isLeft(last)) return []
  const decoded = decodeDomainEvent(last.right.type, last.right.schemaVersion, last.right.data)
  return E.isRight(decoded) && decoded.right.type === 'CallbackQuarantined' ? decoded.right.data.dayTotals : []
}

const expectedAfter = (last: ReadItem | undefined): ExpectedRevision => (last === undefined ? 'no_stream' : E.isRight(last) ? last.right.streamRevision : last.left.streamRevision)

export const makeCallbacks = (deps: RecordingDeps): Callbacks => {
  const log = deps.log.child({ component: 'callbacks' })
  const recordOrder = record(deps, orderKind)
  const recordSubscription = record(deps, subscriptionKind)
  const budget = deps.quarantine ?? DEFAULT_QUARANTINE_BUDGET
  const quarantined = new Set<string>()
  /** `<stream>\n<callback kind>` whose budget this process saw spent (the day is in the stream name; it only fills up). */
  const spent = new Set<string>()
  /** One keeper at a time per quarantine stream in this process: the others wait instead of racing for its next revision. */
  const lanes = new Map<string, Promise<unknown>>()

  const inLane = <A>(stream: string, work: () => Promise<A>): Promise<A> => {
    const run = (lanes.get(stream) ?? Promise.resolve()).then(work, work)
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    lanes.set(stream, settled)
    void settled.then(() => {
      if (lanes.get(stream) === settled) lanes.delete(stream)
    })
    return run
  }

  /**
   * The signature verdict of each fields object, so that a callback is RSA-verified once although the
   * HTTP adapter asks `trusted` (for rate limiting) before the same object is screened. Keyed weakly by
   * the object the adapter parsed (never changed after), so it lives only as long as the request.
   */
  const verdicts = new WeakMap<Readonly<Record<string, unknown>>, SignatureResult>()
  const signatureOf = (fields: Readonly<Record<string, unknown>>): SignatureResult => {
    const known = verdicts.get(fields)
    if (known !== undefined) return known
    const r = deps.gatewayVerifier.verify(fields)
    const verdict: SignatureResult = r.valid ? { verified: true } : { verified: false, reason: r.reason }
    verdicts.set(fields, verdict)
    return verdict
  }

  const causeOf = (ctx: CallbackContext): Cause => ({ correlationId: ctx.callbackId, causationId: ctx.callbackId })

  const unavailable = (what: string): CallbackResult => ({ _tag: 'Unavailable', message: `could not record the ${what}` })

  const fingerprintOf = (callback: CallbackKind, fields: Readonly<Record<string, unknown>> | null, ctx: CallbackContext): string =>
    ctx.fingerprint ?? createHash('sha256').update(`${callback}\n${fields === null ? 'null' : sortedJson(fields)}`).digest('hex')

  const bodyOf = (fields: Readonly<Record<string, unknown>> | null, ctx: CallbackContext): Quarantine['body'] => {
    const raw = ctx.body ?? encoder.encode(fields === null ? '' : sortedJson(fields))
    return { sha256: createHash('sha256').update(raw).digest('hex'), bytes: raw.byteLength, text: new TextDecoder().decode(raw.subarray(0, budget.bodyBytes)) }
  }

  /** Past the day's budget of its kind: counted (`overBudget`, a metric of the HTTP adapter), not kept; said once per kind and day. */
  const overBudget = (stream: string, callback: CallbackKind, total: QuarantineDayTotal | undefined, result: CallbackResult): CallbackResult => {
    const key = `${stream}\n${callback}`
    if (!spent.has(key)) {
      if (spent.size >= 1024) spent.clear()
      spent.add(key)
      log.warn(
        { stream, callback, kept: total ?? { events: 0, bytes: 0 }, eventsPerDay: budget.eventsPerDay, bytesPerDay: budget.bytesPerDay },
        `the quarantine budget of ${callback} callbacks for the day is spent (SATANG_QUARANTINE_DAY_EVENTS, SATANG_QUARANTINE_DAY_BYTES): further unverified ones are counted in satang_quarantine_refused_total, not kept`,
      )
    }
    return result._tag === 'Rejected' ? { ...result, overBudget: callback } : result
  }

  /**
   * A callback that is not trusted: kept once per fingerprint in the quarantine stream of its source
   * and Bangkok day; never on the stream it names. The day's totals are read from the stream's last
   * event and the event is appended at the next revision, so the budget holds across processes and
   * restarts (a process that loses the race reads again).
   */
  const quarantine = async (q: Omit<Quarantine, 'fingerprint' | 'receivedAt' | 'body' | 'headBytes'>, ctx: CallbackContext): Promise<CallbackResult> => {
    const source: QuarantineSource = q.callback === 'checkout_redirect' || q.callback === 'subscription_redirect' ? 'redirect' : 'notification'
    const stream = quarantineStreamName(source, ctx.receivedAt)
    const fingerprint = fingerprintOf(q.callback, q.fields, ctx)
    const key = quarantineNaturalKey(stream, fingerprint)
    const result: CallbackResult = { _tag: 'Rejected', reason: q.reason === 'bad_signature' ? 'bad_signature' : 'undecodable', detail: q.detail, violations: q.violations }
    if (quarantined.has(key)) return result
    const budgeted = !q.signatureVerified
    if (budgeted && spent.has(`${stream}\n${q.callback}`)) return overBudget(stream, q.callback, undefined, result)
    const event = quarantineCallback({ ...q, fingerprint, receivedAt: ctx.receivedAt, body: bodyOf(q.fields, ctx), headBytes: budget.bodyBytes })
    const bytes = encoder.encode(JSON.stringify(encodeDomainEvent(event).data)).byteLength
    const signature: SignatureResult = q.signatureVerified ? { verified: true } : { verified: false, reason: q.reason === 'bad_signature' ? q.detail : 'nothing to verify' }
    const provenance: Provenance = { cause: causeOf(ctx), source, signature }
    const failed = (err: unknown): CallbackResult => {
      log.error({ stream, err }, 'could not quarantine a callback')
      return unavailable('refused callback')
    }

    return inLane(stream, async () => {
      for (let attempt = 1; attempt <= KEEP_ATTEMPTS; attempt++) {
        if (budgeted && spent.has(`${stream}\n${q.callback}`)) return overBudget(stream, q.callback, undefined, result)
        const tail = await deps.store.readStream(stream, { direction: 'backward', maxCount: 1 })()
        if (E.isLeft(tail)) return failed(tail.left.cause)
        const last = tail.right[0]
        const totals = totalsOf(last)
        const mine = totals.find((x) => x.callback === q.callback)
        const next: QuarantineDayTotal = { callback: q.callback, events: (mine?.events ?? 0) + 1, bytes: (mine?.bytes ?? 0) + bytes }
        if (budgeted && (next.events > budget.eventsPerDay || next.bytes > budget.bytesPerDay)) return overBudget(stream, q.callback, mine, result)
        const kept = withDayTotals(event, [...totals.filter((x) => x.callback !== q.callback), next])
        const appended = await appendEvents(deps, stream, [{ event: kept, naturalKey: key }], provenance, expectedAfter(last))()
        if (E.isRight(appended)) {
          if (quarantined.size >= KNOWN_QUARANTINED) quarantined.clear()
          quarantined.add(key)
          return result
        }
        if (appended.left._tag !== 'WrongExpectedVersion') return failed(appended.left._tag === 'EventStoreFailure' ? (appended.left satisfies EventStoreFailure).cause : appended.left)
        // Another process kept one meanwhile: read the totals again (jittered, so contenders spread out).
        await deps.sleep(Math.random() * Math.min(2 * attempt, 25))
      }
      return failed(new Error(`${stream} changed under ${String(KEEP_ATTEMPTS)} attempts in a row`))
    })
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

  const trusted = (body: unknown): boolean => t.UnknownRecord.is(body) && ours(body) && signatureOf(body).verified

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
    const signature = signatureOf(fields)
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
    const appended = await appendEvents(deps, stream, [{ event, naturalKey: keyOf(stream, 'NotificationReceived', key) }], { cause: causeOf(ctx), source: 'notification', signature: { verified: true } }, 'any')()
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
