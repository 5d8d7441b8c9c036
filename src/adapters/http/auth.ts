import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { ApiScope, KnownToken, TokenMatcher } from './api-tokens.ts'

/**
 * Bearer-token authentication of `/v1`. No token or an unknown one → 401 (with
 * `WWW-Authenticate: Bearer`); a known token without the route's scope → 403. The presented token is
 * never logged or echoed; only the token's configured name is kept, for logs and event metadata.
 */

const tokens = new WeakMap<FastifyRequest, KnownToken>()

/** The token that authenticated this request (set by `requireScope`). */
export const tokenOf = (request: FastifyRequest): KnownToken | undefined => tokens.get(request)

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i

const unauthorized = (reply: FastifyReply, message: string): FastifyReply =>
  reply
    .code(401)
    .header('www-authenticate', 'Bearer realm="satang"')
    .send({ error: 'unauthorized', message })

export const requireScope =
  (matcher: TokenMatcher, scope: ApiScope): preHandlerAsyncHookHandler =>
  async (request, reply) => {
    const header = request.headers.authorization
    if (header === undefined || header === '') return unauthorized(reply, 'an Authorization: Bearer <token> header is required')
    const m = BEARER.exec(header)
    const presented = m?.[1]
    if (presented === undefined) return unauthorized(reply, 'the Authorization header must be Bearer <token>')
    const token = matcher(presented)
    if (token === undefined) return unauthorized(reply, 'the bearer token is not valid')
    if (!token.scopes.includes(scope)) {
      request.log.info({ tokenName: token.name, scope }, 'token lacks the scope')
      return reply.code(403).send({ error: 'forbidden', message: `the token ${token.name} lacks the scope ${scope}`, required_scope: scope })
    }
    tokens.set(request, token)
    return undefined
  }
