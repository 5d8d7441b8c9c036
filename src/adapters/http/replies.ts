import type { FastifyReply } from 'fastify'
import type { UseCaseResult } from '../../application/results.ts'
import { invalidRequest, sendError } from './errors.ts'

/**
 * Every 5xx is logged with its cause (the result's `cause`, else its message): the route, never the
 * body, so no payer data. The request id comes with the request's logger.
 */
const failed = (reply: FastifyReply, status: number, r: Extract<UseCaseResult, { readonly _tag: 'GatewayUnavailable' | 'Unavailable' }>): FastifyReply => {
  reply.log.error({ status, error: r._tag, cause: r.cause ?? r.message, method: reply.request.method, route: reply.request.routeOptions.url }, `answered ${String(status)}: ${r.message}`)
  return reply
}

/**
 * The HTTP answer of a use case result: the one place that knows the status codes (see docs/merchant-api.md
 * "Errors" for the table). created 201, ok 200, accepted 202, invalid 400, not found 404,
 * conflict 409, gateway rejected 422, gateway unavailable 503 (retriable) or 502, store unavailable 503.
 */
export const replyWith = (reply: FastifyReply, r: UseCaseResult): FastifyReply => {
  switch (r._tag) {
    case 'Ok':
      return reply.code(r.status === 'created' ? 201 : r.status === 'accepted' ? 202 : 200).send(r.body)
    case 'InvalidRequest':
      return invalidRequest(reply, r.violations)
    case 'NotFound':
      return sendError(reply, 404, { error: 'not_found', message: r.message })
    case 'Conflict':
      return sendError(reply, 409, { error: 'conflict', message: r.message, ...(r.details === undefined ? {} : { details: r.details }) })
    case 'GatewayRejected':
      return sendError(reply, 422, {
        error: 'gateway_rejected',
        message: r.message,
        code: r.code,
        trace_id: r.traceId,
        ...(r.body === undefined ? {} : { resource: r.body }),
      })
    case 'GatewayUnavailable': {
      const status = r.retriable ? 503 : 502
      return sendError(failed(reply, status, r), status, { error: 'gateway_unavailable', message: r.message, retriable: r.retriable })
    }
    case 'Unavailable':
      return sendError(failed(reply, 503, r), 503, { error: 'unavailable', message: r.message, retriable: true })
    default:
      return r satisfies never
  }
}
