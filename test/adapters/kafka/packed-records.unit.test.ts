import { describe, expect, it } from 'vitest'
import { HEADER_NAMES, headerNameBytes, packRequests, unpackRecords, type KafkaRecord } from '../../../src/adapters/kafka/packed-records.ts'
import { kafkaRecordOf, requestsFrom } from '../../../src/adapters/kafka/publisher.ts'
import { HEADERS } from '../../../src/adapters/kafka/message.ts'
import type { RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { eventNo } from './events.ts'

// The relay packs records on its own thread and the producer thread reads them back: what is sent must
// be byte for byte what `kafkaRecordOf` (the message contract's record) gives, split into the same requests.

const bytesOf = (r: KafkaRecord) => ({
  topic: r.topic,
  key: r.key.toString('hex'),
  value: r.value.toString('hex'),
  headers: [...r.headers].map(([k, v]) => [k.toString('utf8'), v.toString('hex')]),
  timestamp: r.timestamp,
})

/** Packs and reads back, as the two threads do (the buffer crosses as an ArrayBuffer). */
const roundTrip = (events: ReadonlyArray<RecordedEvent>, maxBytes: number) =>
  [...packRequests(events, '/satang', maxBytes)].map((request) => ({ request, records: unpackRecords('t', request.buffer, request.length) }))

describe('packed records (relay thread → producer thread)', () => {
  it('every header name of the contract has an index', () => {
    expect([...HEADER_NAMES].sort()).toEqual(Object.values(HEADERS).sort())
  })

  it('header names are made into bytes once for the whole adapter: kafkaRecordOf and unpackRecords key their headers by the same buffers', () => {
    for (const name of HEADER_NAMES) {
      expect(headerNameBytes(name)).toBe(headerNameBytes(name))
      expect(headerNameBytes(name).toString('utf8')).toBe(name)
    }
    expect(headerNameBytes('x-not-in-the-contract').toString('utf8')).toBe('x-not-in-the-contract')
    const e = eventNo(1)
    const direct = [...kafkaRecordOf('t', e, '/satang').record.headers.keys()]
    const unpacked = [...packRequests([e], '/satang', 1_000_000)].flatMap((r) => unpackRecords('t', r.buffer, r.length)).flatMap((r) => [...r.headers.keys()])
    expect(direct.length).toBeGreaterThan(0)
    expect(unpacked).toHaveLength(direct.length)
    for (const [i, name] of direct.entries()) {
      expect(name).toBe(headerNameBytes(name.toString('utf8')))
      expect(unpacked[i]).toBe(name)
    }
  })

  it('reads back the same bytes as kafkaRecordOf, in order: Thai text, a traceparent, empty data, revision 0', () => {
    const traced = eventNo(3, { metadata: { correlationId: 'ข้าว-1', causationId: 'c', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })
    // Texts ASCII up to a Thai character, and longer than the short-text path: written by the encoder.
    const mixed = eventNo(5, { streamName: 'order-140000000000000001-หม้อ-5', metadata: { correlationId: `x-${'9'.repeat(70)}`, causationId: 'cause-ข้าว', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request' } })
    // Two events of one append share the commit time; the next one has its own.
    const sameTime = eventNo(6, { recordedAt: mixed.recordedAt })
    const events = [eventNo(0), eventNo(1, { data: {}, streamRevision: 0n }), traced, eventNo(4, { metadata: { correlationId: '', causationId: 'c', recordedAt: '2026-01-01T03:00:00.000Z', source: 'query', traceparent: 'not-a-traceparent' } }), mixed, sameTime, eventNo(7)]
    const [only, ...more] = roundTrip(events, 1_000_000)
    expect(more).toEqual([])
    expect(only?.request.count).toBe(7)
    expect(only?.records.map(bytesOf)).toEqual(events.map((e) => bytesOf(kafkaRecordOf('t', e, '/satang').record)))
    expect(only?.request.bytes).toBe(events.reduce((n, e) => n + kafkaRecordOf('t', e, '/satang').bytes, 0))
    expect(only?.records[2]?.headers.size).toBe(12) // the traceparent travels
    expect(only?.records[0]?.headers.size).toBe(11)
  })

  it('splits into requests exactly as requestsFrom splits the records (a record larger than the limit goes alone)', () => {
    const huge = eventNo(50, { data: { blob: 'ก'.repeat(40_000) } }) // 120,000 bytes of value: above the limit and the buffer's first size
    const events = [...Array.from({ length: 120 }, (_, i) => eventNo(i)), huge, ...Array.from({ length: 30 }, (_, i) => eventNo(200 + i))]
    for (const maxBytes of [1, 700, 5_000, 50_000, 10_000_000]) {
      const expected = [...requestsFrom(events.map((e) => kafkaRecordOf('t', e, '/satang')), maxBytes)]
      const got = roundTrip(events, maxBytes)
      expect(got.map((g) => g.request.count), `max ${String(maxBytes)}`).toEqual(expected.map((r) => r.length))
      expect(got.map((g) => g.request.bytes)).toEqual(expected.map((r) => r.reduce((n, x) => n + x.bytes, 0)))
      expect(got.flatMap((g) => g.records.map(bytesOf))).toEqual(expected.flatMap((r) => r.map((x) => bytesOf(x.record))))
    }
  })

  it('packs nothing for no events, and each request in a buffer of its own (each is transferred)', () => {
    expect([...packRequests([], '/s', 1_000)]).toEqual([])
    const got = [...packRequests(Array.from({ length: 40 }, (_, i) => eventNo(i)), '/s', 2_000)]
    expect(got.length).toBeGreaterThan(2)
    expect(new Set(got.map((r) => r.buffer)).size).toBe(got.length)
  })

  it('a packed request that is cut short or has bytes left over is refused, not read wrong', () => {
    const [request] = [...packRequests([eventNo(1)], '/s', 1_000_000)]
    if (request === undefined) throw new Error('expected a request')
    expect(() => unpackRecords('t', request.buffer, request.length - 3)).toThrow(`1 records take ${String(request.length)} bytes of a request of ${String(request.length - 3)}`)
    const longer = new Uint8Array(request.length + 2)
    longer.set(new Uint8Array(request.buffer, 0, request.length))
    expect(() => unpackRecords('t', longer.buffer, longer.length)).toThrow(`1 records take ${String(request.length)} bytes of a request of ${String(request.length + 2)}`)
  })
})

describe('packing into spare buffers (given back by the producer thread)', () => {
  it('packs into a spare buffer large enough, allocates when the spare is too small, and reads back the same bytes', () => {
    const events = Array.from({ length: 30 }, (_, i) => eventNo(i))
    const spares = [new ArrayBuffer(16), new ArrayBuffer(2_000 + 256 * 1024)]
    const got = [...packRequests(events, '/satang', 2_000, () => spares.pop())]
    expect(got[0]?.buffer.byteLength).toBe(2_000 + 256 * 1024) // the large spare, taken first
    expect(got[1]?.buffer.byteLength).not.toBe(16) // the small one was not used
    expect(spares).toEqual([])
    const records = got.flatMap((r) => unpackRecords('t', r.buffer, r.length))
    expect(records.map(bytesOf)).toEqual(events.map((e) => bytesOf(kafkaRecordOf('t', e, '/satang').record)))
  })
})
