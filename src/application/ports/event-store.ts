import type * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import * as t from 'io-ts'
import type { EventToAppend } from '../../domain/events/envelope.ts'

export type { EventMetadata, EventToAppend, Json, JsonObject } from '../../domain/events/envelope.ts'

export interface PositionBrand {
  readonly Position: unique symbol
}
/**
 * A place in one store's global log. Opaque: only the store that produced it can interpret it.
 * Positions of one store are fixed-width, so plain byte-wise string comparison (`<`, or
 * `COLLATE "C"` in SQL) orders them as the log does.
 */
export type Position = t.Branded<string, PositionBrand>
/** Codec for a checkpoint read back from storage (a projection table, a file). */
export const Position = t.brand(t.string, (s): s is Position => s.length > 0, 'Position')

export type RecordedEvent = EventToAppend & {
  readonly streamName: string
  /** 0 for the first event of a stream, then 1, 2, … with no gaps. */
  readonly streamRevision: bigint
  readonly position: Position
  /** When the store committed the event. */
  readonly recordedAt: Date
}

/** `bigint`: the revision of the stream's last event must be exactly this. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint

export type AppendResult = {
  /** The revision of the last event appended: pass it as the expected revision of the next append. */
  readonly nextExpectedRevision: bigint
  /**
   * Where the last event appended sits in the global log. Not a safe checkpoint to start reading
   * from: with PostgreSQL, transactions still running may yet commit events that sort before it.
   * Take checkpoints from reads and subscriptions.
   */
  readonly position: Position
  /**
   * True when nothing was written because this very batch was stored already (an idempotent retry);
   * the result is then the original one. Absent when the adapter cannot tell.
   */
  readonly alreadyStored?: boolean
}

/** The stream is not where the writer expected it: re-read and decide again. */
export type WrongExpectedVersion = {
  readonly _tag: 'WrongExpectedVersion'
  readonly stream: string
  readonly expected: ExpectedRevision
  readonly actual: bigint | 'no_stream'
}

/** Some ids of the batch are already stored, but not as this same batch of this stream. */
export type EventIdConflict = {
  readonly _tag: 'EventIdConflict'
  readonly stream: string
  readonly eventIds: ReadonlyArray<string>
}

/** The append is malformed (empty batch, bad id, duplicate id in the batch, reserved metadata key…). */
export type InvalidAppend = {
  readonly _tag: 'InvalidAppend'
  readonly stream: string
  readonly reason: string
}

/** A position that this store did not produce. */
export type InvalidPosition = {
  readonly _tag: 'InvalidPosition'
  readonly position: string
}

/** An operational failure of the store (unreachable, timed out, out of resources…). */
export type EventStoreFailure = {
  readonly _tag: 'EventStoreFailure'
  readonly operation: string
  readonly retriable: boolean
  readonly cause: unknown
}

/** A stored event whose envelope cannot be decoded. Reported where it sits; never dropped. */
export type UndecodableEvent = {
  readonly _tag: 'UndecodableEvent'
  readonly stream: string
  readonly position: Position
  readonly streamRevision: bigint
  readonly eventId: string
  readonly reason: string
}

/** The subscriber's handler threw or rejected on the event at `position`; nothing after it was delivered. */
export type SubscriberFailed = {
  readonly _tag: 'SubscriberFailed'
  readonly position: Position
  readonly cause: unknown
}

export type AppendError = WrongExpectedVersion | EventIdConflict | InvalidAppend | EventStoreFailure
export type ReadError = InvalidPosition | EventStoreFailure
export type SubscriptionError = InvalidPosition | EventStoreFailure | SubscriberFailed

/** One event of a read: decoded, or reported as undecodable with its stream and position. */
export type ReadItem = E.Either<UndecodableEvent, RecordedEvent>

export type ReadStreamOptions = {
  /** Default `forward`. */
  readonly direction?: 'forward' | 'backward'
  /** Inclusive. Default: the first event (forward) or the last (backward). */
  readonly fromRevision?: bigint
  /** Default: no limit. */
  readonly maxCount?: number
}

export type ReadAllOptions = {
  /** Exclusive: the read starts after this position. Default: the start of the log. */
  readonly from?: Position
  /** Default 1000. */
  readonly maxCount?: number
}

export type SubscribeOptions = {
  /** A checkpoint: delivery starts after it. Default: the start of the log. */
  readonly from?: Position
  /** Only streams whose name starts with this prefix (a category such as `order-`). */
  readonly streamNamePrefix?: string
}

/**
 * The handler's promise is awaited before the next delivery (back-pressure). Store the item's
 * position as the checkpoint once the handler has done its work.
 */
export type SubscriptionHandler = (item: ReadItem) => Promise<void>

export type Subscription = {
  /** Stops after the delivery in progress, if any. (From inside the handler, call it without awaiting.) */
  readonly stop: () => Promise<void>
  /** Settles when the subscription ends: right after `stop`, left when it failed for good. */
  readonly closed: Promise<E.Either<SubscriptionError, void>>
}

/** One append of `appendToStreams`. */
export type StreamAppend = { readonly stream: string; readonly events: ReadonlyArray<EventToAppend>; readonly expected: 'no_stream' | bigint }

/** The event log: optimistic, idempotent appends to streams; ordered reads; a global log to follow. */
export type EventStore = {
  /** Appends a batch atomically. The same batch of ids appended again returns the original result and stores nothing. */
  readonly append: (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision) => TE.TaskEither<AppendError, AppendResult>
  /** A missing stream reads as empty. */
  readonly readStream: (stream: string, options?: ReadStreamOptions) => TE.TaskEither<EventStoreFailure, ReadonlyArray<ReadItem>>
  /**
   * Optional, for jobs that touch many streams (a reconciliation run): several whole streams in one
   * read, each in revision order; a missing stream is absent from the map. The same events `readStream`
   * gives for each, in one round trip.
   */
  readonly readStreams?: (streams: ReadonlyArray<string>) => TE.TaskEither<EventStoreFailure, ReadonlyMap<string, ReadonlyArray<ReadItem>>>
  /**
   * Optional, for jobs that append to many streams at once: several appends of distinct streams, each
   * with its own expectation (`no_stream` or an exact revision), in one round trip. Each append is
   * decided as `append` decides it (atomic per stream, idempotent, its own answer at the same index);
   * appends of different streams do not wait for or undo each other.
   */
  readonly appendToStreams?: (appends: ReadonlyArray<StreamAppend>) => TE.TaskEither<EventStoreFailure, ReadonlyArray<E.Either<AppendError, AppendResult>>>
  /** The global log forward, in log order. An empty page means the reader has caught up. */
  readonly readAll: (options?: ReadAllOptions) => TE.TaskEither<ReadError, ReadonlyArray<ReadItem>>
  /** The global log forward, restricted to streams whose name starts with `prefix`. */
  readonly readCategory: (prefix: string, options?: ReadAllOptions) => TE.TaskEither<ReadError, ReadonlyArray<ReadItem>>
  /**
   * How many events of the global log follow `from` (the start when absent), counting at most `cap`
   * (the answer is then `cap`). Projections report their lag with it.
   */
  readonly countAfter: (from: Position | undefined, cap: number) => TE.TaskEither<ReadError, number>
  /**
   * Where the last committed event of the global log sits (`undefined`: the log is empty). A reader
   * that has delivered everything up to it has seen the whole log as it stood when this was asked.
   * With PostgreSQL that event may not be readable yet (an older transaction of the cluster is still
   * running); readers reach it as soon as that ends.
   */
  readonly headPosition: () => TE.TaskEither<EventStoreFailure, Position | undefined>
  /** Catches up from the checkpoint, then follows live; every event exactly once, in log order. */
  readonly subscribeToAll: (options: SubscribeOptions, handler: SubscriptionHandler) => Subscription
  /** Stops this store's subscriptions and releases what the store opened itself (not injected pools or clients). */
  readonly close: () => Promise<void>
}
