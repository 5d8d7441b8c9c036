import fc from 'fast-check'
import * as t from 'io-ts'
import { CheckedRecordType } from '../../src/domain/gateway/checked-record.ts'
import { AbsentableType } from '../../src/domain/gateway/text-codecs.ts'

/**
 * The text fields of a message codec, read from the codec itself (so that a field added to a codec is
 * tested without anyone listing it): every declared leaf field, at its dotted path (`customer.email`,
 * `products.0.name`), and for every object of the message one `undeclared` place where a field the
 * codec does not name may be sent (closed objects refuse it, open ones keep it).
 */
export type TextField = { readonly path: ReadonlyArray<string>; readonly kind: 'declared' | 'undeclared' }

const walk = (codec: t.Decoder<unknown, unknown>, path: ReadonlyArray<string>): ReadonlyArray<TextField> => {
  if (codec instanceof CheckedRecordType) return [...walk(codec.record, path), { path, kind: 'undeclared' }]
  if (codec instanceof AbsentableType) return walk(codec.type, path)
  if (codec instanceof t.IntersectionType) return codec.types.flatMap((member: t.Decoder<unknown, unknown>) => walk(member, path))
  if (codec instanceof t.ExactType) return walk(codec.type, path)
  if (codec instanceof t.InterfaceType || codec instanceof t.PartialType) {
    const props: t.Props = codec.props
    return Object.entries(props).flatMap(([key, field]) => walk(field, [...path, key]))
  }
  if (codec instanceof t.ArrayType) return walk(codec.type, [...path, '0'])
  // An object of fields none of which is declared (`card`): only undeclared ones can be sent.
  if (codec instanceof t.AnyDictionaryType) return []
  return [{ path, kind: 'declared' }]
}

/** The text fields of `codec` (a message codec: an object), the message itself counted as an object. */
export const textFieldsOf = (codec: t.Decoder<unknown, unknown>): ReadonlyArray<TextField> => {
  const fields = walk(codec, [])
  return fields.some((f) => f.kind === 'undeclared' && f.path.length === 0) ? fields : [...fields, { path: [], kind: 'undeclared' }]
}

export const dotted = (path: ReadonlyArray<string>): string => path.join('.')

/** `fields` with `value` at `path`, creating the objects and lists on the way (`products.0.name`). */
export const withValueAt = (fields: Readonly<Record<string, unknown>>, path: ReadonlyArray<string>, value: unknown): Record<string, unknown> => {
  const [head, ...rest] = path
  if (head === undefined) throw new Error('withValueAt: empty path')
  const current = fields[head]
  if (rest.length === 0) return { ...fields, [head]: value }
  const next = rest[0] === '0' ? { ...(Array.isArray(current) && t.UnknownRecord.is(current[0]) ? current[0] : {}) } : t.UnknownRecord.is(current) ? current : {}
  const inner = rest[0] === '0' ? withValueAt({ '0': next }, rest, value)['0'] : withValueAt(next, rest, value)
  return { ...fields, [head]: rest[0] === '0' ? [inner] : inner }
}

/** The value at `path`, `undefined` when it is not there. */
export const valueAt = (value: unknown, path: ReadonlyArray<string>): unknown => {
  let v = value
  for (const key of path) {
    if (Array.isArray(v)) v = v[Number(key)]
    else if (t.UnknownRecord.is(v)) v = v[key]
    else return undefined
  }
  return v
}

/** The characters the tests aim at: NUL, other C0 and C1 controls, DEL, both halves of a surrogate alone, and the allowed tab and line breaks. */
export const HOSTILE_CHARACTERS: ReadonlyArray<string> = ['\u0000', '\ud800', '\udfff', '\u0001', '\u0008', '\u000b', '\u001b', '\u001f', '\u007f', '\u0085', '\u009f', '\t', '\n', '\r']

// About one character in five is refused (NUL and the other controls, lone surrogates), so that a
// string of a few characters is as often accepted as refused.
const character = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_CHARACTERS) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 8, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom('ก', 'ข้', 'é', '😀', '\ufffd', '\u200b', ' ') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
)

/** Any short string. */
export const anyText = fc.array(character, { maxLength: 10 }).map((cs) => cs.join(''))

/** `valid` with one character inserted or appended: near-valid values, so that some are accepted. */
export const nearly = (valid: string): fc.Arbitrary<string> =>
  fc.tuple(fc.nat({ max: valid.length }), character).map(([at, c]) => `${valid.slice(0, at)}${c}${valid.slice(at)}`)

/**
 * Keys an undeclared field may have. Not `__proto__` and friends (the JSON parser's own concern), nor
 * the empty key: a violation path cannot name it (its problems are reported on the enclosing object).
 */
export const anyKey = anyText.filter((k) => k !== '' && !['__proto__', 'constructor', 'prototype'].includes(k))
