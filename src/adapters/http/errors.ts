import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import type { Violation } from '../../domain/violations.ts'
import { BodyKeysRefused } from './json-body.ts'

/**
 * The error bodies of the merchant API. Every error is JSON `{ error, message?, … }`; input errors
 * list every violated rule: `{ error: 'invalid_request', violations: [{ path, rule }] }`.
 */
export type ApiError = {
  readonly error: string
  readonly message?: string
  readonly violations?: ReadonlyArray<Violation>
  readonly [extra: string]: unknown
}

export const invalidRequest = (reply: FastifyReply, violations: ReadonlyArray<Violation>): FastifyReply =>
  reply.code(400).send({ error: 'invalid_request', violations } satisfies ApiError)

export const sendError = (reply: FastifyReply, status: number, body: ApiError): FastifyReply => reply.code(status).send(body)

const statusOf = (e: FastifyError | Error): number => ('statusCode' in e && typeof e.statusCode === 'number' ? e.statusCode : 500)

/**
 * Fastify's own failures in the API's shape: an unparseable body is an input error like any other
 * (400 with a violation at the root; a key refused against prototype poisoning, where it is), a body
 * that is too large is 413, a media type the route does not take is 415. Anything else is a defect:
 * logged, answered 500 without details.
 */
export const registerErrorShapes = (app: FastifyInstance, bodyLimit: number): void => {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const status = statusOf(error)
    const code = 'code' in error ? error.code : undefined
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
      return sendError(reply, 415, { error: 'unsupported_media_type', message: 'send application/json (callbacks of forms: application/x-www-form-urlencoded)' })
    }
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) {
      return sendError(reply, 413, { error: 'payload_too_large', message: `the body is larger than ${String(bodyLimit)} bytes (SATANG_HTTP_BODY_LIMIT)`, limit_bytes: bodyLimit })
    }
    if (error instanceof BodyKeysRefused) return invalidRequest(reply, error.violations)
    if (status >= 400 && status < 500) {
      const rule = code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'body must not be empty' : code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError ? 'body must be valid JSON' : error.message
      return invalidRequest(reply, [{ path: '', rule }])
    }
    request.log.error({ err: error, url: request.url.split('?')[0] }, 'request failed')
    return sendError(reply, 500, { error: 'internal', message: 'internal error' })
  })
}
