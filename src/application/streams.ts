import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { eventIdOf } from './event-id.ts'
import type { AppendError, AppendResult, EventStore, EventStoreFailure, EventToAppend, ExpectedRevision, RecordedEvent } from './ports/event-store.ts'
import { keyOf } from '../domain/events/natural-key.ts'
import type { EventSource, SignatureResult } from '../domain/events/metadata.ts'
import { decodeDomainEvent, describeEventDecodeError, eventSourceOf, toEventToAppend, type DomainEvent } from '../domain/events/registry.ts'
import * as order from '../domain/order/index.ts'
import * as refund from '../domain/refund/index.ts'
import * as subscription from '../domain/subscription/index.ts'
import { handleCommand, loadStream, type Current, type Decider, type HandleError, type Handled, type Loaded, type StreamCodec, type StreamUnreadable } from './command-handler.ts'
import type { Cause, RecordingDeps } from './deps.ts'
import type { AggregateStreamCache, StreamStates } from './stream-cache.ts'

/** One aggregate as the application drives it: its decider, which events are its own, their natural keys. */
export type AggregateKind<C, S, Ev extends DomainEvent, R> = {
  readonly name: 'order' | 'refund' | 'subscription'
  readonly decider: Decider<C, S, Ev, R>
  readonly isEvent: (e: DomainEvent) => e is Ev
  readonly naturalKey: (stream: string, e: Ev) => string
  /** Claims are keyed by the command that decided them as well (see `isOrderClaim`). */
  readonly isClaim: (e: Ev) => boolean
  /** Its streams' states in the process's cache. */
  readonly cached: (c: AggregateStreamCache) => StreamStates<S>
}

export const orderKind: AggregateKind<order.OrderCommand, order.OrderState, order.OrderEvent, order.OrderRejection> = {
  name: 'order',
  decider: { initialState: order.initialOrderState, evolve: order.evolve, decide: order.decide },
  isEvent: (e): e is order.OrderEvent => order.isOrderEvent(e),
  naturalKey: order.orderEventNaturalKey,
  isClaim: order.isOrderClaim,
  cached: (c) => c.order,
}

export const refundKind: AggregateKind<refund.RefundCommand, refund.RefundState, refund.RefundEvent, refund.RefundRejection> = {
  name: 'refund',
  decider: { initialState: refund.initialRefundState, evolve: refund.evolve, decide: refund.decide },
  isEvent: (e): e is refund.RefundEvent => refund.isRefundEvent(e),
  naturalKey: refund.refundEventNaturalKey,
  // A refund is tracked, not sent anywhere: two writers of the same tracking record one fact.
  isClaim: () => false,
  cached: (c) => c.refund,
}

export const subscriptionKind: AggregateKind<subscription.SubscriptionCommand, subscription.SubscriptionState, subscription.SubscriptionEvent, subscription.SubscriptionRejection> = {
  name: 'subscription',
  decider: { initialState: subscription.initialSubscriptionState, evolve: subscription.evolve, decide: subscription.decide },
  isEvent: (e): e is subscription.SubscriptionEvent => subscription.isSubscriptionEvent(e),
  naturalKey: subscription.subscriptionEventNaturalKey,
  isClaim: subscription.isSubscriptionClaim,
  cached: (c) => c.subscription,
}

/** Where the facts of one command came from; every event the command decides carries it. */
export type Provenance = {
  readonly cause: Cause
  /** Default: the event type's usual source (`eventSourceOf`). */
  readonly source?: EventSource
  readonly traceId?: string | null
  readonly signature?: SignatureResult
}

/** Reads a stored event as a domain event of `kind` (upcast to the newest version). */
export const decodeFor =
  <Ev extends DomainEvent>(kind: Pick<AggregateKind<never, never, Ev, never>, 'isEvent' | 'name'>) =>
  (r: RecordedEvent): E.Either<string, Ev> => {
    const decoded = decodeDomainEvent(r.type, r.schemaVersion, r.data)
    if (E.isLeft(decoded)) return E.left(describeEventDecodeError(decoded.left))
    return kind.isEvent(decoded.right) ? E.right(decoded.right) : E.left(`${r.type} is not an event of a ${kind.name} stream`)
  }

/**
 * The one place an event to append is made (a guard test keeps it so): its id from its natural key,
 * its metadata from the provenance of the command that decided it. Every append of the application
 * goes through it, by `streamCodec` or `appendEvents`.
 */
export const toAppend = (e: DomainEvent, naturalKey: string, p: Provenance, recordedAt: Date): EventToAppend => {
  const { metadata, ...event } = toEventToAppend(e, eventIdOf(naturalKey), {
    correlationId: p.cause.correlationId,
    causationId: p.cause.causationId,
    recordedAt: recordedAt.toISOString(),
    source: p.source ?? eventSourceOf(e),
    ...(p.traceId === undefined || p.traceId === null ? {} : { traceId: p.traceId }),
    ...(p.signature === undefined ? {} : { signature: p.signature }),
  })
  return { ...event, metadata: p.cause.actor === undefined ? metadata : { ...metadata, actor: p.cause.actor } }
}

/** How a command's events enter and leave a stream; `naturalKey` keys each event (its id is made of it), all recorded at one instant. */
export const streamCodec = <Ev extends DomainEvent>(
  decode: (r: RecordedEvent) => E.Either<string, Ev>,
  naturalKey: (e: Ev) => string,
  p: Provenance,
  recordedAt: Date,
): StreamCodec<Ev> => ({
  decode,
  encode: (e) => toAppend(e, naturalKey(e), p, recordedAt),
})

/** Appends events outside a decider (each with its natural key), at `expected`, with the provenance that caused them. */
export const appendEvents = (
  deps: { readonly store: EventStore; readonly now: () => Date },
  stream: string,
  events: ReadonlyArray<{ readonly event: DomainEvent; readonly naturalKey: string }>,
  p: Provenance,
  expected: ExpectedRevision,
): TE.TaskEither<AppendError, AppendResult> => {
  const recordedAt = deps.now()
  return deps.store.append(
    stream,
    events.map((x) => toAppend(x.event, x.naturalKey, p, recordedAt)),
    expected,
  )
}

/** `commandId` is one per command handled (stable across its retries): the claims it decides are its own. */
const codecFor = <C, S, Ev extends DomainEvent, R>(kind: AggregateKind<C, S, Ev, R>, stream: string, p: Provenance, now: () => Date, commandId: string): StreamCodec<Ev> =>
  streamCodec(decodeFor(kind), (e) => (kind.isClaim(e) ? keyOf(kind.naturalKey(stream, e), commandId) : kind.naturalKey(stream, e)), p, now())

/**
 * Decides a command on a stream of `kind` and appends what it decided (optimistic, re-decided on
 * conflict), on the cached state of the stream when `deps.streamCache` knows it (see `handleCommand`).
 * Curried so that the command's type is fixed by the kind before the command is written.
 */
export const record =
  <C, S, Ev extends DomainEvent, R>(deps: Pick<RecordingDeps, 'store' | 'now' | 'newId' | 'streamCache'>, kind: AggregateKind<C, S, Ev, R>) =>
  (stream: string, command: (current: Current<S>) => C, provenance: Provenance): TE.TaskEither<HandleError<R>, Handled<S, Ev>> =>
    handleCommand(deps.store, stream, kind.decider, codecFor(kind, stream, provenance, deps.now, deps.newId()), command, {
      cache: deps.streamCache === undefined ? undefined : kind.cached(deps.streamCache),
    })

/** The stream folded. */
export const load = <C, S, Ev extends DomainEvent, R>(
  deps: Pick<RecordingDeps, 'store'>,
  kind: AggregateKind<C, S, Ev, R>,
  stream: string,
): TE.TaskEither<StreamUnreadable | EventStoreFailure, Loaded<S, Ev>> => loadStream(deps.store, stream, kind.decider, { decode: decodeFor(kind) })

/**
 * Reads many streams of `kind` in one round trip (`EventStore.readStreams`) and puts their folded
 * states in `deps.streamCache`, so that the commands on them that follow decide without a read of
 * their own. Only an optimisation: without `readStreams` or a cache, or when the read fails or a
 * stream cannot be read, nothing is cached and each command reads its stream as usual; a state that
 * is stale by the time its command runs costs that command one `WrongExpectedVersion` and a read
 * (see `handleCommand`).
 */
export const preload = async <C, S, Ev extends DomainEvent, R>(deps: Pick<RecordingDeps, 'store' | 'streamCache'>, kind: AggregateKind<C, S, Ev, R>, streams: ReadonlyArray<string>): Promise<void> => {
  const cache = deps.streamCache
  const readStreams = deps.store.readStreams
  if (cache === undefined || readStreams === undefined || streams.length === 0) return
  const read = await readStreams(streams)()
  if (E.isLeft(read)) return
  const states = kind.cached(cache)
  const decode = decodeFor(kind)
  for (const [stream, items] of read.right) {
    let state = kind.decider.initialState
    let revision: bigint | undefined
    let readable = true
    for (const item of items) {
      const decoded = E.isLeft(item) ? null : decode(item.right)
      if (decoded === null || E.isLeft(decoded) || E.isLeft(item)) {
        readable = false
        break
      }
      state = kind.decider.evolve(state, decoded.right)
      revision = item.right.streamRevision
    }
    if (readable && revision !== undefined) states.set(stream, { state, revision })
  }
}
