import { freshProjection, servedFrom } from './read-models.ts'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describeGatewayError } from './ports/gateway.ts'
import type { JsonObject } from './ports/event-store.ts'
import { CheckoutApplyRequest, type CheckoutApplyResponse } from '../domain/gateway/checkout.ts'
import type { DirectPaymentResponse } from '../domain/gateway/direct-payment-response.ts'
import { DirectPaymentRequest, orderDescOf, paymentMethodOf } from '../domain/gateway/direct-payment.ts'
import { MerchantOrderId } from '../domain/gateway/fields.ts'
import { CHECKOUT_APPLY_SERVICE } from '../domain/gateway/services.ts'
import { parseAmount } from '../domain/money.ts'
import type { EventSource } from '../domain/events/metadata.ts'
import { orderStreamName, type CreateOrder, type Order, type OrderCommand, type RequestPayment } from '../domain/order/index.ts'
import { decodeAll, type Violation } from '../domain/violations.ts'
import type { HandleError } from './command-handler.ts'
import { describeHandleError } from './command-handler.ts'
import type { Cause, GatewayError, RecordingDeps } from './deps.ts'
import type { Resolver } from './payment-resolution.ts'
import { paymentView } from '../domain/order/view.ts'
import { conflict, invalid, notFound, notRecorded, ok, unavailable, unreadable, type UseCaseResult } from './results.ts'
import { load, orderKind, record } from './streams.ts'
import type { OrderRejection } from '../domain/order/index.ts'

type Operation = 'direct' | 'checkout'

/** A create the gateway accepted: the answer's `data` (decoded by the client) and its trace id. */
type CreateAnswer = { readonly data: DirectPaymentResponse | CheckoutApplyResponse; readonly traceId: string }

type Parsed =
  | { readonly operation: 'direct'; readonly body: DirectPaymentRequest }
  | { readonly operation: 'checkout'; readonly body: CheckoutApplyRequest }

/**
 * The merchant's request is the gateway request of the spec (endpoint 1 or 4) without `version`;
 * `merchant_id` may be left out (it is satang's merchant), and for a checkout `service` too. It is
 * validated with the gateway codecs, so an invalid request lists every rule the gateway spec would break.
 */
export const parsePaymentRequest = (operation: Operation, input: unknown, merchantId: string): E.Either<ReadonlyArray<Violation>, Parsed> => {
  if (!t.UnknownRecord.is(input)) return E.left([{ path: '', rule: 'must be a JSON object' }])
  const own: Violation[] = []
  if (input['merchant_id'] !== undefined && input['merchant_id'] !== merchantId) own.push({ path: 'merchant_id', rule: `must be ${merchantId} (the merchant this satang serves) or absent` })
  const candidate = { version: 'v1', ...(operation === 'checkout' ? { service: CHECKOUT_APPLY_SERVICE } : {}), ...input, merchant_id: merchantId }
  if (operation === 'checkout') {
    const d = decodeAll(CheckoutApplyRequest, candidate)
    if (E.isLeft(d) || own.length > 0) return E.left([...own, ...(E.isLeft(d) ? d.left : [])])
    return E.right({ operation, body: d.right })
  }
  const d = decodeAll(DirectPaymentRequest, candidate)
  if (E.isLeft(d) || own.length > 0) return E.left([...own, ...(E.isLeft(d) ? d.left : [])])
  return E.right({ operation, body: d.right })
}

const createOrderOf = (p: Parsed, createdAt: Date): E.Either<ReadonlyArray<Violation>, CreateOrder> => {
  const amount = parseAmount(p.body.order_amount)
  if (E.isLeft(amount)) return E.left(amount.left.map((rule) => ({ path: 'order_amount', rule })))
  const b = p.body
  return E.right({
    type: 'CreateOrder',
    merchantId: b.merchant_id,
    storeId: b.store_id ?? null,
    merchantOrderId: b.merchant_order_id,
    operation: p.operation,
    service: p.operation === 'checkout' ? CHECKOUT_APPLY_SERVICE : p.body.service,
    paymentMethod: (p.operation === 'checkout' ? p.body.payment_method : paymentMethodOf(p.body)) ?? null,
    productCode: b.product_code ?? null,
    amount: amount.right,
    currency: b.order_currency,
    orderDesc: (p.operation === 'checkout' ? p.body.order_desc : orderDescOf(p.body)) ?? '',
    merchantUrls: {
      notifyUrl: b.notify_url ?? null,
      redirectUrl: b.redirect_url ?? null,
      cancelUrl: p.operation === 'checkout' ? (p.body.cancel_url ?? null) : null,
    },
    createdAt,
  })
}

/** The same create sent again (a merchant retrying): every field of the order must be the same. */
const sameOrder = (o: Order, c: CreateOrder): ReadonlyArray<string> => {
  const d = o.order
  const pairs: ReadonlyArray<readonly [string, unknown, unknown]> = [
    ['operation', d.operation, c.operation],
    ['service', d.service, c.service],
    ['order_amount', d.amount, c.amount],
    ['order_currency', d.currency, c.currency],
    ['order_desc', d.orderDesc, c.orderDesc],
    ['payment_method', d.paymentMethod, c.paymentMethod],
    ['product_code', d.productCode, c.productCode],
    ['store_id', d.storeId, c.storeId],
    ['notify_url', d.merchantUrls.notifyUrl, c.merchantUrls.notifyUrl],
    ['redirect_url', d.merchantUrls.redirectUrl, c.merchantUrls.redirectUrl],
    ['cancel_url', d.merchantUrls.cancelUrl, c.merchantUrls.cancelUrl],
  ]
  return pairs.filter(([, a, b]) => a !== b).map(([field]) => field)
}

const storeProblem = (e: HandleError<OrderRejection>): UseCaseResult => notRecorded(e, (r) => r._tag)

/** How the create's outcome is recorded, and what the merchant is answered (`undefined`: unknown, resolved by query). */
type Outcome = {
  readonly command: OrderCommand
  readonly source: EventSource
  readonly traceId: string | null
  readonly answer: (view: JsonObject) => UseCaseResult | undefined
}

const unknownOutcome = (reason: 'timeout' | 'reset' | 'http_5xx' | 'bad_response', httpStatus: number | null, traceId: string | null, since: Date): Outcome => ({
  command: { type: 'RecordPaymentOutcomeUnknown', reason, httpStatus, traceId, since },
  source: 'api_response',
  traceId,
  answer: () => undefined,
})

/**
 * A create that failed: definitely (invalid, rejected by the gateway, never sent) or with an unknown
 * outcome (it may have reached the gateway: never re-sent, resolved by query).
 */
const failureOutcome = (e: GatewayError, now: Date): Outcome => {
  switch (e._tag) {
    case 'ValidationFailed':
      return { command: { type: 'RecordPaymentRequestFailed', failure: { reason: 'validation', violations: e.violations }, failedAt: now }, source: 'api_request', traceId: null, answer: () => invalid(e.violations) }
    case 'GatewayRejected':
      return {
        command: { type: 'RecordPaymentRequestFailed', failure: { reason: 'gateway_rejected', code: e.code, message: e.message, traceId: e.traceId }, failedAt: now },
        source: 'api_response',
        traceId: e.traceId,
        answer: (view) => ({ _tag: 'GatewayRejected', code: e.code, message: e.message, traceId: e.traceId, body: view }),
      }
    case 'TransportFailed':
      if (e.sent) return unknownOutcome(e.reason === 'timeout' || e.reason === 'reset' || e.reason === 'http_5xx' ? e.reason : 'bad_response', e.status ?? null, e.traceId ?? null, now)
      return {
        command: { type: 'RecordPaymentRequestFailed', failure: { reason: 'not_sent', detail: e.reason }, failedAt: now },
        source: 'api_response',
        traceId: null,
        answer: () => ({ _tag: 'GatewayUnavailable', message: `the gateway could not be reached (${e.reason}); nothing was sent, retry with a new merchant_order_id`, retriable: true }),
      }
    case 'DecodeFailed':
      return unknownOutcome('bad_response', e.httpStatus, e.traceId ?? null, now)
    case 'OutcomeUnknown':
      return unknownOutcome(e.reason, e.status ?? null, e.traceId ?? null, now)
    default:
      return e satisfies never
  }
}

export type Payments = {
  readonly create: (operation: Operation, input: unknown, cause: Cause) => Promise<UseCaseResult>
  readonly get: (merchantOrderId: string, refresh: boolean, cause: Cause) => Promise<UseCaseResult>
}

export const makePayments = (deps: RecordingDeps, resolver: Resolver): Payments => {
  const log = deps.log.child({ component: 'payments' })

  const recordOrder = record(deps, orderKind)

  const viewOf = async (stream: string): Promise<{ readonly view: JsonObject | null } | undefined> => {
    const loaded = await load(deps, orderKind, stream)()
    if (E.isLeft(loaded)) return undefined
    const s = loaded.right.state
    return { view: s._tag === 'Order' ? paymentView(s, loaded.right.events) : null }
  }

  /** The payment from the `orders` read model (see `projectedState`). */
  const projectedView = async (stream: string): Promise<UseCaseResult | undefined> => {
    const projected = await freshProjection(deps, stream, (q) => q.paymentView(stream))
    return projected === undefined ? undefined : ok({ ...projected.value, ...servedFrom(projected.position) }, 'ok')
  }

  const answerWithView = async (stream: string, status: 'created' | 'ok' | 'accepted', extra: JsonObject = {}): Promise<UseCaseResult> => {
    const v = await viewOf(stream)
    if (v === undefined) return unavailable('the event store could not be read')
    return v.view === null ? notFound('no such payment') : ok({ ...v.view, ...extra }, status)
  }

  /** The creates this process is sending, until their outcome is recorded: a replay waits for them here. */
  const sending = new Map<string, Promise<unknown>>()

  /**
   * The same create again, while or after another request sent it: never sent twice. The answer is the
   * winner's outcome, so a replay waits while the create is in flight (here, or in another satang
   * process, seen through the stream) for at most the time a create can stay in flight. Past that, it
   * answers `accepted` with the order as it stands; the outcome is resolved by query as for any unknown one.
   */
  const replay = async (stream: string): Promise<UseCaseResult> => {
    const deadline = deps.now().getTime() + deps.resolve.notFoundAfterMs
    for (let pause = 5; ; pause = Math.min(pause * 2, 250)) {
      // Only its settling matters here: the winner answers its own request with its failure, if any.
      await Promise.allSettled([sending.get(stream)])
      const loaded = await load(deps, orderKind, stream)()
      if (E.isLeft(loaded)) return storeProblem(loaded.left)
      const s = loaded.right.state
      if (s._tag !== 'Order') return unavailable('the order vanished')
      const view = { ...paymentView(s, loaded.right.events), replayed: true }
      if (s.request.phase !== 'requested') return ok(view)
      if (deps.now().getTime() >= deadline || deps.stopping.aborted) return ok(view, 'accepted')
      await deps.sleep(pause, deps.stopping)
    }
  }

  /** Records the create's outcome; the answer the merchant gets. */
  const recordOutcome = async (stream: string, chain: Cause, answer: E.Either<GatewayError, CreateAnswer>, afterAppend: () => Promise<void>): Promise<UseCaseResult> => {
    const now = deps.now()
    const outcome: Outcome = E.isRight(answer)
      ? {
          command: { type: 'RecordPaymentAccepted', response: answer.right.data, traceId: answer.right.traceId, receivedAt: now, statusTable: deps.statusTables.payment },
          source: 'api_response',
          traceId: answer.right.traceId,
          answer: (view) => ok(view, 'created'),
        }
      : failureOutcome(answer.left, now)
    const recorded = await recordOrder(stream, () => outcome.command, { cause: chain, source: outcome.source, traceId: outcome.traceId })().finally(afterAppend)
    if (E.isLeft(recorded) && recorded.left._tag === 'Rejected' && recorded.left.rejection._tag === 'NoPaymentRequestPending') {
      // The order moved on while the create was in flight (another process took it for interrupted, or an
      // observation resolved it): what is recorded stands, and is resolved by query if still open.
      log.warn({ stream, phase: recorded.left.rejection.phase }, 'the create outcome arrived after the order moved on; answering with the order as recorded')
      resolver.schedule(stream, chain)
      const v = await viewOf(stream)
      return v === undefined || v.view === null ? unavailable('the event store could not be read') : ok(v.view, 'accepted')
    }
    if (E.isLeft(recorded)) {
      // The request event is stored: the resolution (now, or at the next start) finds the outcome by query.
      log.error({ stream, err: describeHandleError(recorded.left, (r) => r._tag) }, 'the create outcome could not be recorded; resolving by query')
      resolver.schedule(stream, chain)
      return unavailable('satang could not record the outcome of the create; it is being resolved by query')
    }
    const view = (await viewOf(stream))?.view ?? {}
    const answered = outcome.answer(view)
    if (answered !== undefined) return answered
    // Unknown: resolved in the background by payment queries; the merchant sees `outcome_unknown` meanwhile.
    resolver.schedule(stream, chain)
    return ok(view, 'accepted')
  }

  const create = async (operation: Operation, input: unknown, cause: Cause): Promise<UseCaseResult> => {
    const parsed = parsePaymentRequest(operation, input, deps.merchantId)
    if (E.isLeft(parsed)) return invalid(parsed.left)
    const p = parsed.right
    const command = createOrderOf(p, deps.now())
    if (E.isLeft(command)) return invalid(command.left)
    const stream = orderStreamName(deps.merchantId, p.body.merchant_order_id)

    const created = await recordOrder(stream, () => command.right, { cause, source: 'api_request' })()
    if (E.isLeft(created)) {
      const e = created.left
      if (e._tag !== 'Rejected') return storeProblem(e)
      if (e.rejection._tag === 'InvalidOrder') return invalid(e.rejection.violations)
      if (e.rejection._tag !== 'OrderAlreadyExists') return conflict(e.rejection._tag)
      // The same merchant_order_id again: a retry of the same create is answered with what is recorded.
      const existing = await load(deps, orderKind, stream)()
      if (E.isLeft(existing)) return storeProblem(existing.left)
      const s = existing.right.state
      if (s._tag !== 'Order') return unavailable('the order vanished')
      const differs = sameOrder(s, command.right)
      if (differs.length > 0) return conflict(`merchant_order_id ${p.body.merchant_order_id} is already used by another order`, { fields: differs })
      if (s.request.phase !== 'not_requested') return replay(stream)
    }

    // satang's own callback URLs go to the gateway; the merchant's are kept in OrderCreated.
    const urls = deps.callbackUrls()
    const ours = { notify_url: urls.notify, redirect_url: urls.checkoutRedirect }
    let requestCommand: RequestPayment
    let send: () => Promise<E.Either<GatewayError, CreateAnswer>>
    if (p.operation === 'checkout') {
      const body: CheckoutApplyRequest = { ...p.body, ...ours }
      requestCommand = { type: 'RequestPayment', request: { operation: 'checkout', body }, requestedAt: deps.now() }
      const { version: _v, service: _s, ...fields } = body
      send = () => deps.gateway.applyCheckout(fields)()
    } else {
      const body: DirectPaymentRequest = { ...p.body, ...ours }
      requestCommand = { type: 'RequestPayment', request: { operation: 'direct', body }, requestedAt: deps.now() }
      const { version: _v, ...fields } = body
      send = () => deps.gateway.createDirectPayment(fields)()
    }
    const requested = await recordOrder(stream, () => requestCommand, { cause, source: 'api_request' })()
    if (E.isLeft(requested)) {
      const e = requested.left
      if (e._tag !== 'Rejected') return storeProblem(e)
      // Another request of the same create won the right to send it: answer with its outcome.
      if (e.rejection._tag === 'PaymentAlreadyRequested') return replay(stream)
      if (e.rejection._tag === 'RequestDoesNotMatchOrder') return conflict('the request does not match the recorded order', { mismatches: e.rejection.mismatches.map((m) => ({ ...m })) })
      return conflict(e.rejection._tag)
    }
    const requestedId = requested.right.appendedIds[requested.right.appended.findIndex((x) => x.type === 'PaymentRequested')]
    const chain: Cause = { ...cause, causationId: requestedId ?? cause.causationId }
    deps.crashPoint('PaymentRequested')

    const sent = sendAndRecord(stream, chain, send)
    sending.set(stream, sent)
    try {
      return await sent
    } finally {
      sending.delete(stream)
    }
  }

  const sendAndRecord = async (stream: string, chain: Cause, send: () => Promise<E.Either<GatewayError, CreateAnswer>>): Promise<UseCaseResult> => {
    // While it is in flight and until its outcome is recorded, the sender holds the stream's lock: no
    // resolver (in any satang process) takes the missing outcome for an interruption. Without the lock
    // (the database did not answer) it sends all the same: it won the request, and resolvers also wait
    // a gateway timeout before they take a create for interrupted.
    const lease = await deps.streamLocks.tryLock(stream)()
    if (E.isLeft(lease) || lease.right === null) log.warn({ stream, why: E.isLeft(lease) ? 'LockFailure' : 'held' }, 'sending a create without its stream lock')
    const held = E.isRight(lease) ? lease.right : null
    const release = async (): Promise<void> => {
      await held?.release()
    }
    let answer: E.Either<GatewayError, CreateAnswer>
    try {
      answer = await send()
      deps.crashPoint('GatewayAnswer')
    } catch (e) {
      await release()
      throw e
    }
    return recordOutcome(stream, chain, answer, release)
  }

  const get = async (merchantOrderId: string, refresh: boolean, cause: Cause): Promise<UseCaseResult> => {
    if (!MerchantOrderId.is(merchantOrderId)) return invalid([{ path: 'merchant_order_id', rule: 'must be at most 64 digits, letters, dash and underline' }])
    const stream = orderStreamName(deps.merchantId, merchantOrderId)
    if (!refresh) {
      const projected = await projectedView(stream)
      return projected ?? answerWithView(stream, 'ok', servedFrom(undefined))
    }
    const loaded = await load(deps, orderKind, stream)()
    if (E.isLeft(loaded)) return unreadable(loaded.left)
    const s = loaded.right.state
    if (s._tag !== 'Order') return notFound('no such payment')
    const step = await resolver.resolveOnce(stream, cause)
    if (step._tag === 'QueryFailed') return gatewayFailure(step.error)
    if (step._tag === 'Resolved' && (s.request.phase === 'requested' || s.request.phase === 'outcome_unknown')) return answerWithView(stream, 'ok')
    if (step._tag === 'Pending') return answerWithView(stream, 'ok', { refresh: { resolved: false, why: step.why } })
    // Not awaiting an outcome: a plain observation by query.
    const answer = await deps.gateway.queryPayment({ merchant_id: s.order.merchantId, merchant_order_id: s.order.merchantOrderId })()
    if (E.isLeft(answer)) return gatewayFailure(answer.left)
    const observed = await recordOrder(
      stream,
      () => ({ type: 'ObservePaymentByQuery', answer: answer.right.data, traceId: answer.right.traceId, observedAt: deps.now(), statusTable: deps.statusTables.payment }),
      { cause, source: 'query', traceId: answer.right.traceId },
    )()
    if (E.isLeft(observed)) return storeProblem(observed.left)
    return answerWithView(stream, 'ok')
  }

  return { create, get }
}

/** A failed query or command as the merchant API answers it. */
export const gatewayFailure = (e: GatewayError): UseCaseResult => {
  switch (e._tag) {
    case 'GatewayRejected':
      return { _tag: 'GatewayRejected', code: e.code, message: e.message, traceId: e.traceId }
    case 'ValidationFailed':
      return invalid(e.violations)
    case 'TransportFailed':
      return { _tag: 'GatewayUnavailable', message: `the gateway could not be reached (${e.reason})`, retriable: true, cause: describeGatewayError(e) }
    case 'DecodeFailed':
      return { _tag: 'GatewayUnavailable', message: 'the gateway answered something that breaks its spec', retriable: false, cause: describeGatewayError(e) }
    case 'OutcomeUnknown':
      return { _tag: 'GatewayUnavailable', message: `the gateway did not answer (${e.reason})`, retriable: true, cause: describeGatewayError(e) }
    default:
      return e satisfies never
  }
}
