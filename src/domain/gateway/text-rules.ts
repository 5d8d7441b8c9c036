/**
 * What every text of a gateway message may contain, whatever its field. The spec's texts are signed as
 * UTF-8 bytes (canonical.ts) and travel as JSON strings, so:
 * - a lone surrogate (`\ud800`) has no UTF-8 encoding: the signed bytes would not be the text;
 * - NUL (`\u0000`) and the other control characters are no text a payer or a merchant writes, and NUL
 *   cannot even be stored (PostgreSQL's jsonb refuses it). Tab, line feed and carriage return are text
 *   (a description or an address may span lines) and stay allowed.
 */

/** A rule on a string: the broken rule's text, or `undefined` when it holds. */
export type TextRule = (s: string) => string | undefined

// Unicode Cc (C0 controls, DEL, C1 controls) but tab (U+0009), line feed (U+000A) and carriage return (U+000D).
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/
// With the `u` flag a well-formed surrogate pair is one code point: only lone surrogates match \p{Cs}.
const LONE_SURROGATE = /\p{Cs}/u

export const CONTROL_CHARACTER_RULE = 'must not contain NUL or other control characters (tab, line feed and carriage return are allowed)'
export const WELL_FORMED_RULE = 'must be well-formed Unicode (no lone surrogates such as \\ud800)'

export const noControlCharacters: TextRule = (s) => (CONTROL.test(s) ? CONTROL_CHARACTER_RULE : undefined)

export const wellFormedUnicode: TextRule = (s) => (LONE_SURROGATE.test(s) ? WELL_FORMED_RULE : undefined)

/** The rules every text field of every gateway message keeps (text-codecs.ts adds them to each). */
export const CHARACTER_RULES: ReadonlyArray<TextRule> = [noControlCharacters, wellFormedUnicode]

const brokenCharacterRules = (s: string): ReadonlyArray<string> => CHARACTER_RULES.flatMap((rule) => rule(s) ?? [])

/** Whether `s` keeps every character rule. */
export const isCleanText = (s: string): boolean => brokenCharacterRules(s).length === 0

/** One broken character rule: `path` is the keys to the place (`['customer', 'nickname']`, `['products', '0', 'name']`). */
export type TextIssue = { readonly path: ReadonlyArray<string>; readonly rule: string }

/**
 * Every string of a JSON-like value that breaks a character rule, with its path: values at any depth,
 * and object keys (reported as "field name …" on the key's own path). Open parts of a message (the
 * Customer fields the spec does not list, `card`, extra callback fields) reach no field codec; this
 * walk covers them too.
 */
export const textIssues = (value: unknown, path: ReadonlyArray<string> = []): ReadonlyArray<TextIssue> => {
  if (typeof value === 'string') return brokenCharacterRules(value).map((rule) => ({ path, rule }))
  if (Array.isArray(value)) return value.flatMap((v: unknown, i) => textIssues(v, [...path, String(i)]))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, v]) => [
    ...brokenCharacterRules(key).map((rule) => ({ path: [...path, key], rule: `field name ${rule}` })),
    ...textIssues(v, [...path, key]),
  ])
}

const ESCAPABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|\p{Cs}/gu

/**
 * `s` with every character the rules refuse written as a `\uXXXX` escape (six ASCII characters), so
 * that a refused message can still be kept for audit: it shows what arrived, and it can be stored.
 */
export const escapeRefusedCharacters = (s: string): string =>
  s.replace(ESCAPABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** A JSON-like value with `escapeRefusedCharacters` applied to every string and every object key. */
export const escapeRefusedText = (value: unknown): unknown => {
  if (typeof value === 'string') return escapeRefusedCharacters(value)
  if (Array.isArray(value)) return value.map(escapeRefusedText)
  return typeof value === 'object' && value !== null ? escapeRefusedFields(value) : value
}

/** An object of fields with `escapeRefusedCharacters` applied to every key and every string in it. */
export const escapeRefusedFields = (fields: object): Readonly<Record<string, unknown>> =>
  Object.fromEntries(Object.entries(fields).map(([key, v]: [string, unknown]) => [escapeRefusedCharacters(key), escapeRefusedText(v)]))
