import type { Json, JsonObject } from './ports/event-store.ts'
import type { Violation } from '../domain/violations.ts'

/**
 * What a merchant API operation answers, before HTTP: the adapter maps each tag to a status code and
 * the JSON error shape. Views are JSON already.
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
  | { readonly _tag: 'GatewayUnavailable'; readonly message: string; readonly retriable: boolean }
  /** 503: the event store failed; the operation may be retried. */
  | { readonly _tag: 'Unavailable'; readonly message: string }

export const ok = (body: JsonObject, status: 'created' | 'ok' | 'accepted' = 'ok'): ApiResult => ({ _tag: 'Ok', status, body })
export const invalid = (violations: ReadonlyArray<Violation>): ApiResult => ({ _tag: 'InvalidRequest', violations })
export const notFound = (message: string): ApiResult => ({ _tag: 'NotFound', message })
export const conflict = (message: string, details?: Json): ApiResult => (details === undefined ? { _tag: 'Conflict', message } : { _tag: 'Conflict', message, details })
export const unavailable = (message: string): ApiResult => ({ _tag: 'Unavailable', message })

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
