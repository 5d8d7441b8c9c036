import type { RecordedEvent } from '../../application/ports/event-store.ts'
import { eachHeader, HEADERS } from './message.ts'

/*
 * The relay's records on their way to the producer thread (producer-thread.ts). The relay's own thread
 * turns each stored event into its record's bytes (key, value, headers: what `kafkaRecordOf` makes) and
 * writes them into one buffer per produce request; the buffer is handed to the producer thread without
 * a copy (a transferred ArrayBuffer), which writes Kafka record batches from it (record-batches.ts) and
 * sends them. No per-record object crosses threads. `unpackRecords` reads a packed request back as the
 * client's records: what the tests compare with the message contract's `kafkaRecordOf`.
 *
 * A packed request, little-endian: u32 count, then per record: f64 timestamp (epoch ms), u32 key
 * length, key, u32 value length, value, u8 header count, then per header: u8 name (its index in
 * HEADER_NAMES), u32 value length, value.
 */

/** A record as the client sends it: key, value and headers as UTF-8 bytes, the commit time as the timestamp. */
export type KafkaRecord = {
  readonly topic: string
  readonly key: Buffer
  readonly value: Buffer
  readonly headers: Map<Buffer, Buffer>
  readonly timestamp: bigint
}

/** One produce request's records, packed. `buffer` is transferred (unusable here once posted). */
export type PackedRequest = {
  readonly buffer: ArrayBuffer
  /** Bytes of `buffer` in use. */
  readonly length: number
  /** Records in it. */
  readonly count: number
  /** Bytes of keys, values, header names and values, as `toKafkaMessage` counts them. */
  readonly bytes: number
}

/** The header names a record may carry, in a fixed order: a packed header names one by its index. */
export const HEADER_NAMES: ReadonlyArray<string> = Object.values(HEADERS)
const HEADER_INDEX = new Map(HEADER_NAMES.map((name, i) => [name, i]))

// A request's buffer starts this much larger than the request's byte limit: each record adds 17 bytes
// of framing and 5 per header. A record that does not fit grows the buffer.
const FRAMING_ROOM = 256 * 1024

// Texts up to this long (most header values) are written byte by byte while they are ASCII: cheaper
// than a call into the native UTF-8 encoder, which was the largest part of packing the headers.
const SHORT_TEXT = 64

/** Writes `s` at `at` as UTF-8 and returns its byte length: ASCII byte by byte, anything else by the encoder (room for 3 bytes per character is there). */
const shortText = (buf: Buffer, at: number, s: string): number => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0x80) return buf.write(s, at, 'utf8')
    buf[at + i] = c
  }
  return s.length
}

/**
 * Packs events, in order, into requests of at most `maxBytes` (keys, values and headers; a single
 * larger record goes alone), as `requestsFrom` splits records. Lazy: a request is packed only when the
 * one before it has been taken, so the first can be on its way while the rest are packed.
 */
export function* packRequests(events: Iterable<RecordedEvent>, source: string, maxBytes: number, spare: () => ArrayBuffer | undefined = () => undefined): Generator<PackedRequest> {
  const initial = maxBytes + FRAMING_ROOM
  /** A buffer of at least `size` bytes: a spare one given back by the producer thread when it is large enough. */
  const fresh = (size: number): Buffer => {
    const reused = spare()
    return reused !== undefined && reused.byteLength >= size ? Buffer.from(reused) : Buffer.allocUnsafeSlow(size)
  }
  let buf = fresh(initial)
  let at = 4
  let count = 0
  let bytes = 0
  /** Room for `n` more bytes at `at`, growing the buffer (a copy) when it lacks it. */
  const room = (n: number): void => {
    if (at + n <= buf.length) return
    const bigger = Buffer.allocUnsafeSlow(Math.max(buf.length * 2, at + n))
    buf.copy(bigger, 0, 0, at)
    buf = bigger
  }
  /** Writes `s` as u32 length + UTF-8 bytes; returns its byte length. */
  const text = (s: string): number => {
    room(4 + 3 * s.length)
    const n = s.length <= SHORT_TEXT ? shortText(buf, at + 4, s) : buf.write(s, at + 4, 'utf8')
    buf.writeUInt32LE(n, at)
    at += 4 + n
    return n
  }
  // The commit time's text, kept for the next record: the events of one append share it.
  let timeMs = Number.NaN
  let timeText = ''
  const isoTime = (d: Date): string => {
    const ms = d.getTime()
    if (ms !== timeMs) {
      timeMs = ms
      timeText = d.toISOString()
    }
    return timeText
  }
  // The record being written: its bytes as toKafkaMessage counts them, and its headers so far.
  let size = 0
  let headerCount = 0
  const header = (name: string, value: string): void => {
    const index = HEADER_INDEX.get(name)
    if (index === undefined) throw new Error(`packRequests: header ${name} is not in HEADER_NAMES`)
    room(1)
    buf.writeUInt8(index, at)
    at += 1
    size += name.length + text(value)
    headerCount += 1
  }
  const finish = (end: number, records: number, recordBytes: number): PackedRequest => {
    buf.writeUInt32LE(records, 0)
    return { buffer: buf.buffer as ArrayBuffer, length: end, count: records, bytes: recordBytes }
  }
  for (const e of events) {
    const start = at
    room(8)
    buf.writeDoubleLE(e.recordedAt.getTime(), at)
    at += 8
    size = text(e.streamName)
    size += text(JSON.stringify(e.data))
    const countAt = at
    room(1)
    at += 1
    headerCount = 0
    eachHeader(e, source, header, isoTime)
    buf.writeUInt8(headerCount, countAt)
    if (count > 0 && bytes + size > maxBytes) {
      // This record starts the next request: the full one is handed out, the record moves to a new buffer.
      const next = fresh(Math.max(initial, 4 + at - start))
      buf.copy(next, 4, start, at)
      const full = finish(start, count, bytes)
      buf = next
      at = 4 + (at - start)
      count = 0
      bytes = 0
      yield full
    }
    count += 1
    bytes += size
  }
  if (count > 0) yield finish(at, count, bytes)
}

// The contract's header names as bytes, made once for every record this adapter builds (each record's
// headers are a Map of its own, keyed by these).
export const HEADER_NAME_BYTES: ReadonlyArray<Buffer> = HEADER_NAMES.map((name) => Buffer.from(name, 'utf8'))

/** The bytes of a header name: the ones made once for the contract's names, fresh ones for any other. */
export const headerNameBytes = (name: string): Buffer => {
  const index = HEADER_INDEX.get(name)
  return (index === undefined ? undefined : HEADER_NAME_BYTES[index]) ?? Buffer.from(name, 'utf8')
}

/** The records of a packed request, for `topic`: keys, values and header values are views of `buffer` (the tests' reader). */
export const unpackRecords = (topic: string, buffer: ArrayBuffer, length: number): KafkaRecord[] => {
  const buf = Buffer.from(buffer, 0, length)
  const count = buf.readUInt32LE(0)
  const records = new Array<KafkaRecord>(count)
  let at = 4
  const bytes = (): Buffer => {
    const n = buf.readUInt32LE(at)
    const view = buf.subarray(at + 4, at + 4 + n)
    at += 4 + n
    return view
  }
  for (let i = 0; i < count; i++) {
    const timestamp = BigInt(buf.readDoubleLE(at))
    at += 8
    const key = bytes()
    const value = bytes()
    const headerCount = buf.readUInt8(at)
    at += 1
    const headers = new Map<Buffer, Buffer>()
    for (let h = 0; h < headerCount; h++) {
      const name = HEADER_NAME_BYTES[buf.readUInt8(at)]
      at += 1
      if (name === undefined) throw new Error('unpackRecords: a header name index out of range (a defect of packRequests)')
      headers.set(name, bytes())
    }
    records[i] = { topic, key, value, headers, timestamp }
  }
  if (at !== length) throw new Error(`unpackRecords: ${String(count)} records take ${String(at)} bytes of a request of ${String(length)} (a defect of packRequests)`)
  return records
}
