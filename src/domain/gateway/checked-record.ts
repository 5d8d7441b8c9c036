import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { textIssues } from './text-rules.ts'

/**
 * One broken cross-field rule: `path` is the dotted field it is reported on (`client.remote_ip`), or
 * its keys when a key may itself hold a dot.
 */
export type FieldIssue = { readonly path: string | ReadonlyArray<string>; readonly rule: string }

/** A rule that looks at several fields of the raw input at once (conditional fields, limits, unknown keys). */
export type CrossCheck = (input: Readonly<Record<string, unknown>>) => ReadonlyArray<FieldIssue>

const childOf = (value: unknown, key: string): unknown => {
  if (t.UnknownArray.is(value)) return value[Number(key)]
  if (t.UnknownRecord.is(value)) return value[key]
  return undefined
}

// The issue's path becomes context keys, so `violationsOf` prints exactly that path.
const issueError = (input: Readonly<Record<string, unknown>>, c: t.Context, issue: FieldIssue): t.ValidationError => {
  let context = c
  let value: unknown = input
  const keys = typeof issue.path === 'string' ? (issue.path === '' ? [] : issue.path.split('.')) : issue.path
  for (const key of keys) {
    value = childOf(value, key)
    context = t.appendContext(context, key, t.unknown, value)
  }
  return { value, context, message: issue.rule }
}

/**
 * The context under which a wrapper lets `inner` validate: the wrapper's own entry names `inner`, so
 * `violationsOf` recognises an inner union/intersection and leaves its member indices out of paths.
 */
export const contextFor = (c: t.Context, inner: t.Decoder<unknown, unknown>): t.Context => {
  const last = c[c.length - 1]
  return last === undefined ? [{ key: '', type: inner }] : [...c.slice(0, -1), { ...last, type: inner }]
}

/**
 * The character rules (text-rules.ts) on every key and string of the record, declared or not: the
 * fields a record keeps as sent (open Customer fields, `card`, extra callback fields) meet no field
 * codec. A declared field's own codec reports the same violation; `violationsOf` keeps it once.
 */
const wellFormedText: CrossCheck = (input) => textIssues(input)

/** The type of a `checkedRecord`; like io-ts's own types it shows what it is made of: `record`, the codec of its fields. */
export class CheckedRecordType<A, O> extends t.Type<A, O, unknown> {
  readonly _tag = 'CheckedRecordType' as const
  readonly record: t.Type<A, O, unknown>
  constructor(name: string, is: t.Is<A>, validate: t.Validate<unknown, A>, encode: t.Encode<A, O>, record: t.Type<A, O, unknown>) {
    super(name, is, validate, encode)
    this.record = record
  }
}

/**
 * An object codec whose decoding reports, in one list, every per-field failure of `codec` and every
 * issue of the cross-field `checks` (which run on the raw input even when some fields failed), and
 * every key or string anywhere in it that breaks a character rule. Encoding is `codec`'s.
 */
export const checkedRecord = <A, O>(codec: t.Type<A, O, unknown>, checks: ReadonlyArray<CrossCheck> = [], name: string = codec.name): CheckedRecordType<A, O> => {
  const all = [...checks, wellFormedText]
  return new CheckedRecordType<A, O>(
    name,
    (u): u is A => codec.is(u) && t.UnknownRecord.is(u) && all.every((check) => check(u).length === 0),
    (u, c) => {
      if (u === undefined) return t.failure(u, c, 'is required')
      if (!t.UnknownRecord.is(u)) return t.failure(u, c, 'must be an object')
      const decoded = codec.validate(u, contextFor(c, codec))
      const issues = all.flatMap((check) => check(u))
      if (issues.length === 0) return decoded
      return t.failures([...(E.isLeft(decoded) ? decoded.left : []), ...issues.map((issue) => issueError(u, c, issue))])
    },
    codec.encode,
    codec,
  )
}

/** Props of a record codec: the required ones and the optional ones. */
export type RecordProps<R extends t.Props, P extends t.Props> = { readonly required: R; readonly optional: P }

/** `t.type(required)` ∩ `t.partial(optional)`, and the set of field names it declares. */
export const recordOf = <R extends t.Props, P extends t.Props>(name: string, props: RecordProps<R, P>) => {
  const fields: ReadonlySet<string> = new Set([...Object.keys(props.required), ...Object.keys(props.optional)])
  return { codec: t.intersection([t.type(props.required), t.partial(props.optional)], name), fields }
}

/**
 * Rejects every key that is not in `fields` with "is not a field of <owner>": requests are closed so
 * that a misspelt optional field is caught instead of being silently ignored (and signed).
 */
export const onlyFields =
  (allowed: (input: Readonly<Record<string, unknown>>) => { readonly fields: ReadonlySet<string>; readonly owner: string }): CrossCheck =>
  (input) => {
    const { fields, owner } = allowed(input)
    return Object.keys(input)
      .filter((key) => !fields.has(key))
      .map((key) => ({ path: [key], rule: `is not a field of ${owner}` }))
  }

/** A field counts as sent when it is present and neither null nor an empty string. */
export const isSent = (value: unknown): boolean => value !== undefined && value !== null && value !== ''

/** Requires at least one of `fields`; the issue is reported on the first one. */
export const oneOfRequired =
  (fields: readonly [string, ...string[]], rule: string): CrossCheck =>
  (input) =>
    fields.some((f) => isSent(input[f])) ? [] : [{ path: fields[0], rule }]
