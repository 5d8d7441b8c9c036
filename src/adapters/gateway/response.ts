import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { envelopeOf, SUCCESS_CODE } from '../../domain/gateway/envelope.ts'
import type { GatewayOperation } from '../../domain/gateway/operation.ts'
import type { Violation } from '../../domain/violations.ts'
import { decodeAll } from '../../domain/violations.ts'
import type { DecodeFailed, GatewayRejected, TransportFailed } from '../../application/ports/gateway.ts'
import type { Verifier } from '../../domain/gateway/signing.ts'
import type { HttpResponse } from './transport.ts'

/** A decoded success. */
export type Answer<Res> = {
  readonly data: Res
  readonly message: string
  readonly traceId: string
  readonly httpStatus: number
}

export type ResponseError = GatewayRejected | TransportFailed | DecodeFailed

export type ResponseOptions = {
  /** Checks the gateway's signature on responses; the spec does not show one, so this is opt-in. */
  readonly verifier?: Verifier
  /** Gateway codes that mean "try again later" (rate limiting); such rejections are retriable. */
  readonly retriableCodes: ReadonlySet<number>
}

const BODY_KEPT = 4096
// 408 and 429 ask the client to come back later; other 4xx will not get better by repeating.
const RETRIABLE_STATUS = new Set([408, 429])

const parseJson = (text: string): E.Either<string, unknown> =>
  E.tryCatch(
    () => JSON.parse(text),
    (e) => (e instanceof Error ? e.message : 'invalid JSON'),
  )

const isSuccessStatus = (status: number): boolean => status >= 200 && status < 300

/**
 * `Retry-After` in ms (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), or undefined when absent or
 * unreadable. `now` is the receiving instant, for a date.
 */
export const retryAfterMsOf = (header: string | string[] | undefined, now: number): number | undefined => {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * Reads one HTTP response of `operation`: 5xx is a transport failure; otherwise the body must be the
 * envelope (on a 2xx) or the status itself is the failure; a code other than 200000 is a rejection;
 * `data` is decoded with the operation's response codec.
 *
 * Response signatures (when a verifier is configured) are our default, not the spec's: a `sign` header
 * over the envelope's top-level fields, canonicalized like a request.
 */
export const interpretResponse = <Req, Res>(
  operation: GatewayOperation<Req, Res>,
  res: HttpResponse,
  options: ResponseOptions,
): E.Either<ResponseError, Answer<Res>> => {
  const name = operation.name
  const json = parseJson(res.body)
  // Read leniently first, so that a DecodeFailed of a bad `data` still names the trace_id.
  const fields = E.isRight(json) && t.UnknownRecord.is(json.right) ? json.right : undefined
  const traceId = typeof fields?.['trace_id'] === 'string' && fields['trace_id'] !== '' ? fields['trace_id'] : undefined
  const decodeFailed = (violations: ReadonlyArray<Violation>): DecodeFailed => ({
    _tag: 'DecodeFailed',
    operation: name,
    violations,
    ...(traceId === undefined ? {} : { traceId }),
    httpStatus: res.status,
    body: res.body.slice(0, BODY_KEPT),
    retriable: false,
  })
  const retryAfterMs = retryAfterMsOf(res.headers['retry-after'], Date.now())
  const retryAfter = retryAfterMs === undefined ? {} : { retryAfterMs }
  const statusFailed = (reason: 'http_5xx' | 'http_status'): TransportFailed => ({
    _tag: 'TransportFailed',
    operation: name,
    reason,
    status: res.status,
    sent: true,
    ...(traceId === undefined ? {} : { traceId }),
    retriable: reason === 'http_5xx' || RETRIABLE_STATUS.has(res.status),
    ...retryAfter,
  })

  if (res.status >= 500) return E.left(statusFailed('http_5xx'))
  if (E.isLeft(json)) {
    return E.left(isSuccessStatus(res.status) ? decodeFailed([{ path: '', rule: `must be JSON (${json.left})` }]) : statusFailed('http_status'))
  }
  // The domain's envelope codec: code, message and trace_id, and on success `data` with the response codec.
  const decoded = decodeAll(envelopeOf(operation.response), json.right)
  if (E.isLeft(decoded)) return E.left(isSuccessStatus(res.status) || fields?.['code'] === SUCCESS_CODE ? decodeFailed(decoded.left) : statusFailed('http_status'))
  const reply = decoded.right

  if (options.verifier !== undefined && fields !== undefined) {
    const header = res.headers['sign']
    const verdict = options.verifier.verify(fields, typeof header === 'string' ? header : '')
    if (!verdict.valid) return E.left(decodeFailed([{ path: 'sign', rule: `response signature: ${verdict.reason}` }]))
  }

  if (reply._tag === 'GatewayError') {
    return E.left({
      _tag: 'GatewayRejected',
      operation: name,
      code: reply.code,
      message: reply.message,
      traceId: reply.trace_id,
      httpStatus: res.status,
      retriable: options.retriableCodes.has(reply.code),
      ...retryAfter,
    })
  }

  const answer = (data: Res): Answer<Res> => ({ data, message: reply.message, traceId: reply.trace_id, httpStatus: res.status })
  // `data` is null only when the operation has no response codec (operation.ts: subscription cancel, whose
  // `Res` is `null`) or when its codec itself decoded a null; either way it is the operation's `Res`.
  return E.right(answer(reply.data === null ? (reply.data as Res) : reply.data))
}
