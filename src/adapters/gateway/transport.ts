import { Agent as HttpAgent, request as httpRequest, type AgentOptions, type ClientRequest, type IncomingHttpHeaders } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { Socket } from 'node:net'
import { TLSSocket } from 'node:tls'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'

export type HttpRequest = {
  readonly method: 'GET' | 'POST'
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
}

export type HttpResponse = {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/**
 * - `connect_timeout`: no connection within `connectMs` (nothing was sent);
 * - `timeout`: no complete response within `requestMs` of the start;
 * - `refused`: the connection could not be opened (ECONNREFUSED, unreachable);
 * - `reset`: the connection broke after it was open (ECONNRESET, EPIPE, socket hang up);
 * - `dns`: the host name did not resolve;
 * - `too_large`: the response body exceeded `maxResponseBytes`.
 */
export type HttpFailureKind = 'connect_timeout' | 'timeout' | 'refused' | 'reset' | 'dns' | 'too_large'

export type HttpFailure = {
  readonly kind: HttpFailureKind
  /** Whether the connection was open, so request bytes may have reached the server. */
  readonly sent: boolean
  /** The Node error code, when there is one (`ECONNREFUSED`, `EAI_AGAIN`…). */
  readonly code?: string
  /** The HTTP status, when the failure happened while reading a response. */
  readonly status?: number
  readonly cause?: unknown
}

/** Sends one HTTP request and reads the whole response; never retries. */
export type HttpTransport = {
  readonly send: (request: HttpRequest) => TE.TaskEither<HttpFailure, HttpResponse>
  /** Closes pooled keep-alive connections. */
  readonly close: () => void
}

export type HttpTransportOptions = {
  readonly connectMs: number
  readonly requestMs: number
  readonly maxResponseBytes?: number
  readonly maxSockets?: number
}

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME'])
const REFUSED_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])

const errorCode = (e: unknown): string | undefined =>
  e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined

const classify = (code: string | undefined, sent: boolean): HttpFailureKind => {
  if (code !== undefined && DNS_CODES.has(code)) return 'dns'
  if (code === 'ETIMEDOUT') return sent ? 'timeout' : 'connect_timeout'
  if (code !== undefined && REFUSED_CODES.has(code)) return 'refused'
  // ECONNRESET, EPIPE, "socket hang up" and anything unexpected: a break after the connection was open,
  // or a failure to open it when it never was.
  return sent ? 'reset' : 'refused'
}

/**
 * An HTTP/1.1 transport on node:http(s) with keep-alive connection pools. It tracks whether the
 * connection was open when a failure happened, which the client needs to tell "the gateway never saw
 * it" from "the gateway may have acted on it".
 */
export const makeHttpTransport = (options: HttpTransportOptions): HttpTransport => {
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
  // Node closes a pooled socket shortly before the server's `Keep-Alive: timeout=N` hint, which avoids
  // most resets of requests written onto a socket the server is closing.
  const agentOptions: AgentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64, scheduling: 'lifo' }
  const httpAgent = new HttpAgent(agentOptions)
  const httpsAgent = new HttpsAgent(agentOptions)

  const send =
    (r: HttpRequest): TE.TaskEither<HttpFailure, HttpResponse> =>
    () =>
      new Promise((resolve) => {
        let sent = false
        let settled = false
        let status: number | undefined
        const timers: NodeJS.Timeout[] = []
        const finish = (result: E.Either<HttpFailure, HttpResponse>): void => {
          if (settled) return
          settled = true
          timers.forEach(clearTimeout)
          resolve(result)
        }
        const fail = (kind: HttpFailureKind, cause?: unknown): void => {
          const code = errorCode(cause)
          finish(E.left({ kind, sent, cause, ...(code === undefined ? {} : { code }), ...(status === undefined ? {} : { status }) }))
        }

        const https = r.url.protocol === 'https:'
        const headers: Record<string, string> = { ...r.headers }
        if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body, 'utf8'))
        const req: ClientRequest = (https ? httpsRequest : httpRequest)(r.url, {
          method: r.method,
          headers,
          agent: https ? httpsAgent : httpAgent,
        })

        const abort = (kind: HttpFailureKind): void => {
          fail(kind)
          req.destroy()
        }
        const connectTimer = setTimeout(() => abort('connect_timeout'), options.connectMs)
        timers.push(connectTimer, setTimeout(() => abort(sent ? 'timeout' : 'connect_timeout'), options.requestMs))

        req.on('socket', (socket: Socket) => {
          const open = (): void => {
            sent = true
            clearTimeout(connectTimer)
          }
          if (!socket.connecting) open()
          else socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', open)
        })
        req.on('error', (e) => fail(classify(errorCode(e), sent), e))
        req.on('response', (res) => {
          status = res.statusCode
          const chunks: Buffer[] = []
          let size = 0
          res.on('data', (chunk: Buffer) => {
            size += chunk.length
            if (size > maxResponseBytes) abort('too_large')
            else chunks.push(chunk)
          })
          res.on('end', () => finish(E.right({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') })))
          res.on('error', (e) => fail(classify(errorCode(e), true), e))
          res.on('close', () => {
            if (!res.complete) fail('reset', new Error('connection closed before the response was complete'))
          })
        })
        req.end(r.body)
      })

  return {
    send,
    close: () => {
      httpAgent.destroy()
      httpsAgent.destroy()
    },
  }
}
