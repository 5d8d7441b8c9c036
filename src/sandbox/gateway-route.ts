import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { EnvelopeWire } from '../domain/gateway/envelope.ts'
import { SIGN_TYPE, type Signer } from '../domain/gateway/signing.ts'
import { invalidParameters, rejectionReply, successReply, SANDBOX_ERRORS, type SandboxRejection } from './error-table.ts'
import { handleGatewayRequest, type EndpointDeps } from './gateway-endpoint.ts'
import type { GatewayFaults } from './gateway-faults.ts'
import { newTraceId } from './ids.ts'

export const GATEWAY_PATH = '/gateway'

export type GatewayRouteDeps = EndpointDeps & {
  readonly faults: GatewayFaults
  /** Sign answers with the gateway key (header `sign` over the envelope's fields, as `sign-type: RSA`). */
  readonly signResponses: boolean
  readonly signer: Signer
}

const headerText = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value)

const isJson = (contentType: string | undefined): boolean => contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType)

/** Sends an envelope; with `signResponses` its fields are signed like a request's (`sign` header). */
export const sendEnvelope = (deps: Pick<GatewayRouteDeps, 'signResponses' | 'signer'>, reply: FastifyReply, status: number, body: EnvelopeWire): FastifyReply => {
  if (deps.signResponses) void reply.header('sign-type', SIGN_TYPE).header('sign', deps.signer.sign(body))
  return reply.code(status).header('x-trace-id', body.trace_id).type('application/json; charset=utf-8').send(body)
}

const sendRejection = (deps: GatewayRouteDeps, reply: FastifyReply, rejection: SandboxRejection, traceId: string): FastifyReply => {
  const { status, body } = rejectionReply(rejection, traceId)
  if (rejection.retryAfterMs !== undefined) void reply.header('retry-after', String(Math.max(1, Math.ceil(rejection.retryAfterMs / 1000))))
  return sendEnvelope(deps, reply, status, body)
}

/** The answer of an injected 5xx: the envelope, though a client must treat any 5xx as an unknown outcome. */
const sendFault = (deps: GatewayRouteDeps, reply: FastifyReply, status: number, traceId: string): FastifyReply => {
  const entry = SANDBOX_ERRORS.injectedFault
  return sendEnvelope(deps, reply, status, { code: entry.code, message: `${entry.message} (HTTP ${String(status)})`, trace_id: traceId })
}

/** An injected timeout: the request is never answered; the connection stays open until the caller gives up. */
const hang = (reply: FastifyReply): undefined => {
  reply.hijack()
  return undefined
}

/** `POST`/`GET {base}/gateway`, with the faults of the control API around it. */
export const registerGatewayRoute = (app: FastifyInstance, deps: GatewayRouteDeps): void => {
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const traceId = newTraceId()
    const method = request.method === 'GET' ? 'GET' : 'POST'
    const fields: unknown = method === 'GET' ? request.query : request.body
    const service = typeof fields === 'object' && fields !== null && 'service' in fields && typeof fields.service === 'string' ? fields.service : undefined
    const fault = deps.faults.next(service)
    if (fault.latencyMs > 0) await sleep(fault.latencyMs)
    if (fault.hang?.phase === 'before') return hang(reply)
    if (fault.fail?.phase === 'before') return sendFault(deps, reply, fault.fail.status, traceId)

    const result =
      method === 'POST' && !isJson(request.headers['content-type'])
        ? E.left(invalidParameters([{ path: '', rule: 'the body must be JSON (Content-Type: application/json)' }]))
        : handleGatewayRequest(deps, { method, fields, sign: headerText(request.headers['sign']), signType: headerText(request.headers['sign-type']) })

    if (fault.hang?.phase === 'after') return hang(reply)
    if (fault.fail?.phase === 'after') return sendFault(deps, reply, fault.fail.status, traceId)
    if (E.isLeft(result)) return sendRejection(deps, reply, result.left, traceId)
    const { status, body } = successReply(result.right, traceId)
    return sendEnvelope(deps, reply, status, body)
  }
  app.route({ method: ['GET', 'POST'], url: GATEWAY_PATH, handler })
}
