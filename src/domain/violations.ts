import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'

/** One broken rule of one field. `path` is dotted (`customer.full_name`, `products.0.name`); `''` is the message itself. */
export type Violation = { readonly path: string; readonly rule: string }

// Unions and intersections add their member index to the context; those are not field names.
const isCombinator = (type: t.Decoder<unknown, unknown>): boolean => type instanceof t.UnionType || type instanceof t.IntersectionType

const describeExpected = (type: t.Decoder<unknown, unknown>, actual: unknown): string => {
  if (actual === undefined) return 'is required'
  return `must be ${type.name}`
}

/** Turns io-ts errors into violations that name the field path and the rule, deduplicated, in order. */
export const violationsOf = (errors: t.Errors): ReadonlyArray<Violation> => {
  const out: Violation[] = []
  const seen = new Set<string>()
  for (const error of errors) {
    const keys: string[] = []
    error.context.forEach((entry, i) => {
      const parent = i > 0 ? error.context[i - 1] : undefined
      if (entry.key !== '' && (parent === undefined || !isCombinator(parent.type))) keys.push(entry.key)
    })
    const last = error.context[error.context.length - 1]
    const rule = error.message ?? (last === undefined ? 'is invalid' : describeExpected(last.type, error.value))
    const v = { path: keys.join('.'), rule }
    const id = `${v.path}\u0000${v.rule}`
    if (!seen.has(id)) {
      seen.add(id)
      out.push(v)
    }
  }
  return out
}

/** Decodes with a codec and reports every violated rule on failure. */
export const decodeAll = <A, O>(codec: t.Type<A, O, unknown>, input: unknown): E.Either<ReadonlyArray<Violation>, A> =>
  E.mapLeft(violationsOf)(codec.decode(input))

/** Decodes one value that sits at `path` (a path or query parameter): the violations name that path. */
export const decodeAt = <A, O>(path: string, codec: t.Type<A, O, unknown>, input: unknown): E.Either<ReadonlyArray<Violation>, A> =>
  E.mapLeft((vs: ReadonlyArray<Violation>) => vs.map((v) => ({ path: v.path === '' ? path : `${path}.${v.path}`, rule: v.rule })))(decodeAll(codec, input))

/** Human text for a list of violations, one per line: `path: rule`. */
export const formatViolations = (vs: ReadonlyArray<Violation>): string =>
  vs.map((v) => (v.path === '' ? v.rule : `${v.path}: ${v.rule}`)).join('\n')
