import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { Position } from './event-store.ts'

/** An anchor could not be written (the database failed); `retriable` as in kafkajs. */
export type AnchorFailure = { readonly _tag: 'AnchorFailure'; readonly operation: string; readonly retriable: boolean; readonly cause: unknown }

/** What an anchor states: the log's extent at `position`, and the digest of every stream's head there. */
export type AnchorWritten<A = unknown> = {
  readonly anchor: A
  readonly seq: bigint
  readonly position: Position | null
  readonly events: bigint
  readonly streams: bigint
  readonly headsDigest: string
}

/**
 * Writes signed anchors of the event log (docs/audit.md "Tamper evidence"). `write` answers null when the log
 * has not moved since the last anchor.
 */
export type AnchorWriter = {
  readonly write: (reason: string) => TE.TaskEither<AnchorFailure, AnchorWritten | null>
}
