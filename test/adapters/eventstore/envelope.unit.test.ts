import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decodeEvent, validateAppend, type RawEvent } from '../../../src/adapters/eventstore/envelope.ts'
import type { EventToAppend, Position } from '../../../src/application/ports/event-store.ts'

const metadata = { correlationId: 'c', causationId: 'd', recordedAt: '2025-01-01T00:00:00.000Z', source: 'test' }
const event = (overrides: Partial<EventToAppend> = {}): EventToAppend => ({
  eventId: '2ed6657d-e927-568b-95e1-2665a8aea6a2',
  type: 'OrderCreated',
  schemaVersion: 1,
  data: { amount: '100.00' },
  metadata,
  ...overrides,
})

const reasonOf = (stream: string, events: ReadonlyArray<EventToAppend>): string | undefined => {
  const r = validateAppend(stream, events)
  return E.isLeft(r) ? r.left.reason : undefined
}

describe('validateAppend', () => {
  it('accepts a well-formed batch', () => {
    expect(reasonOf('order-m1-o1', [event()])).toBeUndefined()
  })
  it.each([
    ['an empty batch', 'order-1', [], /at least one event/],
    ['a system stream', '$all', [event()], /stream name/],
    ['an upper-case id', 'order-1', [event({ eventId: '2ED6657D-E927-568B-95E1-2665A8AEA6A2' })], /lowercase canonical UUID/],
    ['a system type', 'order-1', [event({ type: '$metadata' })], /type/],
    ['schema version 0', 'order-1', [event({ schemaVersion: 0 })], /schemaVersion/],
    ['a fractional schema version', 'order-1', [event({ schemaVersion: 1.5 })], /schemaVersion/],
    ['a reserved metadata key', 'order-1', [event({ metadata: { ...metadata, $correlationId: 'x' } })], /reserved/],
    ['a repeated id', 'order-1', [event(), event()], /twice/],
  ])('rejects %s', (_, stream, events, reason) => {
    expect(reasonOf(stream, events)).toMatch(reason)
  })
})

const raw = (overrides: Partial<RawEvent> = {}): RawEvent => ({
  streamName: 'order-1',
  streamRevision: 3n,
  position: '00000000000000000001-00000000000000000002' as Position,
  eventId: '2ed6657d-e927-568b-95e1-2665a8aea6a2',
  type: 'OrderCreated',
  schemaVersion: 2,
  data: { amount: '100.00' },
  metadata: { ...metadata, extra: [1, 2] },
  recordedAt: new Date(0),
  ...overrides,
})

describe('decodeEvent', () => {
  it('decodes a stored envelope, keeping extra metadata', () => {
    const item = decodeEvent(raw())
    expect(E.isRight(item) && item.right.metadata).toEqual({ ...metadata, extra: [1, 2] })
  })
  it.each([
    ['missing metadata fields', { metadata: { correlationId: 5 } }, /correlationId/],
    ['metadata that is not an object', { metadata: 'text' }, /metadata/],
    ['data that is not an object', { data: 'binary data' }, /data/],
    ['a missing schema version', { schemaVersion: undefined }, /schemaVersion/],
  ])('reports %s with stream and position', (_, overrides, reason) => {
    const item = decodeEvent(raw(overrides))
    if (E.isRight(item)) throw new Error('expected an undecodable event')
    expect(item.left).toMatchObject({ _tag: 'UndecodableEvent', stream: 'order-1', streamRevision: 3n, position: raw().position })
    expect(item.left.reason).toMatch(reason)
  })
})
