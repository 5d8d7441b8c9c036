import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { firstRefusedRecord, truncatedBefore } from '../../../src/adapters/kafka/checked-records.ts'
import { kafkaRecordOf } from '../../../src/adapters/kafka/publisher.ts'
import { packRequests, unpackRecords, type PackedRequest } from '../../../src/adapters/kafka/packed-records.ts'
import { Position, type RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { encodeDomainEvent } from '../../../src/domain/events/registry.ts'
import { allEvents } from '../../domain/events/catalogue.ts'

// The producer thread's check (checked-records.ts): each packed record's value must decode with the
// codec of its ce_type; the first that does not is named as the relay's error line names it, and only
// the records before it are sent.

const position = (n: number): Position => {
  const d = Position.decode(`00000000000000000007-${String(n).padStart(20, '0')}`)
  if (E.isLeft(d)) throw new Error('bad position')
  return d.right
}

/** Every event type of the catalogue, as stored: valid data at its schema version. */
const valid = (): RecordedEvent[] =>
  allEvents().map((e, n) => ({
    eventId: randomUUID(),
    ...encodeDomainEvent(e),
    metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'api_request' },
    streamName: `stream-${String(n)}`,
    streamRevision: BigInt(n),
    position: position(n),
    recordedAt: new Date(Date.UTC(2026, 0, 1, n)),
  }))

const packed = (events: ReadonlyArray<RecordedEvent>): PackedRequest => {
  const requests = [...packRequests(events, '/satang', 100_000_000)]
  const only = requests[0]
  if (requests.length !== 1 || only === undefined) throw new Error(`expected one request, got ${String(requests.length)}`)
  return only
}

describe('firstRefusedRecord (the check before sending)', () => {
  it('passes every event type of the catalogue as the domain encodes it', () => {
    const events = valid()
    expect(events.length).toBeGreaterThan(30)
    const request = packed(events)
    expect(firstRefusedRecord(request.buffer, request.length)).toBeNull()
  })

  it('refuses data its codec refuses, naming stream, revision, position and the violated field; only the records before it are sent', () => {
    const events = valid().slice(0, 6)
    const bad = { ...events[3], type: 'OrderCreated', schemaVersion: 1, data: { amount: '4.20' } } as RecordedEvent
    events[3] = bad
    const request = packed(events)
    const refused = firstRefusedRecord(request.buffer, request.length)
    expect(refused?.index).toBe(3)
    expect(refused?.reason).toMatch(new RegExp(`^stream-3 revision 3 at position ${position(3)}: OrderCreated v1: invalid data: .*amount`))
    if (refused === null) throw new Error('expected a refusal')
    const { length } = truncatedBefore(request.buffer, refused)
    expect(unpackRecords('t', request.buffer, length)).toEqual(events.slice(0, 3).map((e) => kafkaRecordOf('t', e, '/satang').record))
  })

  it('refuses an unknown type and an unknown schema version, as the decoder says them', () => {
    const [first, second] = valid()
    if (first === undefined || second === undefined) throw new Error('no events')
    const unknownType = packed([first, { ...second, type: 'InvoiceIssued' }])
    expect(firstRefusedRecord(unknownType.buffer, unknownType.length)).toMatchObject({ index: 1, reason: `stream-1 revision 1 at position ${position(1)}: unknown event type InvoiceIssued (schema version ${String(second.schemaVersion)})` })
    const unknownVersion = packed([{ ...first, schemaVersion: 9 }])
    expect(firstRefusedRecord(unknownVersion.buffer, unknownVersion.length)?.reason).toMatch(/: unknown schema version 9 \(known: /)
  })

  it('a refused first record leaves nothing to send', () => {
    const [first] = valid()
    if (first === undefined) throw new Error('no events')
    const request = packed([{ ...first, data: {} }, first])
    const refused = firstRefusedRecord(request.buffer, request.length)
    expect(refused?.index).toBe(0)
    if (refused === null) throw new Error('expected a refusal')
    expect(truncatedBefore(request.buffer, refused).length).toBe(0)
  })
})
