import type * as t from 'io-ts'
import type { Violation } from '../violations.ts'
import { oneOf } from '../gateway/text-codecs.ts'

/*
 * The outcome of a request satang sent (or meant to send) to the gateway, shared by payments and
 * subscriptions. A create whose outcome is unknown is never sent again: it is resolved by a query (or,
 * for subscriptions, which the gateway cannot be queried for, by a callback).
 */

/** Why a request definitely did not take effect. */
export const RequestFailureReason = oneOf('RequestFailureReason', ['validation', 'gateway_rejected', 'not_sent', 'not_found_by_query'])
export type RequestFailureReason = t.TypeOf<typeof RequestFailureReason>

/**
 * - `validation`: the request broke the gateway spec's rules; nothing was sent.
 * - `gateway_rejected`: the gateway answered with an error `code` (not 200000).
 * - `not_sent`: the connection never opened (DNS, refused, connect timeout): the gateway cannot have seen it.
 * - `not_found_by_query`: after an unknown outcome, the gateway answered a query with "not found".
 */
export type RequestFailure =
  | { readonly reason: 'validation'; readonly violations: ReadonlyArray<Violation> }
  | { readonly reason: 'gateway_rejected'; readonly code: number; readonly message: string; readonly traceId: string }
  | { readonly reason: 'not_sent'; readonly detail: string }
  | { readonly reason: 'not_found_by_query'; readonly code: number; readonly message: string; readonly traceId: string }

/** Why the outcome of a sent request is unknown; `interrupted`: satang stopped between recording the request and its outcome. */
export const OutcomeUnknownReason = oneOf('OutcomeUnknownReason', ['timeout', 'reset', 'http_5xx', 'bad_response', 'interrupted'])
export type OutcomeUnknownReason = t.TypeOf<typeof OutcomeUnknownReason>

/** The flat form events keep of a `RequestFailure`. */
export const failureFields = (f: RequestFailure): {
  readonly reason: RequestFailureReason
  readonly code: number | null
  readonly message: string | null
  readonly traceId: string | null
  readonly violations: Array<Violation>
} => {
  switch (f.reason) {
    case 'validation':
      return { reason: f.reason, code: null, message: null, traceId: null, violations: [...f.violations] }
    case 'gateway_rejected':
    case 'not_found_by_query':
      return { reason: f.reason, code: f.code, message: f.message, traceId: f.traceId, violations: [] }
    case 'not_sent':
      return { reason: f.reason, code: null, message: f.detail, traceId: null, violations: [] }
  }
}
