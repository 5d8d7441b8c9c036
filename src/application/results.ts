import type { EventStoreFailure, Json, JsonObject } from './ports/event-store.ts'
import { describeCause, describeHandleError, type HandleError, type StreamUnreadable } from './command-handler.ts'
import type { Violation } from '../domain/violations.ts'
import type { CallbackKind } from '../domain/events/common/callback-rejected.ts'

/**
 * What a use case answers, in the application's words. The HTTP adapter alone turns each into a status
 * code and the JSON error shape (src/adapters/http/replies.ts). Views are JSON already. `cause` (of
 * the failures below) is for the log only: one line naming what failed underneath, never shown to the
 * caller and never carrying payloads.
 */
export type UseCaseResult =
  /** Done: `created` (a new order, refund or subscription), `ok` (read or replayed), `accepted` (recorded, its outcome still being resolved). */
  | { readonly _tag: 'Ok'; readonly status: 'created' | 'ok' | 'accepted'; readonly body: JsonObject }
  /** The input breaks rules: every violated rule, by field. */
  | { readonly _tag: 'InvalidRequest'; readonly violations: ReadonlyArray<Violation> }
  | { readonly _tag: 'NotFound'; readonly message: string }
  /** The request contradicts what is recorded (another order under the same id, …). */
  | { readonly _tag: 'Conflict'; readonly message: string; readonly details?: Json }
  /** The gateway refused the request with an error code; recorded. */
  | { readonly _tag: 'GatewayRejected'; readonly code: number; readonly message: string; readonly traceId: string; readonly body?: JsonObject }
  /** The gateway could not be reached or answered nonsense; nothing was changed at the gateway. */
  | { readonly _tag: 'GatewayUnavailable'; readonly message: string; readonly retriable: boolean; readonly cause?: string }
  /** The event store failed; the operation may be retried. */
  | { readonly _tag: 'Unavailable'; readonly message: string; readonly cause?: string }

export const ok = (body: JsonObject, status: 'created' | 'ok' | 'accepted' = 'ok'): UseCaseResult => ({ _tag: 'Ok', status, body })
export const invalid = (violations: ReadonlyArray<Violation>): UseCaseResult => ({ _tag: 'InvalidRequest', violations })
export const notFound = (message: string): UseCaseResult => ({ _tag: 'NotFound', message })
export const conflict = (message: string, details?: Json): UseCaseResult => (details === undefined ? { _tag: 'Conflict', message } : { _tag: 'Conflict', message, details })
export const unavailable = (message: string, cause?: string): UseCaseResult => (cause === undefined ? { _tag: 'Unavailable', message } : { _tag: 'Unavailable', message, cause })

/** A stream that could not be read: unavailable, with the reason for the log. */
export const unreadable = (e: StreamUnreadable | EventStoreFailure): UseCaseResult =>
  unavailable('the event store could not be read', e._tag === 'EventStoreFailure' ? `event store ${e.operation} failed: ${describeCause(e.cause)}` : describeHandleError(e, () => ''))

/**
 * A command that could not be recorded. An append the store refuses as malformed (InvalidAppend, such
 * as text PostgreSQL cannot store) is the request's doing: repeating it cannot help, so it is invalid
 * input naming the problem, never a retriable failure. Every other failure is `Unavailable`.
 */
export const notRecorded = <R>(e: HandleError<R>, describeRejection: (r: R) => string): UseCaseResult => {
  if (e._tag === 'InvalidAppend') return invalid([{ path: '', rule: `cannot be recorded: ${e.reason}` }])
  const message = `the event store could not record it: ${describeHandleError(e, describeRejection)}`
  return e._tag === 'EventStoreFailure' ? unavailable(message, describeCause(e.cause)) : unavailable(message)
}

/**
 * What a callback endpoint answers. `recorded`: verified and recorded (notifications answer `SUCCESS`;
 * redirects send the payer on). `rejected`: kept as CallbackRejected, no state change.
 */
export type CallbackResult =
  | { readonly _tag: 'Recorded'; readonly redirectTo: string | null; readonly status: string | null }
  | {
      readonly _tag: 'Rejected'
      readonly reason: 'bad_signature' | 'undecodable'
      readonly detail: string
      readonly violations: ReadonlyArray<Violation>
      /** Set when the quarantine budget of this callback kind for the day was spent: counted, not kept. */
      readonly overBudget?: CallbackKind
    }
  /** Verified, but about an order, refund or subscription satang does not know: not recorded; the gateway will retry. */
  | { readonly _tag: 'Unknown'; readonly message: string }
  | { readonly _tag: 'Unavailable'; readonly message: string }
