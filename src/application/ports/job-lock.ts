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
