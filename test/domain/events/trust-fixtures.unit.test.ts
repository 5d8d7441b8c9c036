import { readFileSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describe, expect, it } from 'vitest'
import { decodeDomainEvent, encodeDomainEvent, schemaVersionOf, type DomainEventType } from '../../../src/domain/events/index.ts'
import { trustEvents } from './catalogue.ts'

/**
 * Frozen fixtures of the events of issue 17 (quarantined callbacks, refundable ledgers): JSON as
 * stored, written once and never edited. Each decodes, equals the event it was written from, and
 * encodes back to itself: a codec change that would make stored events unreadable fails here.
 */

const FIXTURES: ReadonlyArray<readonly [DomainEventType, string]> = [
  ['CallbackQuarantined', 'callback-quarantined.v1.json'],
  ['RefundAmountReserved', 'refund-amount-reserved.v1.json'],
  ['RefundLedgersOpened', 'refund-ledgers-opened.v1.json'],
]

const stored = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/events/${name}`, import.meta.url), 'utf8'))

describe('frozen fixtures of CallbackQuarantined, RefundAmountReserved, RefundLedgersOpened', () => {
  for (const [type, name] of FIXTURES) {
    it(`${name} decodes as ${type} v${String(schemaVersionOf(type))} and encodes back to itself`, () => {
      const fixture = stored(name)
      expect(fixture).toMatchObject({ type, schemaVersion: 1 })
      const shape = t.type({ schemaVersion: t.number, data: t.unknown }).decode(fixture)
      if (E.isLeft(shape)) throw new Error(`${name} is not a stored event`)
      const { schemaVersion, data } = shape.right
      const decoded = decodeDomainEvent(type, schemaVersion, data)
      if (E.isLeft(decoded)) throw new Error(`${name} does not decode: ${JSON.stringify(decoded.left)}`)
      expect(decoded.right).toEqual(trustEvents().find((e) => e.type === type))
      expect(encodeDomainEvent(decoded.right)).toEqual(fixture)
    })
  }
  it('the quarantined fixture keeps no payer data in clear', () => {
    const text = readFileSync(new URL('../../fixtures/events/callback-quarantined.v1.json', import.meta.url), 'utf8')
    expect(text).not.toContain('Somchai')
    expect(text).not.toContain('0812345678')
  })
})
