import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../../src/adapters/http/json-body.ts'

/** The depth of a parsed JSON value: objects and arrays count one level each. */
const depthOf = (v: unknown): number => {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf))
  if (typeof v === 'object' && v !== null) return 1 + Math.max(0, ...Object.values(v).map(depthOf))
  return 0
}

// Strings full of what the scan must not count: brackets, quotes and backslashes.
const tricky = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', '\u0000', '😀') })

describe('the depth of JSON text, read before it is parsed', () => {
  it('equals the depth of the parsed value, whatever the strings and keys hold', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tricky, fc.integer(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(tricky, tie('value'), { maxKeys: 3 })),
    })).value
    fc.assert(
      fc.property(json, fc.nat({ max: 6 }), fc.constantFrom(0, 2), (value, max, indent) => {
        const text = JSON.stringify(value, null, indent)
        expect(nestsDeeperThan(text, max)).toBe(depthOf(value) > max)
      }),
      { numRuns: 500 },
    )
  })

  it(`refuses from ${String(MAX_JSON_DEPTH + 1)} levels by default, in one pass over 50,000`, () => {
    expect(nestsDeeperThan(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBe(false)
    expect(nestsDeeperThan(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`)).toBe(true)
    expect(nestsDeeperThan('['.repeat(50_000))).toBe(true)
  })
})
