import * as E from 'fp-ts/lib/Either.js'
import { readCategoryUpToHead } from './category-reads.ts'
import type { ReadAllOptions } from './ports/event-store.ts'
import type { OpenCreates } from './ports/read-models.ts'
import { awaitsOutcome, parseOrderStreamName } from '../domain/order/index.ts'
import { describeHandleError } from './command-handler.ts'
import type { Cause, GatewayError, RecordingDeps } from './deps.ts'
import { load, orderKind, record } from './streams.ts'

/** How long start-up recovery waits for the order streams to be readable up to the log's head. */
const RECOVERY_HEAD_WAIT_MS = 10_000

/**
 * Resolving creates whose outcome is unknown (a timeout, a 5xx, satang stopped between recording the
 * request and its outcome). The create is never sent again: a payment query asks the gateway whether
 * the order exists. Found → the query's StatusObserved resolves it; "not found" (once the create can
 * no longer be in flight) → PaymentRequestFailed `not_found_by_query`; no answer → try again later
 * (with backoff now, and at the next start).
 */

export type ResolutionStep =
  | { readonly _tag: 'Resolved' }
  /** Not resolved yet; `inFlightForMs`: the create may still be in flight, ask again after that long. */
  | { readonly _tag: 'Pending'; readonly why: string; readonly inFlightForMs?: number }
  | { readonly _tag: 'QueryFailed'; readonly error: GatewayError }

const describe = (e: GatewayError): string => (e._tag === 'GatewayRejected' ? `gateway code ${String(e.code)} ${e.message}` : e._tag)

/**
 * One attempt: if the order still awaits its outcome, query the gateway and record what it says. Only
 * the holder of the stream's lock acts (the sender holds it while the create is in flight; one resolver
 * otherwise), whichever satang process it runs in: the others are told it is pending.
 */
export const resolveOnce = async (deps: RecordingDeps, stream: string, cause: Cause): Promise<ResolutionStep> => {
  const lease = await deps.streamLocks.tryLock(stream)()
  if (E.isLeft(lease)) return { _tag: 'Pending', why: `the resolution lock could not be taken (${lease.left.cause instanceof Error ? lease.left.cause.message : 'database error'})` }
  if (lease.right === null) return { _tag: 'Pending', why: 'the create is in flight, or being resolved, in this or another satang process' }
  try {
    return await resolveHolding(deps, stream, cause)
  } finally {
    await lease.right.release()
  }
}

const resolveHolding = async (deps: RecordingDeps, stream: string, cause: Cause): Promise<ResolutionStep> => {
  const recordOrder = record(deps, orderKind)
  const loaded = await load(deps, orderKind, stream)()
  if (E.isLeft(loaded)) return { _tag: 'Pending', why: loaded.left._tag }
  const s = loaded.right.state
  if (s._tag !== 'Order' || !awaitsOutcome(s)) return { _tag: 'Resolved' }
  if (s.request.phase === 'requested') {
    // Its sender's lock may have been lost with its session (the database went away) while it still
    // sends: a create stays in flight at most a gateway timeout, so a younger one is not taken for an
    // interrupted one (which would refuse its sender's outcome).
    const left = s.request.requestedAt.getTime() + deps.resolve.notFoundAfterMs - deps.now().getTime()
    if (left > 0) return { _tag: 'Pending', why: 'the create may still be in flight in another satang process', inFlightForMs: left }
  }

  const at = loaded.right.events.findIndex((e) => e.type === 'PaymentRequested')
  const requested = loaded.right.events[at]
  const chain: Cause = { ...cause, causationId: loaded.right.eventIds[at] ?? cause.causationId }

  if (s.request.phase === 'requested') {
    // Recorded as requested, but no outcome and nobody sending it: satang stopped in between.
    const marked = await recordOrder(stream, () => ({ type: 'RecordPaymentOutcomeUnknown', reason: 'interrupted', httpStatus: null, traceId: null, since: deps.now() }), {
      cause: chain,
      source: 'operator',
    })()
    if (E.isLeft(marked) && marked.left._tag !== 'Rejected') return { _tag: 'Pending', why: describeHandleError(marked.left, () => 'rejected') }
  }

  const answer = await deps.gateway.queryPayment({ merchant_id: s.order.merchantId, merchant_order_id: s.order.merchantOrderId })()
  if (E.isRight(answer)) {
    const observed = await recordOrder(
      stream,
      () => ({ type: 'ObservePaymentByQuery', answer: answer.right.data, traceId: answer.right.traceId, observedAt: deps.now(), statusTable: deps.statusTables.payment }),
      { cause: chain, source: 'query', traceId: answer.right.traceId },
    )()
    if (E.isLeft(observed)) return { _tag: 'Pending', why: describeHandleError(observed.left, (r) => r._tag) }
    // The gateway knows the order: whatever it said (a status, or a discrepancy kept for review), the create happened.
    return { _tag: 'Resolved' }
  }
  const e = answer.left
  if (e._tag === 'GatewayRejected' && deps.resolve.notFoundCodes.includes(e.code)) {
    const requestedAt = requested?.type === 'PaymentRequested' ? requested.data.requestedAt : new Date(0)
    const age = deps.now().getTime() - requestedAt.getTime()
    if (age < deps.resolve.notFoundAfterMs) return { _tag: 'Pending', why: 'not found yet, but the create may still be in flight' }
    const failed = await recordOrder(
      stream,
      () => ({ type: 'RecordPaymentRequestFailed', failure: { reason: 'not_found_by_query', code: e.code, message: e.message, traceId: e.traceId }, failedAt: deps.now() }),
      { cause: chain, source: 'query', traceId: e.traceId },
    )()
    if (E.isLeft(failed) && failed.left._tag !== 'Rejected') return { _tag: 'Pending', why: describeHandleError(failed.left, () => 'rejected') }
    return { _tag: 'Resolved' }
  }
  return { _tag: 'QueryFailed', error: e }
}

export type Resolver = {
  /** Resolves in the background with backoff (one loop per stream); never rejects. */
  readonly schedule: (stream: string, cause: Cause) => void
  /** Resolves now, once (for `?refresh=true`). */
  readonly resolveOnce: (stream: string, cause: Cause) => Promise<ResolutionStep>
  /** Finds every order whose create awaits its outcome (a scan of the order streams) and schedules each. */
  readonly recover: (cause: Cause) => Promise<number>
  /** Settles when no resolution is running (tests, shutdown). */
  readonly idle: () => Promise<void>
}

export const makeResolver = (deps: RecordingDeps): Resolver => {
  const log = deps.log.child({ component: 'payment-resolution' })
  const running = new Map<string, Promise<void>>()

  const loop = async (stream: string, cause: Cause): Promise<void> => {
    let waitedForFlight = false
    for (let attempt = 1; attempt <= deps.resolve.maxAttempts && !deps.stopping.aborted; attempt++) {
      const step = await resolveOnce(deps, stream, cause)
      if (step._tag === 'Pending' && step.inFlightForMs !== undefined && !waitedForFlight) {
        // Not an attempt (nothing was asked): wait once until the create can no longer be in flight.
        log.info({ stream, retryInMs: step.inFlightForMs }, 'the create may still be in flight; resolving it once it cannot be')
        waitedForFlight = true
        await deps.sleep(step.inFlightForMs, deps.stopping)
        attempt--
        continue
      }
      if (step._tag === 'Resolved') {
        log.info({ stream, attempt }, 'unknown payment outcome resolved by query')
        return
      }
      const why = step._tag === 'Pending' ? step.why : describe(step.error)
      if (attempt === deps.resolve.maxAttempts) {
        log.warn({ stream, attempts: attempt, why }, 'payment outcome still unknown; resolved at the next start or by GET ?refresh=true')
        return
      }
      const delay = Math.min(deps.resolve.maxDelayMs, deps.resolve.baseDelayMs * 2 ** (attempt - 1))
      log.info({ stream, attempt, why, retryInMs: delay }, 'payment outcome not resolved yet')
      await deps.sleep(delay, deps.stopping)
    }
  }

  const schedule = (stream: string, cause: Cause): void => {
    if (running.has(stream) || deps.stopping.aborted) return
    const run = loop(stream, cause)
      .catch((e: unknown) => log.error({ err: e, stream }, 'payment resolution failed'))
      .finally(() => running.delete(stream))
    running.set(stream, run)
  }

  /**
   * Order streams whose create is awaiting its outcome, from the `orders` read model as far as its
   * checkpoint (one indexed query), or null when there is no read model or it cannot be read.
   */
  const fromReadModel = async (): Promise<OpenCreates | null> => {
    if (deps.readModels === undefined) return null
    const open = await deps.readModels.openCreates()()
    if (E.isRight(open)) return open.right
    log.warn({ err: open.left.cause }, 'the orders read model could not be read; start-up recovery scans the order streams')
    return null
  }

  const recover = async (cause: Cause): Promise<number> => {
    // Candidates: the read model's open creates as of its checkpoint, then the order events after it
    // (all of them when there is no read model): the last request-cycle event of each stream decides.
    const projected = await fromReadModel()
    const open = new Set(projected?.streams ?? [])
    // The streams whose last request-cycle event so far leaves the create open, and that event: only
    // those are kept (memory grows with the open creates, not with every order since the checkpoint).
    const pending = new Map<string, 'PaymentRequested' | 'PaymentOutcomeUnknown'>()
    const from: ReadAllOptions = projected?.checkpoint === undefined ? {} : { from: projected.checkpoint }
    // Up to the log's head as it is now (a PostgreSQL reader sees the newest events only once older
    // transactions of the cluster have ended), waiting a while for it: a create recorded just before
    // this start is not missed. Past the wait, what was read is resolved and the rest is said.
    const read = await readCategoryUpToHead(
      deps.store,
      'order-',
      from,
      (item): E.Either<never, void> => {
        const e = E.isRight(item) ? item.right : undefined
        if (e === undefined) return E.right(undefined)
        if (e.type === 'PaymentRequested' || e.type === 'PaymentOutcomeUnknown') pending.set(e.streamName, e.type)
        else if (e.type === 'PaymentRequestAccepted' || e.type === 'PaymentRequestFailed') {
          pending.delete(e.streamName)
          open.delete(e.streamName)
        }
        // (A candidate of the read model resolved by an observation after the checkpoint stays a candidate:
        // resolving folds the stream first, finds it resolved and asks the gateway nothing.)
        else if (e.type === 'StatusObserved' && pending.get(e.streamName) === 'PaymentOutcomeUnknown') {
          pending.delete(e.streamName)
          open.delete(e.streamName)
        }
        return E.right(undefined)
      },
      { waitMs: RECOVERY_HEAD_WAIT_MS },
    )
    if (E.isLeft(read)) throw new Error(`start-up recovery could not read the order streams: ${read.left._tag}`)
    if (read.right._tag === 'ShortOfHead') {
      log.warn(
        { head: read.right.head, readTo: read.right.readTo ?? null, waitedMs: RECOVERY_HEAD_WAIT_MS },
        'start-up recovery could not read the order streams up to the head (a long transaction elsewhere in the PostgreSQL cluster hides newer events); creates recorded after it are resolved at the next start, by GET ?refresh=true or by satang reconcile',
      )
    }
    for (const stream of pending.keys()) open.add(stream)
    let n = 0
    for (const stream of open) {
      if (parseOrderStreamName(stream) === null) continue
      schedule(stream, cause)
      n++
    }
    return n
  }

  return {
    schedule,
    resolveOnce: (stream, cause) => resolveOnce(deps, stream, cause),
    recover,
    idle: async () => {
      while (running.size > 0) await Promise.all([...running.values()])
    },
  }
}
