import type * as t from 'io-ts'
import { OneOfType } from '../domain/gateway/text-codecs.ts'

/**
 * JSON Schema (draft-07) from io-ts codecs, for the Kafka message schemas (kafka/schemas.ts) and the
 * response schemas of the OpenAPI document (http/openapi.ts), by walking the codec's structure: objects (`t.type`,
 * `t.partial`, `t.strict`/`t.exact`, intersections), dictionaries, unions, arrays, literals, key enumerations,
 * refinements and brands, and the basic types. A custom codec (`new t.Type(…)`) has no structure to
 * walk: it must be listed in `leaves` with its schema, or be a `OneOfType` (an enumeration). Anything
 * else fails with the codec's name and path, so a new kind of field cannot silently go undocumented.
 */

export type JsonSchema = { readonly [keyword: string]: unknown }

/** Schemas of custom codecs, by codec identity. */
export type LeafSchemas = ReadonlyMap<unknown, JsonSchema>

type Node = {
  readonly _tag?: string
  readonly name: string
  readonly props?: Readonly<Record<string, unknown>>
  readonly type?: unknown
  readonly types?: ReadonlyArray<unknown>
  readonly value?: unknown
  readonly keys?: Readonly<Record<string, unknown>>
  /** A dictionary's key and value codecs. */
  readonly domain?: unknown
  readonly codomain?: unknown
}

const isNode = (u: unknown): u is Node => typeof u === 'object' && u !== null && 'name' in u && typeof u.name === 'string'

const isObjectSchema = (s: JsonSchema): boolean => s['type'] === 'object' && s['properties'] !== undefined

const objectSchema = (props: Readonly<Record<string, unknown>>, required: boolean, exact: boolean, walk: (codec: unknown, path: string) => JsonSchema, path: string): JsonSchema => {
  const properties: Record<string, JsonSchema> = {}
  for (const [key, codec] of Object.entries(props)) properties[key] = walk(codec, `${path}.${key}`)
  return {
    type: 'object',
    properties,
    ...(required && Object.keys(props).length > 0 ? { required: Object.keys(props) } : {}),
    ...(exact ? { additionalProperties: false } : {}),
  }
}

/** Merges object schemas of an intersection into one (draft-07 `allOf` cannot combine `additionalProperties: false`). */
const mergeObjects = (parts: ReadonlyArray<JsonSchema>): JsonSchema => {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const p of parts) {
    Object.assign(properties, p['properties'])
    if (Array.isArray(p['required'])) required.push(...p['required'].filter((r): r is string => typeof r === 'string'))
  }
  const exact = parts.every((p) => p['additionalProperties'] === false)
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), ...(exact ? { additionalProperties: false } : {}) }
}

/** The JSON Schema of the encoded form (`O`) of `codec`. Throws on a codec it cannot describe, naming it and its path. */
export const jsonSchemaOf = (codec: t.Mixed, leaves: LeafSchemas, rootPath = '$'): JsonSchema => {
  const walk = (c: unknown, path: string): JsonSchema => {
    const leaf = leaves.get(c)
    if (leaf !== undefined) return leaf
    if (c instanceof OneOfType) return { type: 'string', enum: [...c.values] }
    if (!isNode(c)) throw new Error(`${path}: not an io-ts codec`)
    switch (c._tag) {
      case 'StringType':
        return { type: 'string' }
      case 'NumberType':
        return { type: 'number' }
      case 'BooleanType':
        return { type: 'boolean' }
      case 'NullType':
        return { type: 'null' }
      case 'UnknownType':
        return {}
      case 'LiteralType':
        return { const: c.value }
      case 'KeyofType':
        return { type: 'string', enum: Object.keys(c.keys ?? {}) }
      case 'InterfaceType':
        return objectSchema(c.props ?? {}, true, false, walk, path)
      case 'PartialType':
        return objectSchema(c.props ?? {}, false, false, walk, path)
      case 'ExactType': {
        const inner = walk(c.type, path)
        return isObjectSchema(inner) ? { ...inner, additionalProperties: false } : inner
      }
      case 'DictionaryType': {
        // Keys are strings in JSON; an enumeration of keys becomes their names.
        const keys = walk(c.domain, `${path}{key}`)
        const values = walk(c.codomain, `${path}{}`)
        return Array.isArray(keys['enum'])
          ? { type: 'object', properties: Object.fromEntries(keys['enum'].map((k) => [String(k), values])), additionalProperties: false }
          : { type: 'object', additionalProperties: values }
      }
      case 'ArrayType':
      case 'ReadonlyArrayType':
        return { type: 'array', items: walk(c.type, `${path}[]`) }
      case 'ReadonlyType':
      case 'RefinementType':
        // A refinement's predicate has no JSON Schema; the base type is what the schema can say.
        return walk(c.type, path)
      case 'UnionType': {
        const members = (c.types ?? []).map((m, i) => walk(m, `${path}|${String(i)}`))
        return { anyOf: members }
      }
      case 'IntersectionType': {
        const parts = (c.types ?? []).map((m) => walk(m, path))
        return parts.every(isObjectSchema) ? mergeObjects(parts) : { allOf: parts }
      }
      case undefined:
        throw new Error(`${path}: no JSON Schema for codec ${c.name} (a custom codec: add it to the leaf schemas)`)
      default:
        throw new Error(`${path}: no JSON Schema for codec ${c.name} (${c._tag})`)
    }
  }
  return walk(codec, rootPath)
}
