import type { FastifyInstance } from 'fastify'
import type { Violation } from '../../domain/violations.ts'

/**
 * A JSON body refused for a key it carries, not for its syntax: answered 400 `invalid_request` with
 * these violations (errors.ts), like any other input error.
 */
export class BodyKeysRefused extends Error {
  override readonly name = 'BodyKeysRefused'
  readonly statusCode = 400
  readonly violations: ReadonlyArray<Violation>
  constructor(violations: ReadonlyArray<Violation>) {
    super(violations.map((v) => `${v.path === '' ? 'body' : v.path} ${v.rule}`).join('; '))
    this.violations = violations
  }
}

const at = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`)

/**
 * The keys fastify's JSON parser (secure-json-parse) refuses, against prototype poisoning: `__proto__`,
 * and `constructor` holding `prototype`. `JSON.parse` itself only creates own properties, so the parsed
 * value can be walked safely to say where they are.
 */
export const refusedKeys = (value: unknown, path = ''): ReadonlyArray<Violation> => {
  if (Array.isArray(value)) return value.flatMap((v: unknown, i) => refusedKeys(v, at(path, String(i))))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, v]: [string, unknown]): ReadonlyArray<Violation> => {
    if (key === '__proto__') return [{ path, rule: 'must not contain the key __proto__' }]
    if (key === 'constructor' && typeof v === 'object' && v !== null && Object.hasOwn(v, 'prototype')) return [{ path: at(path, key), rule: 'must not contain the key prototype' }]
    return refusedKeys(v, at(path, key))
  })
}

const keysRefusedIn = (text: string): ReadonlyArray<Violation> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // Not JSON at all: fastify's own error ("body must be valid JSON") stands.
    return []
  }
  return refusedKeys(parsed)
}

/**
 * JSON bodies are parsed by fastify's own parser, which refuses prototype poisoning but reports it as
 * invalid JSON; a body refused for that reason gets a violation naming the key and where it is instead.
 */
export const registerJsonBodies = (app: FastifyInstance): void => {
  const secure = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    // Fastify's default JSON parser is the callback kind: it answers through `done` and returns nothing.
    void secure(request, text, (err: Error | null, value?: unknown) => {
      if (err === null) {
        done(null, value)
        return
      }
      const refused = keysRefusedIn(text)
      done(refused.length > 0 ? new BodyKeysRefused(refused) : err, undefined)
    })
  })
}

/** Default longest string (or key) of a request body or query, in characters (`SATANG_HTTP_MAX_FIELD_LENGTH`). */
export const DEFAULT_MAX_FIELD_LENGTH = 4096

/** Every string and key of `value` longer than `max` characters, by where it is (at most 20 reported). */
export const overLongFields = (value: unknown, max: number, path = ''): ReadonlyArray<Violation> => {
  const found: Violation[] = []
  const rule = `must be at most ${String(max)} characters (SATANG_HTTP_MAX_FIELD_LENGTH)`
  const walk = (v: unknown, at_: string, depth: number): void => {
    if (found.length >= 20 || depth > 64) return
    if (typeof v === 'string') {
      if (v.length > max) found.push({ path: at_, rule })
      return
    }
    if (Array.isArray(v)) {
      v.forEach((x: unknown, i) => walk(x, at(at_, String(i)), depth + 1))
      return
    }
    if (typeof v !== 'object' || v === null) return
    for (const [key, x] of Object.entries(v)) {
      if (key.length > max) found.push({ path: at(at_, `${key.slice(0, 32)}…`), rule: `key ${rule}` })
      else walk(x, at(at_, key), depth + 1)
    }
  }
  walk(value, path, 0)
  return found
}

/**
 * Field length limits on every route: a body (JSON or form) or query holding a string or key longer
 * than `max` characters is answered 400 `invalid_request` naming each such field and the limit, before
 * any route sees it. (Callbacks read their own bodies and quarantine such a callback instead.)
 */
export const registerFieldLimits = (app: FastifyInstance, max: number): void => {
  app.addHook('preValidation', async (request) => {
    const violations = [...overLongFields(request.query, max, 'query'), ...(Buffer.isBuffer(request.body) ? [] : overLongFields(request.body, max))]
    if (violations.length > 0) throw new BodyKeysRefused(violations)
  })
}
