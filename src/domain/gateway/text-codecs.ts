import * as t from 'io-ts'
import { contextFor } from './checked-record.ts'
import { CHARACTER_RULES, type TextRule } from './text-rules.ts'

export type { TextRule } from './text-rules.ts'

/**
 * Builders of string codecs for gateway fields. Decoded values stay the exact wire text: the signature
 * covers that text, so nothing is trimmed, normalised or converted here.
 */

/**
 * The spec's Len column is a maximum. It does not say bytes or characters; we count Unicode code
 * points, so a Thai description of 256 characters fits `order_desc` (256).
 */
export const lengthOf = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

export const maxLength =
  (max: number): TextRule =>
  (s) =>
    lengthOf(s) > max ? `must be at most ${String(max)} characters` : undefined

export const matches =
  (re: RegExp, rule: string): TextRule =>
  (s) =>
    re.test(s) ? undefined : rule

/**
 * A string codec reporting every broken rule: the character rules of every text (text-rules.ts: no
 * NUL or other control characters, no lone surrogates), then `rules`. An empty string breaks only
 * "must not be empty" (the canonical form drops empty fields, so an empty value would not even be
 * signed); `allowEmpty` lifts that.
 */
export const textWith = (name: string, rules: ReadonlyArray<TextRule>, allowEmpty = false): t.Type<string, string, unknown> => {
  const all = [...CHARACTER_RULES, ...rules]
  const broken = (s: string): string[] => (s === '' && !allowEmpty ? ['must not be empty'] : all.flatMap((rule) => rule(s) ?? []))
  return new t.Type<string, string, unknown>(
    name,
    (u): u is string => typeof u === 'string' && broken(u).length === 0,
    (u, c) => {
      if (u === undefined) return t.failure(u, c, 'is required')
      if (typeof u !== 'string') return t.failure(u, c, 'must be a string')
      const rules = broken(u)
      return rules.length === 0 ? t.success(u) : t.failures(rules.map((message) => ({ value: u, context: c, message })))
    },
    t.identity,
  )
}

/** A string field of declared length `max` (Len column) with optional extra rules. */
export const text = (name: string, max: number, ...rules: TextRule[]): t.Type<string, string, unknown> =>
  textWith(name, [maxLength(max), ...rules])

/** A string whose length the spec does not declare (e.g. `sign` of endpoint 5, Customer fields). */
export const anyText = (name: string): t.Type<string, string, unknown> => textWith(name, [])

/** `A`, `A or B`, `A, B or C`: how rule texts list allowed values. */
export const listOr = (values: ReadonlyArray<string>): string =>
  values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${String(values[values.length - 1])}`

/** One of a fixed set of strings (an enumeration of the spec), with the rule naming the allowed values. */
export class OneOfType<V extends string> extends t.Type<V, string, unknown> {
  /** The allowed values, in the order given (for documentation and JSON Schemas). */
  readonly values: ReadonlyArray<V>
  constructor(name: string, values: ReadonlyArray<V>) {
    const isMember = (u: unknown): u is V => values.some((v) => v === u)
    super(
      name,
      isMember,
      (u, c) => {
        if (u === undefined) return t.failure(u, c, 'is required')
        return isMember(u) ? t.success(u) : t.failure(u, c, `must be ${listOr(values)}`)
      },
      t.identity,
    )
    this.values = values
  }
}

export const oneOf = <const V extends readonly [string, ...string[]]>(name: string, values: V): OneOfType<V[number]> => new OneOfType<V[number]>(name, values)

/** The type of an `absentable` codec; `type` is the codec of a value that is present. */
export class AbsentableType<A, O> extends t.Type<A | null | '', O | null | '', unknown> {
  readonly _tag = 'AbsentableType' as const
  readonly type: t.Type<A, O, unknown>
  constructor(type: t.Type<A, O, unknown>) {
    super(
      type.name,
      (u): u is A | null | '' => u === null || u === '' || type.is(u),
      (u, c) => (u === null || u === '' ? t.success(u) : type.validate(u, contextFor(c, type))),
      (a) => {
        if (a === null) return null
        if (a === '') return ''
        return type.encode(a)
      },
    )
    this.type = type
  }
}

/**
 * For what the gateway sends (responses, redirect forms, notifications): an optional field that comes
 * as `null` or `""` counts as absent instead of failing (the spec itself has `link_url_app` "may be null").
 */
export const absentable = <A, O>(codec: t.Type<A, O, unknown>): AbsentableType<A, O> => new AbsentableType(codec)
