import { describe, expect, it } from 'vitest'
import { firstRefusedRecord, truncatedBefore } from '../../../src/adapters/kafka/checked-records.ts'
import { kafkaRecordOf } from '../../../src/adapters/kafka/publisher.ts'
import { packRequests, unpackRecords, type PackedRequest } from '../../../src/adapters/kafka/packed-records.ts'
import type { RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { catalogueEvents, positionNo } from './events.ts'

// The producer thread's check (checked-records.ts): each packed record's value must decode with the
// codec of its ce_type; the first that does not is named as the relay's error line names it, and only
// the records before it are sent.

const packed = (events: ReadonlyArray<RecordedEvent>): PackedRequest => {
  const requests = [...packRequests(events, '/satang', 100_000_000)]
  const only = requests[0]
  if (requests.length !== 1 || only === undefined) throw new Error(`expected one request, got ${String(requests.length)}`)
  return only
}

describe('firstRefusedRecord (the check before sending)', () => {
  it('passes every event type of the catalogue as the domain encodes it', () => {
    const events = catalogueEvents()
    expect(events.length).toBeGreaterThan(30)
    const request = packed(events)
    expect(firstRefusedRecord(request.buffer, request.length)).toBeNull()
  })

  it('refuses data its codec refuses, naming stream, revision, position and the violated field; only the records before it are sent', () => {
    const events = catalogueEvents().slice(0, 6)
    const bad = { ...events[3], type: 'OrderCreated', schemaVersion: 1, data: { amount: '4.20' } } as RecordedEvent
    events[3] = bad
    const request = packed(events)
    const refused = firstRefusedRecord(request.buffer, request.length)
    expect(refused?.index).toBe(3)
    expect(refused?.reason).toMatch(new RegExp(`^stream-3 revision 3 at position ${positionNo(3)}: OrderCreated v1: invalid data: .*amount`))
    if (refused === null) throw new Error('expected a refusal')
    expect(unpackRecords('t', request.buffer, truncatedBefore(request.buffer, refused))).toEqual(events.slice(0, 3).map((e) => kafkaRecordOf('t', e, '/satang').record))
  })

  it('refuses an unknown type and an unknown schema version, as the decoder says them', () => {
    const [first, second] = catalogueEvents()
    if (first === undefined || second === undefined) throw new Error('no events')
    const unknownType = packed([first, { ...second, type: 'InvoiceIssued' }])
    expect(firstRefusedRecord(unknownType.buffer, unknownType.length)).toMatchObject({ index: 1, reason: `stream-1 revision 1 at position ${positionNo(1)}: unknown event type InvoiceIssued (schema version ${String(second.schemaVersion)})` })
    const unknownVersion = packed([{ ...first, schemaVersion: 9 }])
    expect(firstRefusedRecord(unknownVersion.buffer, unknownVersion.length)?.reason).toMatch(/: unknown schema version 9 \(known: /)
  })

  it('a refused first record leaves nothing to send', () => {
    const [first] = catalogueEvents()
    if (first === undefined) throw new Error('no events')
    const request = packed([{ ...first, data: {} }, first])
    const refused = firstRefusedRecord(request.buffer, request.length)
    expect(refused?.index).toBe(0)
    if (refused === null) throw new Error('expected a refusal')
    expect(truncatedBefore(request.buffer, refused)).toBe(0)
  })
})
