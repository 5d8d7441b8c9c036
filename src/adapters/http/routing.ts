import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { invalidRequest, sendError } from './errors.ts'

/**
 * What the router could not route, in the API's error shape: an unknown path is 404 `not_found`; a
 * path satang serves asked with another method is 405 `method_not_allowed` with `Allow` (RFC 9110
 * 15.5.6); a URL it cannot read is 400 `invalid_request`. Paths are echoed only when short.
 */

/**
 * Longest path parameter the router passes on. Ids are at most 64 characters and their codecs say so,
 * naming the field; Node's 16 KiB header limit bounds the request line before this does.
 */
export const MAX_PATH_PARAM_LENGTH = 16 * 1024

const MAX_ECHOED_PATH = 120

/** The request's path as shown in a message: whole when short, else its start and its length. */
export const shownPath = (url: string): string => {
  const path = url.split('?')[0] ?? ''
  return path.length <= MAX_ECHOED_PATH ? path : `${path.slice(0, 40)}… (${String(path.length)} characters)`
}

/** Methods in the order `Allow` lists them. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const byMethodOrder = (a: string, b: string): number => {
  const rank = (m: string): number => (METHOD_ORDER.includes(m) ? METHOD_ORDER.indexOf(m) : METHOD_ORDER.length)
  return rank(a) - rank(b) || a.localeCompare(b)
}

/** Whether a concrete path fits a route pattern: `:name` takes one non-empty segment, `*` the rest. */
const fits = (pattern: ReadonlyArray<string>, path: ReadonlyArray<string>): boolean => {
  for (const [i, p] of pattern.entries()) {
    if (p === '*') return true
    const s = path[i]
    if (s === undefined) return false
    if (p.startsWith(':') ? s === '' : p !== s) return false
  }
  return pattern.length === path.length
}

/**
 * Keeps the routes added from now on (call it before adding them), and answers requests no route took:
 * 405 with `Allow` when their path is served with other methods, else 404.
 */
export const registerRoutingErrors = (app: FastifyInstance): void => {
  const routes = new Map<string, { readonly segments: ReadonlyArray<string>; readonly methods: Set<string> }>()
  app.addHook('onRoute', (route) => {
    const known = routes.get(route.url) ?? { segments: route.url.split('/'), methods: new Set<string>() }
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) known.methods.add(m.toUpperCase())
    routes.set(route.url, known)
  })
  const allowedFor = (url: string): ReadonlyArray<string> => {
    const path = (url.split('?')[0] ?? '').split('/')
    const allowed = new Set<string>()
    for (const r of routes.values()) if (fits(r.segments, path)) for (const m of r.methods) allowed.add(m)
    return [...allowed].sort(byMethodOrder)
  }
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedFor(request.url)
    if (allowed.length === 0) return sendError(reply, 404, { error: 'not_found', message: `no route ${request.method} ${shownPath(request.url)}` })
    return sendError(reply.header('allow', allowed.join(', ')), 405, {
      error: 'method_not_allowed',
      message: `${request.method} is not allowed on ${shownPath(request.url)}; allowed: ${allowed.join(', ')}`,
      allow: allowed,
    })
  })
}

/**
 * Fastify's `frameworkErrors`: a URL the router refused before any route saw it, answered in the API's
 * shape (fastify's own answer would echo the whole path).
 */
export const frameworkErrors = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
  void frameworkErrorAnswer(error, request, reply)
}

const frameworkErrorAnswer = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return invalidRequest(reply, [{ path: '', rule: 'the URL path must be valid percent-encoded UTF-8' }])
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return invalidRequest(reply, [{ path: '', rule: `each segment of the URL path must be at most ${String(MAX_PATH_PARAM_LENGTH)} characters` }])
    default:
      request.log.error({ err: error, url: shownPath(request.url) }, 'request failed in routing')
      return sendError(reply, 500, { error: 'internal', message: 'internal error' })
  }
}
