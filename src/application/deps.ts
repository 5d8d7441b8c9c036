import type { Verifier } from '../domain/gateway/signing.ts'
import type { StatusTable } from '../domain/gateway/statuses.ts'
import type { Logger } from '../logger.ts'
import type { EventStore } from './ports/event-store.ts'
import type { StreamLocks } from './ports/job-lock.ts'
import type { GatewayPort } from './ports/gateway.ts'
import type { ReadModelQueries } from './ports/read-models.ts'
import type { AggregateStreamCache } from './stream-cache.ts'

export type { GatewayError, GatewayPort } from './ports/gateway.ts'

/** satang's own callback URLs, which it gives the gateway in place of the merchant's. */
export type CallbackUrls = {
  readonly notify: string
  readonly checkoutRedirect: string
  readonly subscriptionRedirect: string
}

/** Points in the create flow where a test may have the process killed (`SATANG_FAULT_CRASH_AFTER`). */
export type CrashPoint = 'PaymentRequested' | 'GatewayAnswer'

/** How unknown outcomes are chased right after they happen; the rest is resolved at the next start. */
export type ResolvePolicy = {
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /**
   * A "not found" answer is trusted only once this long has passed since the create was recorded: a
   * create still in flight (or queued at the gateway) must not be declared failed.
   */
  readonly notFoundAfterMs: number
  /** Gateway error codes that mean "no such order". */
  readonly notFoundCodes: ReadonlyArray<number>
}

/** What the recording services need: the store, the gateway, the clock, ids, and their settings. */
export type RecordingDeps = {
  readonly store: EventStore
  readonly gateway: GatewayPort
  /** Verifies redirect forms and notifications with the gateway's public key. */
  readonly gatewayVerifier: Verifier
  readonly merchantId: string
  readonly callbackUrls: () => CallbackUrls
  readonly statusTables: { readonly payment: StatusTable; readonly refund: StatusTable }
  readonly now: () => Date
  readonly newId: () => string
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  readonly log: Logger
  readonly resolve: ResolvePolicy
  /**
   * Who may act on a create whose outcome is not recorded, across every satang process on the database:
   * its sender while it is in flight, or one resolver (database locks, never process memory).
   */
  readonly streamLocks: StreamLocks
  /** Called after each crash point; kills the process when the test configured that point. */
  readonly crashPoint: (point: CrashPoint) => void
  /** Aborted when satang stops: background resolution ends. */
  readonly stopping: AbortSignal
  /** This process's cached stream states (`SATANG_STREAM_CACHE_SIZE`); absent = every command reads its stream. */
  readonly streamCache?: AggregateStreamCache
  /** The read models (projections), where reads are served from them; absent in unit tests of recording. */
  readonly readModels?: ReadModelQueries
  /** What is kept of untrusted callbacks; absent = the defaults (`DEFAULT_QUARANTINE_BUDGET`). */
  readonly quarantine?: QuarantineBudget
}

/**
 * How much of the untrusted callbacks is kept, per callback kind and Bangkok day, across every satang
 * process (read from the quarantine stream itself): at most `eventsPerDay` events and `bytesPerDay`
 * bytes of event data (`SATANG_QUARANTINE_DAY_EVENTS`, `SATANG_QUARANTINE_DAY_BYTES`), each keeping
 * at most `bodyBytes` of its body (`SATANG_QUARANTINE_BODY_BYTES`). Callbacks whose signature verified
 * (only the gateway can send those) are kept whatever the budget.
 */
export type QuarantineBudget = {
  readonly eventsPerDay: number
  readonly bytesPerDay: number
  readonly bodyBytes: number
}

/** Who caused a chain of events: the merchant API request or callback that started it. */
export type Cause = {
  /** The request (or job) id that started the chain; kept on every event of the chain. */
  readonly correlationId: string
  /** The id of the message or event that directly caused the event. */
  readonly causationId: string
  /** The API token's name, when a merchant API request caused it. */
  readonly actor?: string
}
