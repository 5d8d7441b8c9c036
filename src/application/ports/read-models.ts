import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { JsonObject } from '../../domain/events/envelope.ts'
import type { Refund } from '../../domain/refund/index.ts'
import type { Subscription } from '../../domain/subscription/index.ts'
import type { Position, RecordedEvent } from './event-store.ts'

/** A value a read model keeps for one stream, with the position of the last event it applied there. */
export type Projected<A> = { readonly value: A; readonly position: string }

/** A read model could not be read (unreachable, not migrated, a row that does not decode). */
export type ReadModelFailure = {
  readonly _tag: 'ReadModelFailure'
  readonly operation: string
  readonly retriable: boolean
  /** The read model's tables do not exist (yet): callers read the event log instead. */
  readonly missing: boolean
  readonly cause: unknown
}

/** The creates awaiting their outcome, as of the `orders` read model's checkpoint. */
export type OpenCreates = { readonly streams: ReadonlySet<string>; readonly checkpoint: Position | undefined }

/**
 * The reads of the read models the use cases need. The projections implement them over the tables
 * they own (src/projections/queries.ts). Every answer may lag the event log: callers compare the
 * position with the stream's head before trusting a row.
 */
export type ReadModelQueries = {
  /** The payment view kept for an order stream, or undefined when there is no row. */
  readonly paymentView: (stream: string) => TE.TaskEither<ReadModelFailure, Projected<JsonObject> | undefined>
  readonly refund: (stream: string) => TE.TaskEither<ReadModelFailure, Projected<Refund> | undefined>
  readonly subscription: (stream: string) => TE.TaskEither<ReadModelFailure, Projected<Subscription> | undefined>
  /** Order streams whose create awaits its outcome, as far as the `orders` checkpoint has come. */
  readonly openCreates: () => TE.TaskEither<ReadModelFailure, OpenCreates>
  /** The events of `stream` as the audit log keeps them, in stream order (possibly a prefix of the stream). */
  readonly auditEvents: (stream: string) => TE.TaskEither<ReadModelFailure, ReadonlyArray<RecordedEvent>>
}
