/**
 * The EventStoreDB event store. Every call to `@eventstore/db-client` lives in this file, so moving
 * to its successor `@kurrent/kurrentdb-client` (where `expectedRevision` became `streamState`)
 * changes this file only.
 *
 * Mapping onto the port:
 *  - revisions and expected revisions are the client's (`any`, `no_stream`, `stream_exists`, bigint);
 *  - event ids are the client's event ids; type and data as a JSON event; our metadata goes into
 *    the event metadata with `schemaVersion` beside it, plus `$correlationId`/`$causationId` so
 *    EventStoreDB's own projections can follow causation;
 *  - positions are `$all` positions, `<commit>-<prepare>` as 20-digit decimals (string order = log order);
 *  - the global log and subscriptions are `$all` without system events (types or streams starting with `$`);
 *  - a category read is a read of `$all` filtered by stream-name prefix on our side (the client's
 *    `readAll` has no server-side filter); a subscription with a prefix uses the server-side
 *    `streamNameFilter`. `$ce-` streams are not used: they need the by-category projection and only
 *    know the part of a name before the first `-`.
 *
 * Idempotency. EventStoreDB guarantees that appending the same event ids again is a no-op only when
 * the append carries the same exact or `no_stream` expectation as the first time. To keep the port's
 * promise (the same batch again returns the original result and stores nothing) under every
 * expectation, the adapter:
 *  - under `any` and `stream_exists`: reads the stream's last `idempotencyWindow` events first; if
 *    the batch's ids are there it returns the original result, otherwise it appends with the exact
 *    revision it just read (so the server's own guarantee applies), and when another writer got in
 *    between (wrong expected version) it reads and tries again — `any` never fails from contention;
 *  - under `no_stream` and an exact revision: appends; on a wrong expected version it looks for the
 *    ids in the same window, and answers with the original result when it finds the batch.
 * A batch retried after more than `idempotencyWindow` further events in its stream is not recognised.
 */
import {
  ANY,
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  isCommandError,
  jsonEvent,
  streamNameFilter,
  type AppendExpectedRevision,
  type Position as EsdbPosition,
} from '@eventstore/db-client'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type {
  AppendError,
  AppendResult,
  EventStore,
  EventStoreFailure,
  EventToAppend,
  ExpectedRevision,
  InvalidPosition,
  Position,
  ReadAllOptions,
  ReadError,
  ReadItem,
  ReadStreamOptions,
  SubscribeOptions,
  Subscription,
  SubscriptionError,
  SubscriptionHandler,
} from '../../application/ports/event-store.ts'
import type { Logger } from '../../logger.ts'
import { decodeEvent, isReservedMetadataKey, pad20, sleep, validateAppend } from './envelope.ts'

export type EsdbEventStoreConfig = {
  /** For example `esdb://localhost:2113?tls=false`. May carry credentials: never logged. */
  readonly connectionString: string
  /** How many of a stream's latest events are searched for a retried batch. Default 200. */
  readonly idempotencyWindow?: number
}

const POSITION = /^(\d{20})-(\d{20})$/
const MAX_ANY_ATTEMPTS = 50
const MAX_FAILURE_BACKOFF_MS = 5_000

const encodePosition = (p: EsdbPosition): Position => `${pad20(p.commit.toString())}-${pad20(p.prepare.toString())}` as Position

const decodePosition = (position: Position | undefined): E.Either<InvalidPosition, EsdbPosition | undefined> => {
  if (position === undefined) return E.right(undefined)
  const m = POSITION.exec(position)
  return m === null ? E.left({ _tag: 'InvalidPosition', position }) : E.right({ commit: BigInt(m[1] ?? '0'), prepare: BigInt(m[2] ?? '0') })
}

const after = (p: EsdbPosition, from: EsdbPosition | undefined): boolean =>
  from === undefined || p.commit > from.commit || (p.commit === from.commit && p.prepare > from.prepare)

const RETRIABLE = new Set<ErrorType>([ErrorType.UNAVAILABLE, ErrorType.DEADLINE_EXCEEDED, ErrorType.TIMEOUT, ErrorType.CANCELLED, ErrorType.NOT_LEADER, ErrorType.UNKNOWN])

// gRPC status codes of transport trouble: CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE.
const RETRIABLE_GRPC = new Set([1, 2, 4, 8, 10, 14])

const isRetriable = (cause: unknown): boolean => {
  if (cause instanceof Error && isCommandError(cause)) return RETRIABLE.has(cause.type)
  return typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'number' && RETRIABLE_GRPC.has(cause.code)
}

const failure =
  (operation: string) =>
  (cause: unknown): EventStoreFailure => ({ _tag: 'EventStoreFailure', operation, retriable: isRetriable(cause), cause })

const toExpected = (expected: ExpectedRevision): AppendExpectedRevision => expected

/** The client's recorded event, as much of it as we read. */
type Recorded = {
  readonly streamId: string
  readonly id: string
  readonly revision: bigint
  readonly type: string
  readonly created: Date
  readonly isJson: boolean
  readonly data: unknown
  readonly metadata: unknown
  readonly position?: EsdbPosition
}

const isSystem = (e: Recorded): boolean => e.type.startsWith('$') || e.streamId.startsWith('$')

const positionOf = (e: Recorded): EsdbPosition => {
  // Servers before 22.6 do not report positions on stream reads; the port needs them.
  if (e.position === undefined) throw new Error('EventStoreDB did not report an event position (EventStoreDB 22.6 or later is required)')
  return e.position
}

const splitMetadata = (metadata: unknown): { readonly schemaVersion: unknown; readonly metadata: unknown } => {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || metadata instanceof Uint8Array) return { schemaVersion: undefined, metadata }
  const entries = Object.entries(metadata)
  return {
    schemaVersion: entries.find(([k]) => k === 'schemaVersion')?.[1],
    metadata: Object.fromEntries(entries.filter(([k]) => !isReservedMetadataKey(k))),
  }
}

const toItem = (e: Recorded): ReadItem => {
  const { schemaVersion, metadata } = splitMetadata(e.metadata)
  return decodeEvent({
    streamName: e.streamId,
    streamRevision: e.revision,
    position: encodePosition(positionOf(e)),
    eventId: e.id,
    type: e.type,
    schemaVersion,
    // A JSON event whose bytes do not parse arrives as a string, a binary one as bytes: both fail the envelope.
    data: e.isJson ? e.data : 'binary data',
    metadata,
    recordedAt: e.created,
  })
}

/** The EventStoreDB event store; opens its own client from the connection string. */
export const makeEsdbEventStore = (deps: { readonly log: Logger }, config: EsdbEventStoreConfig): EventStore => {
  const log = deps.log.child({ component: 'eventstore', store: 'esdb' })
  const client = EventStoreDBClient.connectionString(config.connectionString)
  const window = config.idempotencyWindow ?? 200
  const subscriptions = new Set<Subscription>()

  const toEventData = (e: EventToAppend) =>
    jsonEvent({
      id: e.eventId,
      type: e.type,
      data: e.data,
      metadata: { ...e.metadata, schemaVersion: e.schemaVersion, $correlationId: e.metadata.correlationId, $causationId: e.metadata.causationId },
    })

  /** The stream's revision and its latest events (newest first), or `no_stream`. */
  const tail = async (stream: string): Promise<{ readonly current: bigint | 'no_stream'; readonly recent: ReadonlyArray<Recorded> }> => {
    const recent: Recorded[] = []
    try {
      for await (const resolved of client.readStream(stream, { direction: BACKWARDS, fromRevision: END, maxCount: window })) {
        if (resolved.event !== undefined) recent.push(resolved.event)
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return { current: 'no_stream', recent: [] }
      throw err
    }
    const newest = recent[0]
    return { current: newest === undefined ? 'no_stream' : newest.revision, recent }
  }

  /** Whether the batch is among `recent`: its original result, a conflict (only some ids there), or nothing. */
  const findBatch = (events: ReadonlyArray<EventToAppend>, recent: ReadonlyArray<Recorded>): 'none' | 'conflict' | AppendResult => {
    const byId = new Map(recent.map((e) => [e.id.toLowerCase(), e]))
    const found = events.map((e) => byId.get(e.eventId))
    if (found.every((e) => e === undefined)) return 'none'
    const first = found[0]
    if (first === undefined || found.some((e, i) => e === undefined || e.revision !== first.revision + BigInt(i))) return 'conflict'
    const last = found.at(-1) ?? first
    return { nextExpectedRevision: last.revision, position: encodePosition(positionOf(last)) }
  }

  const settle = (stream: string, events: ReadonlyArray<EventToAppend>, found: 'conflict' | AppendResult): E.Either<AppendError, AppendResult> =>
    found === 'conflict' ? E.left({ _tag: 'EventIdConflict', stream, eventIds: events.map((e) => e.eventId) }) : E.right(found)

  /** One append with a definite expectation; a wrong expected version comes back as a value. */
  const appendExact = async (
    stream: string,
    events: ReadonlyArray<EventToAppend>,
    expected: ExpectedRevision,
  ): Promise<E.Either<{ readonly actual: bigint | 'no_stream' }, AppendResult>> => {
    try {
      const result = await client.appendToStream(stream, events.map(toEventData), { expectedRevision: toExpected(expected) })
      if (result.position !== undefined) return E.right({ nextExpectedRevision: result.nextExpectedRevision, position: encodePosition(result.position) })
      // An idempotent repeat may come back without a position: read it from the stream.
      for await (const resolved of client.readStream(stream, { fromRevision: result.nextExpectedRevision, maxCount: 1 })) {
        if (resolved.event !== undefined) return E.right({ nextExpectedRevision: result.nextExpectedRevision, position: encodePosition(positionOf(resolved.event)) })
      }
      throw new Error(`EventStoreDB acknowledged an append to ${stream} whose last event cannot be read`)
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) return E.left({ actual: err.actualVersion === NO_STREAM ? 'no_stream' : err.actualVersion })
      throw err
    }
  }

  const appendAny = async (stream: string, events: ReadonlyArray<EventToAppend>, expected: 'any' | 'stream_exists'): Promise<E.Either<AppendError, AppendResult>> => {
    for (let attempt = 1; attempt <= MAX_ANY_ATTEMPTS; attempt++) {
      const { current, recent } = await tail(stream)
      const found = findBatch(events, recent)
      if (found !== 'none') return settle(stream, events, found)
      if (expected === 'stream_exists' && current === 'no_stream') return E.left({ _tag: 'WrongExpectedVersion', stream, expected, actual: 'no_stream' })
      const written = await appendExact(stream, events, current)
      if (E.isRight(written)) return written
      // Another writer appended in between: look again (jittered, so contenders spread out).
      await sleep(Math.random() * Math.min(attempt, 10))
    }
    return E.left({ _tag: 'EventStoreFailure', operation: 'append', retriable: true, cause: new Error(`stream ${stream} changed under ${String(MAX_ANY_ATTEMPTS)} attempts in a row`) })
  }

  const appendExpected = async (stream: string, events: ReadonlyArray<EventToAppend>, expected: 'no_stream' | bigint): Promise<E.Either<AppendError, AppendResult>> => {
    const written = await appendExact(stream, events, expected)
    if (E.isRight(written)) return written
    // A retry of a batch that was stored (its reply lost) answers as the first time.
    const found = findBatch(events, (await tail(stream)).recent)
    if (found !== 'none') return settle(stream, events, found)
    return E.left({ _tag: 'WrongExpectedVersion', stream, expected, actual: written.left.actual })
  }

  const append = (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision): TE.TaskEither<AppendError, AppendResult> =>
    pipe(
      TE.fromEither(validateAppend(stream, events)),
      TE.flatMap(() =>
        pipe(
          TE.tryCatch(
            () => (expected === ANY || expected === 'stream_exists' ? appendAny(stream, events, expected) : appendExpected(stream, events, expected)),
            failure('append'),
          ),
          TE.flatMap(TE.fromEither),
        ),
      ),
    )

  const readStream = (stream: string, options: ReadStreamOptions = {}): TE.TaskEither<EventStoreFailure, ReadonlyArray<ReadItem>> =>
    TE.tryCatch(async () => {
      const backward = options.direction === 'backward'
      const items: ReadItem[] = []
      if (options.maxCount === 0) return items
      try {
        const read = client.readStream(stream, {
          direction: backward ? BACKWARDS : FORWARDS,
          fromRevision: options.fromRevision ?? (backward ? END : START),
          ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
        })
        for await (const resolved of read) {
          if (resolved.event !== undefined) items.push(toItem(resolved.event))
        }
      } catch (err) {
        if (err instanceof StreamNotFoundError) return []
        throw err
      }
      return items
    }, failure('readStream'))

  /** Reads `$all` forward after `from`, keeping up to `maxCount` events that pass `keep`. */
  const readGlobal = (from: EsdbPosition | undefined, maxCount: number, keep: (e: Recorded) => boolean): Promise<ReadonlyArray<ReadItem>> =>
    (async () => {
      const items: ReadItem[] = []
      if (maxCount <= 0) return items
      const read = client.readAll({ direction: FORWARDS, fromPosition: from ?? START })
      try {
        for await (const resolved of read) {
          const e = resolved.event
          // readAll starts at `from` inclusive; the port's positions are exclusive.
          if (e === undefined || isSystem(e) || !after(e.position, from) || !keep(e)) continue
          items.push(toItem(e))
          if (items.length >= maxCount) break
        }
      } finally {
        await read.cancel().catch((err: unknown) => log.debug({ err }, 'cancelling a finished read failed'))
      }
      return items
    })()

  const readAll = (options: ReadAllOptions = {}): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> =>
    pipe(
      TE.fromEither(decodePosition(options.from)),
      TE.flatMap((from): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> => TE.tryCatch(() => readGlobal(from, options.maxCount ?? 1000, () => true), failure('readAll'))),
    )

  const readCategory = (prefix: string, options: ReadAllOptions = {}): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> =>
    pipe(
      TE.fromEither(decodePosition(options.from)),
      TE.flatMap(
        (from): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> =>
          TE.tryCatch(() => readGlobal(from, options.maxCount ?? 1000, (e) => e.streamId.startsWith(prefix)), failure('readCategory')),
      ),
    )

  const subscribeToAll = (options: SubscribeOptions, handler: SubscriptionHandler): Subscription => {
    let stopping = false
    let unsubscribe: (() => Promise<void>) | undefined
    let wake: (() => void) | undefined

    const run = async (): Promise<E.Either<SubscriptionError, void>> => {
      const start = decodePosition(options.from)
      if (E.isLeft(start)) return start
      let checkpoint = start.right
      let backoff = 100
      const prefix = options.streamNamePrefix
      while (!stopping) {
        const subscription = client.subscribeToAll({
          fromPosition: checkpoint ?? START,
          filter: prefix === undefined ? excludeSystemEvents() : streamNameFilter({ prefixes: [prefix] }),
        })
        unsubscribe = () => subscription.unsubscribe()
        try {
          // Iterating pulls one event at a time: the next one is read only after the handler's promise settles.
          for await (const resolved of subscription) {
            if (stopping) break
            const e = resolved.event
            if (e === undefined || isSystem(e) || !after(e.position, checkpoint)) continue
            const item = toItem(e)
            try {
              await handler(item)
            } catch (cause) {
              return E.left({ _tag: 'SubscriberFailed', position: encodePosition(e.position), cause })
            }
            checkpoint = e.position
            backoff = 100
          }
          if (stopping) break
          // The server ended the subscription (a leader change, a restart): resubscribe after a pause.
          log.warn({ retryInMs: backoff }, 'subscription to $all ended; resubscribing from the last checkpoint')
          await sleep(backoff, (w) => {
            wake = w
          })
          backoff = Math.min(backoff * 2, MAX_FAILURE_BACKOFF_MS)
        } catch (err) {
          if (stopping) break
          const f = failure('subscribeToAll')(err)
          if (!f.retriable) return E.left(f)
          log.warn({ err, retryInMs: backoff }, 'subscription to $all dropped; resubscribing from the last checkpoint')
          await sleep(backoff, (w) => {
            wake = w
          })
          backoff = Math.min(backoff * 2, MAX_FAILURE_BACKOFF_MS)
        } finally {
          await subscription.unsubscribe().catch((err: unknown) => log.debug({ err }, 'unsubscribing from a finished subscription failed'))
        }
      }
      return E.right(undefined)
    }

    const closed = run()
    const subscription: Subscription = {
      stop: async () => {
        stopping = true
        wake?.()
        if (unsubscribe !== undefined) await unsubscribe().catch((err: unknown) => log.debug({ err }, 'unsubscribing failed'))
        await closed
      },
      closed,
    }
    subscriptions.add(subscription)
    void closed.then(() => subscriptions.delete(subscription))
    return subscription
  }

  const close = async (): Promise<void> => {
    await Promise.all([...subscriptions].map((s) => s.stop()))
    await client.dispose()
  }

  // $all positions are byte offsets, not counts: count by reading forward, a page at a time, up to `cap`.
  const countAfter = (from: Position | undefined, cap: number): TE.TaskEither<ReadError, number> => async () => {
    let counted = 0
    let cursor = from
    while (counted < cap) {
      const page = await readAll({ ...(cursor === undefined ? {} : { from: cursor }), maxCount: Math.min(1000, cap - counted) })()
      if (E.isLeft(page)) return page
      const last = page.right.at(-1)
      if (last === undefined) break
      counted += page.right.length
      cursor = E.isLeft(last) ? last.left.position : last.right.position
    }
    return E.right(counted)
  }

  const headPosition = (): TE.TaskEither<EventStoreFailure, Position | undefined> =>
    TE.tryCatch(async () => {
      // $all backwards from its end: the first event that is not a system event is the head.
      const read = client.readAll({ direction: BACKWARDS, fromPosition: END })
      try {
        for await (const resolved of read) {
          const e = resolved.event
          if (e !== undefined && !isSystem(e)) return encodePosition(positionOf(e))
        }
        return undefined
      } finally {
        await read.cancel().catch((err: unknown) => log.debug({ err }, 'cancelling a finished read failed'))
      }
    }, failure('headPosition'))

  return { append, readStream, readAll, readCategory, countAfter, headPosition, subscribeToAll, close }
}
