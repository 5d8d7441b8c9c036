import * as t from 'io-ts'
import type { Json, JsonObject } from './envelope.ts'

/**
 * An object literal's kind of object (what JSON.parse makes, or one with no prototype): a class
 * instance is not, though it is an object (a Date, a Map or a Buffer would pass a typeof check, and
 * JSON.stringify turns them into a string, `{}` or an array of bytes).
 */
const isPlainObject = (u: unknown): u is Readonly<Record<string, unknown>> => {
  if (typeof u !== 'object' || u === null) return false
  const proto: unknown = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/** Whether `u` is JSON as events store it: finite numbers, no `undefined`, no class instances but plain objects and arrays. */
export const isJson = (u: unknown): u is Json => {
  if (u === null || typeof u === 'string' || typeof u === 'boolean') return true
  if (typeof u === 'number') return Number.isFinite(u)
  // Loops rather than every/values: this walks every payload of every event decoded.
  if (Array.isArray(u)) {
    for (const v of u) if (!isJson(v)) return false
    return true
  }
  if (isPlainObject(u)) {
    for (const k in u) if (!isJson(u[k])) return false
    return true
  }
  return false
}

export const isJsonObject = (u: unknown): u is JsonObject => isPlainObject(u) && isJson(u)

/** Codec of a JSON object kept as is (a raw payload). */
export const JsonObjectCodec = new t.Type<JsonObject, JsonObject, unknown>(
  'JsonObject',
  isJsonObject,
  (u, c) => (isJsonObject(u) ? t.success(u) : t.failure(u, c, 'must be a JSON object')),
  t.identity,
)

/**
 * A decoded message as JSON: `bigint` as its digit string, `Date` as its ISO instant; `undefined` object
 * members are left out (as JSON.stringify does) and other non-JSON values become `null`.
 */
export const toJson = (u: unknown): Json => {
  if (u === null || typeof u === 'string' || typeof u === 'boolean') return u
  if (typeof u === 'number') return Number.isFinite(u) ? u : null
  if (typeof u === 'bigint') return u.toString()
  if (u instanceof Date) return Number.isNaN(u.getTime()) ? null : u.toISOString()
  if (Array.isArray(u)) return u.map(toJson)
  if (isPlainObject(u)) return toJsonObject(u)
  return null
}

/**
 * Members are defined, not assigned: a member named `__proto__` (JSON.parse makes one from
 * `{"__proto__": …}`) stays a member of the result instead of setting its prototype, or being dropped.
 */
export const toJsonObject = (fields: Readonly<Record<string, unknown>>): JsonObject => {
  const members: Array<[string, Json]> = []
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) members.push([key, toJson(value)])
  return Object.fromEntries(members)
}
