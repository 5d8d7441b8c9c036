import fc from 'fast-check'
import * as E from 'fp-ts/lib/Either.js'
import type * as t from 'io-ts'
import { describe, expect, it } from 'vitest'
import { CheckedRecordType } from '../../../src/domain/gateway/checked-record.ts'
import * as gateway from '../../../src/domain/gateway/index.ts'
import { CONTROL_CHARACTER_RULE, escapeRefusedCharacters, escapeRefusedFields, isCleanText, textIssues, WELL_FORMED_RULE } from '../../../src/domain/gateway/text-rules.ts'
import { violationsOf } from '../../../src/domain/violations.ts'
import { anyKey, anyText, dotted, HOSTILE_CHARACTERS, textFieldsOf, withValueAt } from '../../support/text-fields.ts'

/** The rule, written out code point by code point (an oracle independent of the regular expressions). */
const isControl = (cp: number): boolean => (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0x7f && cp <= 0x9f)
const isLoneSurrogate = (cp: number): boolean => cp >= 0xd800 && cp <= 0xdfff
const codePoints = (s: string): number[] => [...s].map((c) => c.codePointAt(0) ?? 0)
const hasControl = (s: string): boolean => codePoints(s).some(isControl)
const hasLoneSurrogate = (s: string): boolean => codePoints(s).some(isLoneSurrogate)

/** Every message codec of the gateway protocol, found among the module's exports. */
const CODECS: ReadonlyArray<{ readonly name: string; readonly codec: t.Decoder<unknown, unknown> }> = Object.entries(gateway).flatMap(([name, v]) =>
  v instanceof CheckedRecordType ? [{ name, codec: v }] : [],
)

describe('the character rules of every text', () => {
  it('refuse exactly NUL and the other control characters but tab, line feed and carriage return, and lone surrogates', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        expect(isCleanText(s)).toBe(!hasControl(s) && !hasLoneSurrogate(s))
        const rules = textIssues(s).map((i) => i.rule)
        expect(rules.includes(CONTROL_CHARACTER_RULE)).toBe(hasControl(s))
        expect(rules.includes(WELL_FORMED_RULE)).toBe(hasLoneSurrogate(s))
      }),
      { numRuns: 500 },
    )
    expect(isCleanText('\t\n\r ก 😀')).toBe(true)
    for (const c of ['\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u009f', '\ud800', '\udc00', 'a\ud83d']) expect(isCleanText(c)).toBe(false)
  })

  it('escape what they refuse as \\uXXXX and leave clean text as it is', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const escaped = escapeRefusedCharacters(s)
        expect(isCleanText(escaped)).toBe(true)
        if (isCleanText(s)) expect(escaped).toBe(s)
      }),
      { numRuns: 300 },
    )
    expect(escapeRefusedCharacters('a\u0000b\ud800\u0085\t😀')).toBe('a\\u0000b\\ud800\\u0085\t😀')
    expect(escapeRefusedFields({ 'k\u0001': ['x\u0000', { y: '\udfff' }], n: 1 })).toEqual({ 'k\\u0001': ['x\\u0000', { y: '\\udfff' }], n: 1 })
  })

  it('find every refused key and string of a message, with its path', () => {
    expect(textIssues({ a: 'ok', b: ['x', 'y\u0000'], 'c\u0001': { d: '\ud800' } })).toEqual([
      { path: ['b', '1'], rule: CONTROL_CHARACTER_RULE },
      { path: ['c\u0001'], rule: `field name ${CONTROL_CHARACTER_RULE}` },
      { path: ['c\u0001', 'd'], rule: WELL_FORMED_RULE },
    ])
  })
})

describe('every text field of every gateway message codec', () => {
  it('finds the message codecs and their fields', () => {
    expect(CODECS.map((c) => c.name)).toEqual(expect.arrayContaining(['DirectPaymentRequest', 'CheckoutApplyRequest', 'SubscriptionCreateRequest', 'PaymentNotification', 'CheckoutRedirectForm']))
    const direct = textFieldsOf(gateway.DirectPaymentRequest).map((f) => dotted(f.path))
    expect(direct).toEqual(expect.arrayContaining(['order_desc', 'customer.full_name', 'customer.address.city', 'products.0.name', 'client.remote_ip', 'card']))
  })

  const cases = CODECS.flatMap(({ name, codec }) => textFieldsOf(codec).map((field) => ({ name, codec, field })))

  it('reports a refused character on the field that holds it, and never on a field whose text is clean', () => {
    const hostile = fc.tuple(anyText, fc.constantFrom(...HOSTILE_CHARACTERS)).map(([s, c]) => s + c)
    fc.assert(
      fc.property(fc.constantFrom(...cases), fc.oneof(anyText, hostile), anyKey, ({ codec, field }, value, key) => {
        const path = field.kind === 'declared' ? field.path : [...field.path, key]
        const decoded = codec.decode(withValueAt({}, path, value))
        const violations = E.isLeft(decoded) ? violationsOf(decoded.left) : []
        const at = violations.filter((v) => v.path === dotted(path)).map((v) => v.rule)
        expect(at.includes(CONTROL_CHARACTER_RULE)).toBe(hasControl(value))
        expect(at.includes(WELL_FORMED_RULE)).toBe(hasLoneSurrogate(value))
        // A refused key is reported as the field name it is.
        if (field.kind === 'undeclared') expect(at.includes(`field name ${CONTROL_CHARACTER_RULE}`)).toBe(hasControl(key))
        // Nothing else is blamed on characters.
        const elsewhere = violations.filter((v) => v.path !== dotted(path) && (v.rule.endsWith(CONTROL_CHARACTER_RULE) || v.rule.endsWith(WELL_FORMED_RULE)))
        expect(elsewhere).toEqual([])
      }),
      { numRuns: 1500, examples: cases.map((c, i) => [c, `a${HOSTILE_CHARACTERS[i % HOSTILE_CHARACTERS.length] ?? ''}b`, 'k']) },
    )
  })
})
