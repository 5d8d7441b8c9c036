import { freshProjection, servedFrom } from './read-models.ts'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { formatCalendarDate } from '../domain/bangkok-time.ts'
import { MerchantSubscribeId } from '../domain/gateway/fields.ts'
import { SUBSCRIPTION_CANCEL_SERVICE, SUBSCRIPTION_CREATE_SERVICE, SUBSCRIPTION_UPDATE_SERVICE } from '../domain/gateway/services.ts'
import { SubscriptionCancelRequest, SubscriptionCreateRequest, SubscriptionUpdateRequest } from '../domain/gateway/subscription.ts'
import type { RequestFailure } from '../domain/events/request-outcome.ts'
import { formatAmount } from '../domain/money.ts'
import { needsReview, subscriptionStatusOf, subscriptionStreamName, type Subscription, type SubscriptionRejection } from '../domain/subscription/index.ts'
import { decodeAll, decodeAt, type Violation } from '../domain/violations.ts'
import { nullable } from '../domain/events/codecs.ts'
import { IntervalType, Retry } from '../domain/gateway/subscription.ts'
import { oneOf } from '../domain/gateway/text-codecs.ts'
import { SubscriptionOperation } from '../domain/subscription/events/subscription-requested.ts'
import { BahtText, DiscrepancyView, discrepancyView, IsoInstantText } from '../domain/views.ts'
import type { HandleError } from './command-handler.ts'
import type { Cause, GatewayError, RecordingDeps } from './deps.ts'
import { conflict, invalid, notFound, notRecorded, ok, unreadable, type UseCaseResult } from './results.ts'
import { load, record, subscriptionKind } from './streams.ts'

const iso = (d: Date): string => d.toISOString()

/** A subscription as the merchant API shows it (the JSON of `subscriptionView`). */
export const SubscriptionView = t.type(
  {
    merchant_id: t.string,
    merchant_subscribe_id: t.string,
    status: nullable(oneOf('SubscriptionDisplayStatus', ['REQUESTED', 'REQUEST_FAILED', 'OUTCOME_UNKNOWN', 'CREATED', 'ACTIVE', 'SUSPEND', 'COMPLETED', 'CANCELLED'])),
    lifecycle: oneOf('SubscriptionLifecycle', ['requested', 'request_failed', 'outcome_unknown', 'created', 'active', 'suspended', 'cancelled']),
    recurring_bill_id: nullable(t.string),
    link_url: nullable(t.string),
    plan: t.type({
      plan_name: t.string,
      plan_desc: nullable(t.string),
      interval_type: IntervalType,
      interval: t.number,
      total_terms: t.number,
      billing_amount: BahtText,
      billing_currency: t.string,
      retry: Retry,
      start_date: t.string,
    }),
    pending: nullable(t.type({ operation: SubscriptionOperation, phase: oneOf('PendingPhase', ['requested', 'outcome_unknown']), requested_at: IsoInstantText })),
    charges: nullable(
      t.type({
        terms_charged: t.number,
        consecutive_failures: t.number,
        status: oneOf('ChargeStatus', ['ACTIVE', 'SUSPEND', 'COMPLETED', 'CANCELLED']),
        next_attempt: nullable(t.string),
        terms_skipped: t.number,
      }),
    ),
    needs_review: t.boolean,
    discrepancies: t.array(DiscrepancyView),
    merchant_urls: t.type({ notify_url: nullable(t.string), redirect_url: nullable(t.string) }),
  },
  'SubscriptionView',
)
export type SubscriptionView = t.TypeOf<typeof SubscriptionView>

/** A subscription as the merchant API shows it; `status` is the gateway's or the derived one (CANCELLED, …). */
export const subscriptionView = (s: Subscription): SubscriptionView => ({
  merchant_id: s.merchantId,
  merchant_subscribe_id: s.merchantSubscribeId,
  status: subscriptionStatusOf(s),
  lifecycle: s.lifecycle,
  recurring_bill_id: s.recurringBillId,
  link_url: s.linkUrl,
  plan: {
    plan_name: s.plan.planName,
    plan_desc: s.plan.planDesc,
    interval_type: s.plan.intervalType,
    interval: s.plan.interval,
    total_terms: s.plan.totalTerms,
    billing_amount: formatAmount(s.plan.billingAmount),
    billing_currency: s.plan.currency,
    retry: s.plan.retry,
    start_date: s.plan.startDate,
  },
  pending: s.pending === null ? null : { operation: s.pending.operation, phase: s.pending.phase, requested_at: iso(s.pending.requestedAt) },
  charges:
    s.charges === null
      ? null
      : {
          terms_charged: s.charges.termsCharged,
          consecutive_failures: s.charges.consecutiveFailures,
          status: s.charges.status,
          next_attempt: s.charges.nextAttempt === null ? null : formatCalendarDate(s.charges.nextAttempt),
          terms_skipped: s.charges.termsSkipped ?? 0,
        },
  needs_review: needsReview(s),
  discrepancies: s.discrepancies.map(discrepancyView),
  merchant_urls: { notify_url: s.merchantUrls.notifyUrl, redirect_url: s.merchantUrls.redirectUrl },
})

const rejected = (e: HandleError<SubscriptionRejection>): UseCaseResult => {
  if (e._tag !== 'Rejected') return notRecorded(e, () => 'rejected')
  const r = e.rejection
  switch (r._tag) {
    case 'SubscriptionAlreadyExists':
      return conflict(`merchant_subscribe_id ${r.merchantSubscribeId} is already used`)
    case 'SubscriptionNotFound':
      return notFound('no such subscription')
    case 'SubscriptionNotCreated':
      return conflict(`the subscription was not created (${r.lifecycle})`)
    case 'SubscriptionIsCancelled':
      return conflict('the subscription is cancelled')
    case 'SubscriptionRequestPending':
      return conflict(`a ${r.operation} of this subscription is still ${r.phase === 'requested' ? 'waiting for its answer' : 'of unknown outcome'}`)
    case 'NoSubscriptionRequestPending':
      return conflict('no request of this subscription is waiting for its answer')
    case 'RequestDoesNotMatchSubscription':
      return conflict('the request does not match the subscription', { mismatches: r.mismatches.map((m) => ({ ...m })) })
    case 'InvalidPlan':
      return invalid(r.violations)
    default:
      return r satisfies never
  }
}

/**
 * The merchant's request as the gateway request of the spec, validated with its codec: `version` and
 * `service` may be left out (when sent, they are checked like any field), `merchant_subscribe_id` comes
 * from the URL (the body may repeat it) and `merchant_id` is satang's merchant.
 */
const parse = <A>(codec: t.Type<A, unknown, unknown>, input: unknown, service: string, merchantSubscribeId: string | null, merchantId: string): E.Either<ReadonlyArray<Violation>, A> => {
  if (!t.UnknownRecord.is(input)) return E.left([{ path: '', rule: 'must be a JSON object' }])
  const own: Violation[] = []
  if (input['merchant_id'] !== undefined && input['merchant_id'] !== merchantId) own.push({ path: 'merchant_id', rule: `must be ${merchantId} (the merchant this satang serves) or absent` })
  const fromUrl = merchantSubscribeId === null ? {} : { merchant_subscribe_id: merchantSubscribeId }
  if (merchantSubscribeId !== null && input['merchant_subscribe_id'] !== undefined && input['merchant_subscribe_id'] !== merchantSubscribeId) {
    own.push({ path: 'merchant_subscribe_id', rule: `must be ${merchantSubscribeId} (as in the URL) or absent` })
  }
  const d = decodeAll(codec, { version: 'v1', service, ...input, ...fromUrl, merchant_id: merchantId })
  return E.isLeft(d) || own.length > 0 ? E.left([...own, ...(E.isLeft(d) ? d.left : [])]) : E.right(d.right)
}

export type Subscriptions = {
  readonly create: (input: unknown, cause: Cause) => Promise<UseCaseResult>
  readonly update: (merchantSubscribeId: string, input: unknown, cause: Cause) => Promise<UseCaseResult>
  readonly cancel: (merchantSubscribeId: string, cause: Cause) => Promise<UseCaseResult>
  readonly get: (merchantSubscribeId: string) => Promise<UseCaseResult>
}

/**
 * Subscriptions: create, update and cancel are recorded before they are sent (SubscriptionRequested)
 * and their outcome after. The spec has no subscription query: an unknown create is resolved by the
 * gateway's callbacks about it; an unknown update or cancel may simply be requested again.
 */
export const makeSubscriptions = (deps: RecordingDeps): Subscriptions => {
  const recordSubscription = record(deps, subscriptionKind)

  const view = async (stream: string, status: 'created' | 'ok' | 'accepted'): Promise<UseCaseResult> => {
    const loaded = await load(deps, subscriptionKind, stream)()
    if (E.isLeft(loaded)) return unreadable(loaded.left)
    const s = loaded.right.state
    return s._tag === 'Subscription' ? ok(subscriptionView(s), status) : notFound('no such subscription')
  }

  /** Records a definite failure or an unknown outcome of the pending request; the answer for the merchant. */
  const recordFailure = async (stream: string, cause: Cause, e: GatewayError): Promise<UseCaseResult> => {
    const now = deps.now()
    const failed = (failure: RequestFailure) =>
      recordSubscription(stream, () => ({ type: 'RecordSubscriptionRequestFailed', failure, failedAt: now }), { cause, ...(failure.reason === 'gateway_rejected' ? { traceId: failure.traceId } : {}) })()
    const unknown = (reason: 'timeout' | 'reset' | 'http_5xx' | 'bad_response', httpStatus: number | null, traceId: string | null) =>
      recordSubscription(stream, () => ({ type: 'RecordSubscriptionOutcomeUnknown', reason, httpStatus, traceId, since: now }), { cause, traceId })()
    switch (e._tag) {
      case 'ValidationFailed': {
        const done = await failed({ reason: 'validation', violations: e.violations })
        return E.isLeft(done) ? rejected(done.left) : invalid(e.violations)
      }
      case 'GatewayRejected': {
        const done = await failed({ reason: 'gateway_rejected', code: e.code, message: e.message, traceId: e.traceId })
        return E.isLeft(done) ? rejected(done.left) : { _tag: 'GatewayRejected', code: e.code, message: e.message, traceId: e.traceId }
      }
      case 'TransportFailed': {
        if (!e.sent) {
          const done = await failed({ reason: 'not_sent', detail: e.reason })
          return E.isLeft(done) ? rejected(done.left) : { _tag: 'GatewayUnavailable', message: `the gateway could not be reached (${e.reason}); nothing was sent`, retriable: true }
        }
        const done = await unknown(e.reason === 'timeout' || e.reason === 'reset' || e.reason === 'http_5xx' ? e.reason : 'bad_response', e.status ?? null, e.traceId ?? null)
        return E.isLeft(done) ? rejected(done.left) : view(stream, 'accepted')
      }
      case 'DecodeFailed': {
        const done = await unknown('bad_response', e.httpStatus, e.traceId ?? null)
        return E.isLeft(done) ? rejected(done.left) : view(stream, 'accepted')
      }
      case 'OutcomeUnknown': {
        const done = await unknown(e.reason, e.status ?? null, e.traceId ?? null)
        return E.isLeft(done) ? rejected(done.left) : view(stream, 'accepted')
      }
      default:
        return e satisfies never
    }
  }

  const create = async (input: unknown, cause: Cause): Promise<UseCaseResult> => {
    const parsed = parse(SubscriptionCreateRequest, input, SUBSCRIPTION_CREATE_SERVICE, null, deps.merchantId)
    if (E.isLeft(parsed)) return invalid(parsed.left)
    const merchantRequest = parsed.right
    const urls = deps.callbackUrls()
    const body = { ...merchantRequest, notify_url: urls.notify, redirect_url: urls.subscriptionRedirect }
    const stream = subscriptionStreamName(deps.merchantId, body.merchant_subscribe_id)
    const requested = await recordSubscription(
      stream,
      () => ({
        type: 'RequestSubscription',
        request: body,
        merchantUrls: { notifyUrl: merchantRequest.notify_url ?? null, redirectUrl: merchantRequest.redirect_url ?? null },
        requestedAt: deps.now(),
      }),
      { cause },
    )()
    if (E.isLeft(requested)) return rejected(requested.left)
    const { version: _v, service: _s, ...fields } = body
    const answer = await deps.gateway.createSubscription(fields)()
    if (E.isLeft(answer)) return recordFailure(stream, cause, answer.left)
    const done = await recordSubscription(stream, () => ({ type: 'RecordSubscriptionCreated', response: answer.right.data, traceId: answer.right.traceId, receivedAt: deps.now() }), {
      cause,
      traceId: answer.right.traceId,
    })()
    return E.isLeft(done) ? rejected(done.left) : view(stream, 'created')
  }

  const update = async (merchantSubscribeId: string, input: unknown, cause: Cause): Promise<UseCaseResult> => {
    const parsed = parse(SubscriptionUpdateRequest, input, SUBSCRIPTION_UPDATE_SERVICE, merchantSubscribeId, deps.merchantId)
    if (E.isLeft(parsed)) return invalid(parsed.left)
    const body = parsed.right
    const stream = subscriptionStreamName(deps.merchantId, merchantSubscribeId)
    const requested = await recordSubscription(stream, () => ({ type: 'RequestSubscriptionUpdate', request: body, requestedAt: deps.now() }), { cause })()
    if (E.isLeft(requested)) return rejected(requested.left)
    const { version: _v, service: _s, ...fields } = body
    const answer = await deps.gateway.updateSubscription(fields)()
    if (E.isLeft(answer)) return recordFailure(stream, cause, answer.left)
    const done = await recordSubscription(stream, () => ({ type: 'RecordSubscriptionUpdated', response: answer.right.data, traceId: answer.right.traceId, receivedAt: deps.now() }), {
      cause,
      traceId: answer.right.traceId,
    })()
    return E.isLeft(done) ? rejected(done.left) : view(stream, 'ok')
  }

  const cancel = async (merchantSubscribeId: string, cause: Cause): Promise<UseCaseResult> => {
    const parsed = parse(SubscriptionCancelRequest, {}, SUBSCRIPTION_CANCEL_SERVICE, merchantSubscribeId, deps.merchantId)
    if (E.isLeft(parsed)) return invalid(parsed.left)
    const body = parsed.right
    const stream = subscriptionStreamName(deps.merchantId, merchantSubscribeId)
    const requested = await recordSubscription(stream, () => ({ type: 'RequestSubscriptionCancel', request: body, requestedAt: deps.now() }), { cause })()
    if (E.isLeft(requested)) return rejected(requested.left)
    // Already cancelled: nothing to send.
    if (requested.right.appended.length === 0) return view(stream, 'ok')
    const { version: _v, service: _s, ...fields } = body
    const answer = await deps.gateway.cancelSubscription(fields)()
    if (E.isLeft(answer)) return recordFailure(stream, cause, answer.left)
    const done = await recordSubscription(stream, () => ({ type: 'RecordSubscriptionCancelled', traceId: answer.right.traceId, receivedAt: deps.now() }), {
      cause,
      traceId: answer.right.traceId,
    })()
    return E.isLeft(done) ? rejected(done.left) : view(stream, 'ok')
  }

  const get = async (merchantSubscribeId: string): Promise<UseCaseResult> => {
    const checked = decodeAt('merchant_subscribe_id', MerchantSubscribeId, merchantSubscribeId)
    if (E.isLeft(checked)) return invalid(checked.left)
    const stream = subscriptionStreamName(deps.merchantId, merchantSubscribeId)
    const projected = await freshProjection(deps, stream, (q) => q.subscription(stream))
    if (projected === undefined) {
      const folded = await view(stream, 'ok')
      return folded._tag === 'Ok' ? { ...folded, body: { ...folded.body, ...servedFrom(undefined) } } : folded
    }
    return ok({ ...subscriptionView(projected.value), ...servedFrom(projected.position) }, 'ok')
  }

  return { create, update, cancel, get }
}
