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
 * CallbackQuarantined version 1 (issue 17) is read as version 2 (issue 22: bounded bodies, day totals).
 */

const FIXTURES: ReadonlyArray<readonly [DomainEventType, string]> = [
  ['CallbackQuarantined', 'callback-quarantined.v2.json'],
  ['RefundAmountReserved', 'refund-amount-reserved.v1.json'],
  ['RefundLedgersOpened', 'refund-ledgers-opened.v1.json'],
]

const stored = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/events/${name}`, import.meta.url), 'utf8'))

describe('frozen fixtures of CallbackQuarantined, RefundAmountReserved, RefundLedgersOpened', () => {
  for (const [type, name] of FIXTURES) {
    it(`${name} decodes as ${type} v${String(schemaVersionOf(type))} and encodes back to itself`, () => {
      const fixture = stored(name)
      expect(fixture).toMatchObject({ type, schemaVersion: schemaVersionOf(type) })
      const shape = t.type({ schemaVersion: t.number, data: t.unknown }).decode(fixture)
      if (E.isLeft(shape)) throw new Error(`${name} is not a stored event`)
      const { schemaVersion, data } = shape.right
      const decoded = decodeDomainEvent(type, schemaVersion, data)
      if (E.isLeft(decoded)) throw new Error(`${name} does not decode: ${JSON.stringify(decoded.left)}`)
      expect(decoded.right).toEqual(trustEvents().find((e) => e.type === type))
      expect(encodeDomainEvent(decoded.right)).toEqual(fixture)
    })
  }
  it('the quarantined fixtures keep no payer data in clear', () => {
    for (const name of ['callback-quarantined.v1.json', 'callback-quarantined.v2.json']) {
      const text = readFileSync(new URL(`../../fixtures/events/${name}`, import.meta.url), 'utf8')
      expect(text, name).not.toContain('Somchai')
      expect(text, name).not.toContain('0812345678')
    }
  })
  it('callback-quarantined.v1.json reads as version 2: its payload as the body head, the body hash and size unknown, no day totals', () => {
    const v1 = t.type({ schemaVersion: t.number, data: t.type({ payload: t.unknown }) }).decode(stored('callback-quarantined.v1.json'))
    if (E.isLeft(v1)) throw new Error('callback-quarantined.v1.json is not a stored event')
    expect(v1.right.schemaVersion).toBe(1)
    const decoded = decodeDomainEvent('CallbackQuarantined', 1, v1.right.data)
    if (E.isLeft(decoded) || decoded.right.type !== 'CallbackQuarantined') throw new Error(`v1 does not decode: ${JSON.stringify(decoded)}`)
    const { payload: _payload, ...same } = v1.right.data
    expect(decoded.right.data).toEqual({
      ...same,
      receivedAt: new Date('2026-01-01T03:09:00.000Z'),
      bodySha256: null,
      bodyBytes: null,
      bodyHead: JSON.stringify(v1.right.data.payload),
      dayTotals: [],
    })
    expect(encodeDomainEvent(decoded.right)).toMatchObject({ schemaVersion: 2, data: { bodyHead: expect.stringContaining('"full_name":{"redacted":true}') } })
    // Each version is read with its own codec.
    expect(decodeDomainEvent('CallbackQuarantined', 2, v1.right.data)).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidEventData', schemaVersion: 2 } })
  })
})
