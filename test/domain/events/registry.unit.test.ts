import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  decodeDomainEvent,
  decodeOrderEvent,
  decodeRefundEvent,
  describeEventDecodeError,
  DOMAIN_EVENT_TYPES,
  DomainEventMetadata,
  encodeDomainEvent,
  EventSource,
  eventSourceOf,
  naturalKeyOf,
  schemaVersionOf,
  toEventToAppend,
} from '../../../src/domain/events/index.ts'
import { isJsonObject } from '../../../src/domain/events/json.ts'
import { orderStreamName } from '../../../src/domain/order/index.ts'
import { ORDER_ID } from '../order/builders.ts'
import { MERCHANT_ID } from '../support/values.ts'
import { allEvents, orderEvents, refundEvents } from './catalogue.ts'

describe('the registry', () => {
  it('the catalogue covers every event type', () => {
    expect(new Set(allEvents().map((e) => e.type))).toEqual(new Set(DOMAIN_EVENT_TYPES))
  })
  it('every event survives encode → JSON text → decode unchanged, at the newest version', () => {
    for (const e of allEvents()) {
      const encoded = encodeDomainEvent(e)
      expect(encoded.schemaVersion).toBe(schemaVersionOf(e.type))
      const stored: unknown = JSON.parse(JSON.stringify(encoded.data))
      expect(isJsonObject(stored)).toBe(true)
      expect(decodeDomainEvent(encoded.type, encoded.schemaVersion, stored)).toEqual(E.right(e))
    }
  })
  it('amounts are digit strings and instants ISO text in the stored data', () => {
    const created = orderEvents()[0]
    if (created === undefined) throw new Error('no event')
    expect(encodeDomainEvent(created).data).toMatchObject({ amount: '10000', createdAt: '2026-01-01T03:00:00.000Z' })
  })
  it('an unknown type, an unknown version and undecodable data are typed lefts, never dropped', () => {
    expect(decodeDomainEvent('OrderShipped', 1, {})).toEqual(E.left({ _tag: 'UnknownEventType', type: 'OrderShipped', schemaVersion: 1 }))
    expect(decodeDomainEvent('OrderCreated', 7, {})).toEqual(E.left({ _tag: 'UnknownSchemaVersion', type: 'OrderCreated', schemaVersion: 7, knownVersions: [1] }))
    const bad = decodeDomainEvent('StatusObserved', 2, { statusCode: 'PS', amount: '1.5' })
    expect(bad).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidEventData', type: 'StatusObserved', schemaVersion: 2 } })
    if (E.isRight(bad)) throw new Error('expected a left')
    expect(describeEventDecodeError(bad.left)).toContain('amount: must be a whole number of satang as a digit string')
    expect(describeEventDecodeError({ _tag: 'UnknownSchemaVersion', type: 'X', schemaVersion: 3, knownVersions: [1, 2] })).toBe('X: unknown schema version 3 (known: 1, 2)')
  })
  it('a stored payload with payer data in clear does not decode', () => {
    const e = orderEvents().find((x) => x.type === 'PaymentRequested')
    if (e === undefined) throw new Error('no PaymentRequested')
    const stored = encodeDomainEvent(e).data
    const tampered = { ...stored, request: { ...(isJsonObject(stored.request) ? stored.request : {}), customer: { full_name: 'Somchai Jaidee' } } }
    expect(decodeDomainEvent('PaymentRequested', 1, tampered)).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidEventData' } })
  })
  it('aggregate decoders refuse another aggregate’s events', () => {
    const r = refundEvents()[0]
    if (r === undefined) throw new Error('no event')
    const { type, schemaVersion, data } = encodeDomainEvent(r)
    expect(decodeOrderEvent(type, schemaVersion, data)).toEqual(E.left({ _tag: 'UnexpectedEventType', type: 'RefundTracked', expected: 'order' }))
    expect(E.isRight(decodeRefundEvent(type, schemaVersion, data))).toBe(true)
  })
  it('toEventToAppend adds the id and the metadata the store takes', () => {
    const e = orderEvents()[0]
    if (e === undefined) throw new Error('no event')
    const metadata = { correlationId: 'c-1', causationId: 'c-1', recordedAt: '2026-01-01T03:00:00.000Z', source: eventSourceOf(e), signature: { verified: true } } as const
    expect(toEventToAppend(e, '6ba7b810-9dad-11d1-80b4-00c04fd430c8', metadata)).toEqual({
      eventId: '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
      type: 'OrderCreated',
      schemaVersion: 1,
      data: encodeDomainEvent(e).data,
      metadata: { correlationId: 'c-1', causationId: 'c-1', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request', signature: { verified: true } },
    })
  })
  it('every event has a usual source, and natural keys keyed by stream', () => {
    const stream = orderStreamName(MERCHANT_ID, ORDER_ID)
    for (const e of allEvents()) {
      expect(EventSource.is(eventSourceOf(e))).toBe(true)
      expect(naturalKeyOf(stream, e).startsWith(encodeURIComponent(stream))).toBe(true)
    }
  })
})

describe('event metadata', () => {
  it('decodes the documented fields and refuses a bad source or time', () => {
    const m = { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T03:00:00.000Z', source: 'notification', traceId: 'tr', signature: { verified: false, reason: 'bad' }, actor: 'ops' }
    expect(E.isRight(DomainEventMetadata.decode(m))).toBe(true)
    expect(E.isLeft(DomainEventMetadata.decode({ ...m, source: 'email' }))).toBe(true)
    expect(E.isLeft(DomainEventMetadata.decode({ ...m, recordedAt: '2026-01-01 10:00:00' }))).toBe(true)
  })
})
