import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describe, expect, it } from 'vitest'
import { checkedRecord, contextFor, isSent, onlyFields, oneOfRequired, recordOf, type CrossCheck } from '../../../src/domain/gateway/checked-record.ts'
import { decodeAll } from '../../../src/domain/violations.ts'

/* The record codec of gateway messages: field failures, cross-field issues and character rules in one list, on the paths they name. */

const { codec, fields } = recordOf('Probe', { required: { id: t.string }, optional: { note: t.string, items: t.array(t.unknown), meta: t.UnknownRecord } })
const closed = onlyFields(() => ({ fields, owner: 'Probe' }))
const noteNeedsId: CrossCheck = (u) => (u['note'] === 'bad' ? [{ path: 'note', rule: 'must not be bad' }] : [])
const Probe = checkedRecord(codec, [closed, noteNeedsId])

describe('checkedRecord', () => {
  it('a good record decodes to itself; is() agrees', () => {
    const ok = { id: 'a', note: 'fine', items: [1], meta: { k: 'v' } }
    expect(Probe.decode(ok)).toStrictEqual(E.right(ok))
    expect(Probe.is(ok)).toBe(true)
    expect(Probe.name).toBe('Probe')
    expect(checkedRecord(codec, [], 'Named').name).toBe('Named')
  })

  it('is() is false when the codec, a cross check or a character rule refuses, or for a non-record', () => {
    expect(Probe.is({ id: 1 })).toBe(false)
    expect(Probe.is({ id: 'a', extra: 1 })).toBe(false)
    expect(Probe.is({ id: 'a', note: 'bad' })).toBe(false)
    expect(Probe.is({ id: 'a', note: 'nul\u0000here' })).toBe(false)
    expect(Probe.is(['a'])).toBe(false)
    expect(checkedRecord(t.unknown).is('text')).toBe(false)
    expect(checkedRecord(t.unknown).is({ a: 'text' })).toBe(true)
  })

  it('reports field failures and every cross-field issue together', () => {
    expect(decodeAll(Probe, { id: 7, note: 'bad', extra: true })).toEqual(
      E.left([
        { path: 'id', rule: 'must be string' },
        { path: 'extra', rule: 'is not a field of Probe' },
        { path: 'note', rule: 'must not be bad' },
      ]),
    )
    expect(decodeAll(Probe, { id: 'a', note: 'nul\u0000here' })).toEqual(
      E.left([{ path: 'note', rule: 'must not contain NUL or other control characters (tab, line feed and carriage return are allowed)' }]),
    )
  })

  it('an unknown key is named exactly, dots and all (a key ending in a dot was once reported without it)', () => {
    expect(decodeAll(Probe, { id: 'a', 'gFh`.': 'P}', '.x': 1, 'a.b': 2 })).toEqual(
      E.left([
        { path: 'gFh`.', rule: 'is not a field of Probe' },
        { path: '.x', rule: 'is not a field of Probe' },
        { path: 'a.b', rule: 'is not a field of Probe' },
      ]),
    )
  })

  it('missing or not an object', () => {
    expect(decodeAll(Probe, undefined)).toEqual(E.left([{ path: '', rule: 'is required' }]))
    expect(decodeAll(Probe, 'x')).toEqual(E.left([{ path: '', rule: 'must be an object' }]))
  })

  it('an issue names the path it is reported on: nested in objects and arrays, keys that hold dots, the record itself', () => {
    const at = (path: string | ReadonlyArray<string>): CrossCheck => () => [{ path, rule: 'flagged' }]
    const input = { id: 'a', items: [{ x: 1 }], meta: { 'a.b': 'v' } }
    const probe = (path: string | ReadonlyArray<string>) => {
      const r = checkedRecord(codec, [at(path)]).decode(input)
      if (E.isRight(r)) throw new Error('expected a failure')
      return r.left.map((e) => ({ keys: e.context.map((c) => c.key), value: e.value, message: e.message }))
    }
    expect(probe('items.0.x')).toStrictEqual([{ keys: ['', 'items', '0', 'x'], value: 1, message: 'flagged' }])
    expect(probe(['meta', 'a.b'])).toStrictEqual([{ keys: ['', 'meta', 'a.b'], value: 'v', message: 'flagged' }])
    expect(probe('id.deeper')).toStrictEqual([{ keys: ['', 'id', 'deeper'], value: undefined, message: 'flagged' }])
    expect(probe('')).toStrictEqual([{ keys: [''], value: input, message: 'flagged' }])
    expect(decodeAll(checkedRecord(codec, [at('meta.a.b')]), input)).toEqual(E.left([{ path: 'meta.a.b', rule: 'flagged' }]))
  })

  it('contextFor names the inner codec as the last entry, or makes one entry', () => {
    expect(contextFor([], t.string)).toStrictEqual([{ key: '', type: t.string }])
    const c: t.Context = [
      { key: '', type: t.unknown, actual: 1 },
      { key: 'a', type: t.unknown, actual: 2 },
    ]
    expect(contextFor(c, t.string)).toStrictEqual([
      { key: '', type: t.unknown, actual: 1 },
      { key: 'a', type: t.string, actual: 2 },
    ])
  })

  it('isSent: present, not null, not empty text', () => {
    expect([isSent(undefined), isSent(null), isSent(''), isSent('x'), isSent(0), isSent(false)]).toEqual([false, false, false, true, true, true])
  })

  it('oneOfRequired: reports on the first field when none is sent', () => {
    const either = oneOfRequired(['a', 'b'], 'a or b is required')
    expect(either({})).toEqual([{ path: 'a', rule: 'a or b is required' }])
    expect(either({ a: '', b: null })).toEqual([{ path: 'a', rule: 'a or b is required' }])
    expect(either({ b: 'x' })).toEqual([])
  })
})
