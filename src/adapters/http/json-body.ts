import type { FastifyInstance } from 'fastify'
import { CHARACTER_RULES } from '../../domain/gateway/text-rules.ts'
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
 * Deepest nesting of objects and arrays a JSON body may have. The gateway's messages nest three levels
 * (`products.0.name`), an acknowledgement one; 32 leaves room for any open part of a message while
 * keeping every walk over a parsed body (key checks, field limits, codecs, redaction) shallow.
 */
export const MAX_JSON_DEPTH = 32

export const JSON_DEPTH_RULE = `must not nest objects and arrays more than ${String(MAX_JSON_DEPTH)} levels deep`

/**
 * Whether JSON text nests objects and arrays deeper than `max`, read from the text itself (brackets
 * outside strings): decided before `JSON.parse` or any walk over the value runs, in one pass without
 * recursion, so that 50,000 levels cost a scan of the bytes and nothing else. Text that is not JSON may
 * be miscounted; the parser refuses it anyway.
 */
export const nestsDeeperThan = (text: string, max: number = MAX_JSON_DEPTH): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/**
 * Every object key of a parsed body that breaks the character rules every text keeps (NUL and other
 * control characters, lone surrogates: domain/gateway/text-rules.ts), on the key's own path, as the
 * gateway message codecs report them. Whatever the route, a key reaches the log as text like a value.
 */
export const refusedKeyCharacters = (value: unknown, path = ''): ReadonlyArray<Violation> => {
  if (Array.isArray(value)) return value.flatMap((v: unknown, i) => refusedKeyCharacters(v, at(path, String(i))))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, v]: [string, unknown]): ReadonlyArray<Violation> => [
    ...CHARACTER_RULES.flatMap((rule) => rule(key) ?? []).map((rule) => ({ path: at(path, key), rule: `field name ${rule}` })),
    ...refusedKeyCharacters(v, at(path, key)),
  ])
}

/**
 * JSON bodies are parsed by fastify's own parser, which refuses prototype poisoning but reports it as
 * invalid JSON; a body refused for that reason gets a violation naming the key and where it is instead.
 * Before it runs, a body nested deeper than MAX_JSON_DEPTH is refused; after it, a key holding a
 * character the text rules refuse is (400 `invalid_request` naming it, on every route).
 */
export const registerJsonBodies = (app: FastifyInstance): void => {
  const secure = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (nestsDeeperThan(text)) {
      done(new BodyKeysRefused([{ path: '', rule: `body ${JSON_DEPTH_RULE}` }]), undefined)
      return
    }
    // Fastify's default JSON parser is the callback kind: it answers through `done` and returns nothing.
    void secure(request, text, (err: Error | null, value?: unknown) => {
      if (err === null) {
        const keys = refusedKeyCharacters(value)
        if (keys.length > 0) done(new BodyKeysRefused(keys.slice(0, 20)), undefined)
        else done(null, value)
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
