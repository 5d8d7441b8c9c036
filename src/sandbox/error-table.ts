import { SUCCESS_CODE, SUCCESS_MESSAGE, type EnvelopeWire } from '../domain/gateway/envelope.ts'
import { formatViolations, type Violation } from '../domain/violations.ts'

/*
 * The gateway spec shows no error codes, messages or HTTP statuses ("not shown"). These are the
 * sandbox's, documented in docs/merchant-api.md "Sandbox error codes". Business errors are 4xx with the envelope: the merchant client
 * reads them as a `GatewayRejected` with the code. Only a defect of the sandbox (or an injected fault)
 * is 5xx, which a client must treat as an unknown outcome.
 */
export const SANDBOX_ERRORS = {
  invalidParameter: { code: 400001, status: 400, message: 'invalid parameter' },
  duplicateId: { code: 400002, status: 409, message: 'duplicate id' },
  unknownMerchant: { code: 401001, status: 401, message: 'unknown merchant_id' },
  badSignature: { code: 401002, status: 401, message: 'bad signature' },
  notFound: { code: 404001, status: 404, message: 'not found' },
  invalidState: { code: 409001, status: 409, message: 'not allowed in the current state' },
  rateLimited: { code: 429001, status: 429, message: 'rate limited' },
  internal: { code: 500001, status: 500, message: 'internal error' },
  injectedFault: { code: 503001, status: 503, message: 'injected fault: service unavailable' },
} as const

export type SandboxErrorKind = keyof typeof SANDBOX_ERRORS

/** A rejection of one gateway request: the kind picks code and HTTP status; `detail` completes the message. */
export type SandboxRejection = {
  readonly kind: SandboxErrorKind
  readonly detail?: string
  readonly data?: unknown
  /** For `rateLimited`: the `Retry-After`. */
  readonly retryAfterMs?: number
}

export const reject = (kind: SandboxErrorKind, detail?: string, data?: unknown): SandboxRejection => ({
  kind,
  ...(detail === undefined ? {} : { detail }),
  ...(data === undefined ? {} : { data }),
})

/** 429001, with `data.retry_after_ms` and the `Retry-After` header. */
export const rateLimited = (retryAfterMs: number): SandboxRejection => ({
  ...reject('rateLimited', `try again in ${String(retryAfterMs)} ms`, { retry_after_ms: retryAfterMs }),
  retryAfterMs,
})

/** 400001 listing every violated rule: in the message (one `path: rule` per `; `) and as `data.violations`. */
export const invalidParameters = (violations: ReadonlyArray<Violation>): SandboxRejection =>
  reject('invalidParameter', formatViolations(violations).split('\n').join('; '), { violations })

/** The HTTP status and envelope of a rejection. */
export const rejectionReply = (r: SandboxRejection, traceId: string): { readonly status: number; readonly body: EnvelopeWire } => {
  const entry = SANDBOX_ERRORS[r.kind]
  return {
    status: entry.status,
    body: {
      code: entry.code,
      message: r.detail === undefined ? entry.message : `${entry.message}: ${r.detail}`,
      ...(r.data === undefined ? {} : { data: r.data }),
      trace_id: traceId,
    },
  }
}

/** A success envelope; `data` absent for subscription cancel. */
export const successReply = (data: unknown, traceId: string): { readonly status: number; readonly body: EnvelopeWire } => ({
  status: 200,
  body: { code: SUCCESS_CODE, message: SUCCESS_MESSAGE, ...(data === undefined ? {} : { data }), trace_id: traceId },
})
