import type { EventStoreFailure, Json, JsonObject } from './ports/event-store.ts'
import { describeCause, describeHandleError, type HandleError, type StreamUnreadable } from './command-handler.ts'
import type { Violation } from '../domain/violations.ts'

/**
 * What a merchant API operation answers, before HTTP: the adapter maps each tag to a status code and
 * the JSON error shape. Views are JSON already. `cause` (of the 5xx answers) is for the log only: one
 * line naming what failed underneath, never sent to the client and never carrying payloads.
 */
export type ApiResult =
  /** `created` (201), `ok` (200), `accepted` (202: recorded, outcome still being resolved). */
  | { readonly _tag: 'Ok'; readonly status: 'created' | 'ok' | 'accepted'; readonly body: JsonObject }
  /** 400: every violated rule. */
  | { readonly _tag: 'InvalidRequest'; readonly violations: ReadonlyArray<Violation> }
  /** 404. */
  | { readonly _tag: 'NotFound'; readonly message: string }
  /** 409: the request contradicts what is recorded (another order under the same id, …). */
  | { readonly _tag: 'Conflict'; readonly message: string; readonly details?: Json }
  /** 422: the gateway refused the request with an error code; recorded. */
  | { readonly _tag: 'GatewayRejected'; readonly code: number; readonly message: string; readonly traceId: string; readonly body?: JsonObject }
  /** 502/503: the gateway could not be reached or answered nonsense; nothing was changed at the gateway. */
  | { readonly _tag: 'GatewayUnavailable'; readonly message: string; readonly retriable: boolean; readonly cause?: string }
  /** 503: the event store failed; the operation may be retried. */
  | { readonly _tag: 'Unavailable'; readonly message: string; readonly cause?: string }

export const ok = (body: JsonObject, status: 'created' | 'ok' | 'accepted' = 'ok'): ApiResult => ({ _tag: 'Ok', status, body })
export const invalid = (violations: ReadonlyArray<Violation>): ApiResult => ({ _tag: 'InvalidRequest', violations })
export const notFound = (message: string): ApiResult => ({ _tag: 'NotFound', message })
export const conflict = (message: string, details?: Json): ApiResult => (details === undefined ? { _tag: 'Conflict', message } : { _tag: 'Conflict', message, details })
export const unavailable = (message: string, cause?: string): ApiResult => (cause === undefined ? { _tag: 'Unavailable', message } : { _tag: 'Unavailable', message, cause })

/** A stream that could not be read: 503, with the reason for the log. */
export const unreadable = (e: StreamUnreadable | EventStoreFailure): ApiResult =>
  unavailable('the event store could not be read', e._tag === 'EventStoreFailure' ? `event store ${e.operation} failed: ${describeCause(e.cause)}` : describeHandleError(e, () => ''))

/**
 * A command that could not be recorded. An append the store refuses as malformed (InvalidAppend, such
 * as text PostgreSQL cannot store) is the request's doing: repeating it cannot help, so it is a 400
 * naming the problem, never a retriable 503. Every other failure is 503.
 */
export const notRecorded = <R>(e: HandleError<R>, describeRejection: (r: R) => string): ApiResult => {
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
  | { readonly _tag: 'Rejected'; readonly reason: 'bad_signature' | 'undecodable'; readonly detail: string; readonly violations: ReadonlyArray<Violation> }
  /** Verified, but about an order, refund or subscription satang does not know: not recorded; the gateway will retry. */
  | { readonly _tag: 'Unknown'; readonly message: string }
  | { readonly _tag: 'Unavailable'; readonly message: string }
