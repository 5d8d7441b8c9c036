import { createHash } from 'node:crypto'
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decodeDomainEvent, DOMAIN_EVENT_TYPES, eventDefinitions, encodeDomainEvent, isDomainEventType, type DomainEventType } from '../../../src/domain/events/registry.ts'
import { allEvents } from './catalogue.ts'

/*
 * Frozen event schemas. Every (type, schemaVersion) the registry can read has a golden fixture in
 * test/fixtures/events/: `{ type, schemaVersion, data }` exactly as the store keeps it, written once
 * and never edited (SHA256SUMS pins every file's bytes). Every run decodes each fixture with its own
 * version's codec, and checks each upcasting step (version k → k+1) against a frozen expectation
 * (`<type>.v<k>.upcast.json`). A codec change that would make stored events unreadable, an edited
 * fixture, or a type or version registered without fixtures fails here.
 *
 * A new type or version: `WRITE_EVENT_FIXTURES=missing npx vitest run test/domain/events/frozen-schemas.unit.test.ts`
 * writes the missing fixtures (from the event catalogue, at the newest version) and appends them to
 * SHA256SUMS; it never touches an existing file. Review them and commit them with the codec.
 */

const DIR = new URL('../../fixtures/events/', import.meta.url)
const MANIFEST = 'SHA256SUMS'
const writing = process.env.WRITE_EVENT_FIXTURES === 'missing'

type Fixture = { readonly type: string; readonly schemaVersion: number; readonly data: unknown }

const kebab = (type: string): string => type.replace(/[A-Z]/g, (c, i: number) => `${i === 0 ? '' : '-'}${c.toLowerCase()}`)
/** The golden fixture of one stored version. */
const fixtureName = (type: string, version: number): string => `${kebab(type)}.v${String(version)}.json`
/** What upcasting the version-k fixture one step gives (data at version k + 1). */
const upcastName = (type: string, version: number): string => `${kebab(type)}.v${String(version)}.upcast.json`

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')
const read = (name: string): Buffer => readFileSync(new URL(name, DIR))
const exists = (name: string): boolean => existsSync(new URL(name, DIR))

const parse = (name: string): Fixture => {
  const parsed: unknown = JSON.parse(read(name).toString('utf8'))
  if (typeof parsed !== 'object' || parsed === null || !('type' in parsed) || !('schemaVersion' in parsed) || !('data' in parsed)) throw new Error(`${name}: not { type, schemaVersion, data }`)
  const { type, schemaVersion, data } = parsed
  if (typeof type !== 'string' || typeof schemaVersion !== 'number') throw new Error(`${name}: type must be a string and schemaVersion a number`)
  return { type, schemaVersion, data }
}

/** `<sha256>  <file>` lines, as `sha256sum` writes and checks them. */
const manifest = (): ReadonlyMap<string, string> =>
  new Map(
    read(MANIFEST)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l)
        if (m === null) throw new Error(`${MANIFEST}: bad line ${JSON.stringify(l)}`)
        return [m[2] ?? '', m[1] ?? ''] as const
      }),
  )

type Registered = { readonly type: string; readonly knownVersions: ReadonlyArray<number> }

/** Every fixture file the registry `registered` needs: one per version, one per upcasting step. */
const requiredFixtures = (registered: ReadonlyArray<Registered>): ReadonlyArray<string> =>
  registered.flatMap((d) => [...d.knownVersions.map((v) => fixtureName(d.type, v)), ...d.knownVersions.slice(0, -1).map((v) => upcastName(d.type, v))])

const registry = (): ReadonlyArray<Registered> => DOMAIN_EVENT_TYPES.map((type) => ({ type, knownVersions: eventDefinitions[type].knownVersions }))

const fixtureFiles = (): ReadonlyArray<string> => readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()

/** Writes what is missing (never overwrites): newest versions from the catalogue, upcast steps from their fixtures. */
const writeMissing = (missing: ReadonlyArray<string>): void => {
  const text = (f: Fixture): string => `${JSON.stringify(f, null, 2)}\n`
  const add = (name: string, content: string): void => {
    if (exists(name)) throw new Error(`${name} exists: fixtures are never rewritten`)
    writeFileSync(new URL(name, DIR), content, { flag: 'wx' })
    appendFileSync(new URL(MANIFEST, DIR), `${sha256(Buffer.from(content, 'utf8'))}  ${name}\n`)
  }
  const catalogue = allEvents()
  for (const type of DOMAIN_EVENT_TYPES) {
    const def = eventDefinitions[type]
    const newest = fixtureName(type, def.schemaVersion)
    if (missing.includes(newest)) {
      const e = catalogue.find((x) => x.type === type)
      if (e === undefined) throw new Error(`the catalogue (test/domain/events/catalogue.ts) has no ${type}: add one there first`)
      add(newest, text(encodeDomainEvent(e)))
    }
    for (const v of def.knownVersions.slice(0, -1)) {
      if (!missing.includes(upcastName(type, v))) continue
      const stepped = upcastOneStep(type, parse(fixtureName(type, v)))
      add(upcastName(type, v), text(stepped))
    }
  }
}

/** Decodes a version-k fixture with the version-k codec, upcasts it one step and encodes it with the version-(k+1) codec. */
const upcastOneStep = (type: DomainEventType, f: Fixture): Fixture => {
  const def = eventDefinitions[type]
  const from = def.codecOf(f.schemaVersion)
  const to = def.codecOf(f.schemaVersion + 1)
  if (from === undefined || to === undefined) throw new Error(`${type} v${String(f.schemaVersion)}: no next version`)
  const decoded = from.decode(f.data)
  if (E.isLeft(decoded)) throw new Error(`${type} v${String(f.schemaVersion)} fixture does not decode`)
  return { type, schemaVersion: f.schemaVersion + 1, data: to.encode(def.upcastStep(f.schemaVersion, decoded.right)) }
}

describe('frozen event schemas (test/fixtures/events)', () => {
  it('every registered event type and version has its golden fixture, and every version bump its upcast fixture', () => {
    const required = requiredFixtures(registry())
    let missing = required.filter((name) => !exists(name))
    if (writing && missing.length > 0) {
      writeMissing(missing)
      missing = required.filter((name) => !exists(name))
    }
    expect(missing, 'write them once with WRITE_EVENT_FIXTURES=missing (see the top of this file), review and commit them').toEqual([])
    expect(required.length).toBeGreaterThanOrEqual(DOMAIN_EVENT_TYPES.length)
  })

  it('a type or a version registered without fixtures is found missing (what makes CI fail)', () => {
    const withNewType = [...registry(), { type: 'PayoutSettled', knownVersions: [1] }]
    expect(requiredFixtures(withNewType).filter((name) => !exists(name))).toEqual(['payout-settled.v1.json'])
    const bumped = registry().map((d) => (d.type === 'OrderCreated' ? { ...d, knownVersions: [1, 2] } : d))
    expect(requiredFixtures(bumped).filter((name) => !exists(name))).toEqual(['order-created.v2.json', 'order-created.v1.upcast.json'])
  })

  it('no fixture was edited: SHA256SUMS lists every fixture file with its hash, and nothing else', () => {
    const sums = manifest()
    expect([...sums.keys()].sort()).toEqual([...fixtureFiles()])
    const changed = [...sums].filter(([name, hash]) => sha256(read(name)) !== hash).map(([name]) => name)
    expect(changed, 'a frozen fixture changed: add a new schema version instead of editing a stored shape').toEqual([])
  })

  it('no fixture is stray: each names a registered type and one of its versions', () => {
    const required = new Set(requiredFixtures(registry()))
    expect(fixtureFiles().filter((name) => !required.has(name))).toEqual([])
  })

  it('every fixture decodes with its own version’s codec (stored events stay readable)', () => {
    const failures: string[] = []
    for (const name of fixtureFiles()) {
      const f = parse(name)
      if (!isDomainEventType(f.type)) {
        failures.push(`${name}: unknown type ${f.type}`)
        continue
      }
      const decoded = decodeDomainEvent(f.type, f.schemaVersion, f.data)
      if (E.isLeft(decoded)) failures.push(`${name}: ${JSON.stringify(decoded.left)}`)
    }
    expect(failures).toEqual([])
  })

  it('a fixture of the newest version encodes back to itself, byte for byte as JSON', () => {
    for (const type of DOMAIN_EVENT_TYPES) {
      const def = eventDefinitions[type]
      const name = fixtureName(type, def.schemaVersion)
      const f = parse(name)
      const decoded = decodeDomainEvent(f.type, f.schemaVersion, f.data)
      if (E.isLeft(decoded)) throw new Error(`${name} does not decode`)
      expect(JSON.stringify(encodeDomainEvent(decoded.right)), name).toBe(JSON.stringify(f))
    }
  })

  it('each upcasting step (version k → k+1) gives exactly its frozen expectation, which the next version’s codec reads', () => {
    let steps = 0
    for (const type of DOMAIN_EVENT_TYPES) {
      const def = eventDefinitions[type]
      for (const v of def.knownVersions.slice(0, -1)) {
        const expected = parse(upcastName(type, v))
        expect(upcastOneStep(type, parse(fixtureName(type, v))), upcastName(type, v)).toEqual(expected)
        expect(E.isRight(decodeDomainEvent(type, v + 1, expected.data)), `${upcastName(type, v)} decodes at v${String(v + 1)}`).toBe(true)
        steps++
      }
    }
    // StatusObserved 1 → 2 at least.
    expect(steps).toBeGreaterThanOrEqual(1)
  })
})
