import type * as TE from 'fp-ts/lib/TaskEither.js'

/**
 * Locks that keep long-running jobs single across every satang process sharing a database: one
 * reconciliation run at a time per merchant, one scheduler acting. A lease is held until released or
 * until the process holding it dies (then it is free at once).
 */
export type JobResource = { readonly job: 'reconcile' | 'scheduler'; readonly merchantId: string }

export type Lease = {
  readonly release: () => Promise<void>
  /** Settles if the lock was lost without `release` (the connection holding it broke). */
  readonly lost: Promise<void>
}

export type LockFailure = { readonly _tag: 'LockFailure'; readonly retriable: boolean; readonly cause: unknown }

export type JobLock = {
  /** The lease, or null when another process holds the lock. */
  readonly tryAcquire: (resource: JobResource) => TE.TaskEither<LockFailure, Lease | null>
}

/** A stream's lock, held until released (or until the process holding it dies). */
export type StreamLease = { readonly release: () => Promise<void> }

/**
 * Per-stream locks shared by every satang process on one database (never process memory): the one
 * that may act on an order's create whose outcome is not recorded, i.e. its sender while the create is
 * in flight, or one resolver querying the gateway. `tryLock` never waits: null when anyone else (this
 * process included) holds the stream's lock.
 */
export type StreamLocks = {
  readonly tryLock: (stream: string) => TE.TaskEither<LockFailure, StreamLease | null>
}
