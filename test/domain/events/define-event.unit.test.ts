import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describe, expect, it } from 'vitest'
import { defineEvent } from '../../../src/domain/events/define-event.ts'

// A made-up event with three versions: v2 renamed `name` to `title`, v3 added `tags`.
const V1 = t.strict({ name: t.string })
const V2 = t.strict({ title: t.string })
const V3 = t.strict({ title: t.string, tags: t.array(t.string) })
const noted = defineEvent('Noted', { 1: V1, 2: V2, 3: V3 }, { 1: ({ name }) => ({ title: name }), 2: (d) => ({ ...d, tags: [] }) })

describe('defineEvent', () => {
  it('writes the newest version', () => {
    expect(noted.schemaVersion).toBe(3)
    expect(noted.encode({ title: 'a', tags: ['x'] })).toEqual({ type: 'Noted', schemaVersion: 3, data: { title: 'a', tags: ['x'] } })
  })
  it('reads every version and upcasts step by step to the newest shape', () => {
    expect(noted.decode(1, { name: 'a' })).toEqual(E.right({ type: 'Noted', data: { title: 'a', tags: [] } }))
    expect(noted.decode(2, { title: 'b' })).toEqual(E.right({ type: 'Noted', data: { title: 'b', tags: [] } }))
    expect(noted.decode(3, { title: 'c', tags: ['y'] })).toEqual(E.right({ type: 'Noted', data: { title: 'c', tags: ['y'] } }))
  })
  it('reports an unknown version and undecodable data as typed lefts', () => {
    expect(noted.decode(4, { title: 'c' })).toEqual(E.left({ _tag: 'UnknownSchemaVersion', type: 'Noted', schemaVersion: 4, knownVersions: [1, 2, 3] }))
    expect(noted.decode(1, { title: 'a' })).toEqual(E.left({ _tag: 'InvalidEventData', type: 'Noted', schemaVersion: 1, violations: [{ path: 'name', rule: 'is required' }] }))
  })
  it('recognises its events', () => {
    const events: ReadonlyArray<{ readonly type: string }> = [noted.make({ title: 'a', tags: [] }), { type: 'Other' }]
    expect(events.filter(noted.is)).toStrictEqual([{ type: 'Noted', data: { title: 'a', tags: [] } }])
  })
  it('gives the codec of each known version, none for another', () => {
    expect([noted.codecOf(1), noted.codecOf(2), noted.codecOf(3), noted.codecOf(4), noted.codecOf(0)]).toStrictEqual([V1, V2, V3, undefined, undefined])
  })
  it('upcasts one step at a time: from each version but the newest, and from no other', () => {
    expect(noted.upcastStep(1, { name: 'a' })).toStrictEqual({ title: 'a' })
    expect(noted.upcastStep(2, { title: 'b' })).toStrictEqual({ title: 'b', tags: [] })
    expect(noted.upcastStep(3, { title: 'c', tags: [] })).toBeUndefined()
    expect(noted.upcastStep(0, { name: 'a' })).toBeUndefined()
    expect(noted.upcastStep(9, { name: 'a' })).toBeUndefined()
  })
  it('an upcaster given for the newest version is never used', () => {
    const extra = { 1: ({ name }: { name: string }) => ({ title: name }), 2: () => ({ title: 'upcast past the newest' }) }
    const twice = defineEvent('Twice', { 1: V1, 2: V2 }, extra)
    expect(twice.decode(1, { name: 'a' })).toStrictEqual(E.right({ type: 'Twice', data: { title: 'a' } }))
    expect(twice.decode(2, { title: 'b' })).toStrictEqual(E.right({ type: 'Twice', data: { title: 'b' } }))
    expect(twice.upcastStep(2, { title: 'b' })).toBeUndefined()
  })
  it('a definition made at run time works whole: make, encode, decode, is, codecOf', () => {
    const local = defineEvent('Local', { 1: V1, 2: V2 }, { 1: ({ name }) => ({ title: name }) })
    expect(local.make({ title: 'a' })).toStrictEqual({ type: 'Local', data: { title: 'a' } })
    expect(local.encode({ title: 'a' })).toStrictEqual({ type: 'Local', schemaVersion: 2, data: { title: 'a' } })
    expect(local.decode(1, { name: 'n' })).toStrictEqual(E.right({ type: 'Local', data: { title: 'n' } }))
    expect([local.is({ type: 'Local' }), local.is({ type: 'Other' })]).toStrictEqual([true, false])
    expect([local.codecOf(1), local.codecOf(2), local.codecOf(3)]).toStrictEqual([V1, V2, undefined])
    expect(local.knownVersions).toStrictEqual([1, 2])
  })
  it('refuses a definition whose versions are not 1..N, or that lacks an upcaster, naming the event', () => {
    expect(() => defineEvent('Gap', { 1: V1, 3: V3 } as unknown as { 1: typeof V1 })).toThrow('defineEvent Gap: versions must be 1..N')
    const V4 = t.strict({ n: t.number })
    const loose = defineEvent as unknown as (type: string, versions: object, upcasters?: object) => unknown
    expect(() => loose('Skipping', { 1: V1, 2: V2, 4: V4, 5: V4 }, { 1: () => ({}), 2: () => ({}), 4: () => ({}) })).toThrow('defineEvent Skipping: versions must be 1..N')
    expect(() => defineEvent('None', {} as unknown as { 1: typeof V1 })).toThrow('defineEvent None: versions must be 1..N')
    expect(() => defineEvent('Lacking', { 1: V1, 2: V2 }, {} as unknown as { 1: (d: { name: string }) => { title: string } })).toThrow('defineEvent Lacking: no upcaster from version 1')
  })
})
