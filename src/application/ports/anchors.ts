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
  /** True when nothing was written: the last anchor (this one) already covers the position asked for (`AnchorWriteOptions.covering`). */
  readonly existing?: boolean
}

export type AnchorWriteOptions = {
  /**
   * A position the anchor must cover (the log's head when a job ended, say). Until the log is readable
   * up to it (every older append has ended), nothing is written and the answer is null; when the last
   * anchor covers it already, that anchor is the answer (`existing`), and none is written.
   */
  readonly covering?: Position
}

/**
 * Writes signed anchors of the event log (docs/audit.md "Tamper evidence"). `write` answers null when the log
 * has not moved since the last anchor (or, with `covering`, is not readable up to it yet).
 */
export type AnchorWriter = {
  readonly write: (reason: string, options?: AnchorWriteOptions) => TE.TaskEither<AnchorFailure, AnchorWritten | null>
}
