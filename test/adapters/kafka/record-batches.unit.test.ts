import { AuthenticationError, compatibilityPartitioner, crc32c, MultipleErrors, NetworkError, readRecordsBatch, Reader, ResponseError } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { packRequests } from '../../../src/adapters/kafka/packed-records.ts'
import { kafkaRecordOf } from '../../../src/adapters/kafka/publisher.ts'
import { askWithFallback, BATCH_HEADER_BYTES, nextSequence, produceVersionOf, produceVersionsByConnection, recordBatchesOf, sealBatch, settleFailedSend, varintBytes, writeVarint, type BrokerApis } from '../../../src/adapters/kafka/record-batches.ts'
import type { RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { eventNo } from './events.ts'

// The producer thread writes Kafka record batches itself (record-batches.ts). Each is read back here
// with the client library's own batch reader: the records must be what `kafkaRecordOf` (the message
// contract's record) gives, each in the partition the client's Java-compatible partitioner picks, in
// order, and the CRC must be the one the broker checks.

const PARTITIONS = 5
const partitionOf = (key: Buffer): number => compatibilityPartitioner(undefined as never, key) % PARTITIONS

type Read = { partition: number; key: string | null; value: string | null; headers: Array<[string | null, string | null]>; timestamp: bigint; offsetDelta: number }

/** Every record of the batches, read with the library's reader, in the order of the batches. */
const readBack = (batches: ReturnType<typeof recordBatchesOf>): Read[] =>
  batches.flatMap((b) => {
    const batch = readRecordsBatch(Reader.from(b.bytes))
    expect(batch.magic).toBe(2)
    expect(batch.length).toBe(b.bytes.length - 12)
    expect(batch.records).toHaveLength(b.records)
    expect(batch.lastOffsetDelta).toBe(b.records - 1)
    return batch.records.map((r) => ({
      partition: b.partition,
      key: r.key?.toString('utf8') ?? null,
      value: r.value?.toString('utf8') ?? null,
      headers: r.headers.map(([k, v]) => [k?.toString('utf8') ?? null, v?.toString('utf8') ?? null] as [string | null, string | null]),
      timestamp: batch.firstTimestamp + r.timestampDelta,
      offsetDelta: r.offsetDelta,
    }))
  })

/** What the contract says each event's record is, and its partition. */
const expected = (e: RecordedEvent): Omit<Read, 'offsetDelta'> => {
  const { record } = kafkaRecordOf('t', e, '/satang')
  return {
    partition: partitionOf(record.key),
    key: record.key.toString('utf8'),
    value: record.value.toString('utf8'),
    headers: [...record.headers].map(([k, v]) => [k.toString('utf8'), v.toString('utf8')] as [string | null, string | null]),
    timestamp: record.timestamp,
  }
}

const batchesOf = (events: ReadonlyArray<RecordedEvent>) => [...packRequests(events, '/satang', 10_000_000)].flatMap((r) => recordBatchesOf(r.buffer, r.length, partitionOf))

describe('Kafka record batches written by the producer thread', () => {
  it('hold, per partition and in order, the records kafkaRecordOf gives: key, value, every header, timestamp', () => {
    const traced = eventNo(3, { metadata: { correlationId: 'ข้าว-1', causationId: 'c', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })
    const events = [eventNo(0), eventNo(1, { data: {}, streamRevision: 0n }), traced, ...Array.from({ length: 60 }, (_, i) => eventNo(10 + i))]
    const batches = batchesOf(events)
    expect(new Set(batches.map((b) => b.partition)).size).toBe(batches.length) // one batch per partition
    expect(batches.length).toBeGreaterThan(1)
    const read = readBack(batches)
    // Each partition's records are the events of that partition, in the order of the events.
    for (const b of batches) {
      const got = read.filter((r) => r.partition === b.partition)
      expect(got.map((r) => r.offsetDelta)).toEqual(got.map((_, i) => i))
      expect(got.map(({ offsetDelta: _, ...r }) => r)).toEqual(events.map(expected).filter((x) => x.partition === b.partition))
    }
    expect(read).toHaveLength(events.length)
    expect(read.find((r) => r.key === traced.streamName && r.headers.some(([k]) => k === 'ce_traceparent'))).toBeDefined()
  })

  it('timestamps: the base is the first record’s, the max the largest, deltas may be negative or span years', () => {
    const at = (ms: number): Date => new Date(ms)
    const base = Date.UTC(2026, 0, 1)
    const same = { streamName: 'order-1-same' }
    const events = [eventNo(1, { ...same, recordedAt: at(base) }), eventNo(2, { ...same, recordedAt: at(base - 5_000) }), eventNo(3, { ...same, recordedAt: at(base + 3 * 365 * 86_400_000) })]
    const [batch, ...none] = batchesOf(events)
    expect(none).toEqual([])
    if (batch === undefined) throw new Error('expected one batch')
    const read = readRecordsBatch(Reader.from(batch.bytes))
    expect(read.firstTimestamp).toBe(BigInt(base))
    expect(read.maxTimestamp).toBe(BigInt(base + 3 * 365 * 86_400_000))
    expect(readBack([batch]).map((r) => r.timestamp)).toEqual(events.map((e) => BigInt(e.recordedAt.getTime())))
  })

  it('sealing writes the producer id, epoch and base sequence, and the CRC-32C of every byte after the CRC', () => {
    const [batch] = batchesOf([eventNo(1), eventNo(8)])
    if (batch === undefined) throw new Error('expected a batch')
    sealBatch(batch.bytes, 1234567890123n, 7, 2_000_000_000, crc32c)
    const read = readRecordsBatch(Reader.from(batch.bytes))
    expect(read.producerId).toBe(1234567890123n)
    expect(read.producerEpoch).toBe(7)
    expect(read.firstSequence).toBe(2_000_000_000)
    expect(read.crc).toBe(crc32c(batch.bytes.subarray(21)) >>> 0)
    // A changed byte of a record changes the CRC the broker computes: the seal covers the records.
    const before = read.crc
    const last = batch.bytes.length - 1
    batch.bytes[last] = (batch.bytes[last] ?? 0) ^ 1
    expect(crc32c(batch.bytes.subarray(21)) >>> 0).not.toBe(before)
    expect(batch.bytes.length).toBeGreaterThan(BATCH_HEADER_BYTES)
  })

  it('sequences wrap from 2^31 - 1 to 0, as Kafka’s do', () => {
    expect(nextSequence(0, 5)).toBe(5)
    expect(nextSequence(2 ** 31 - 3, 3)).toBe(0)
    expect(nextSequence(2 ** 31 - 3, 5)).toBe(2)
  })

  it('zig-zag varints: sizes and bytes as Kafka writes them, for small, negative and large numbers', () => {
    const cases: Array<[number, number[]]> = [
      [0, [0]],
      [-1, [1]],
      [1, [2]],
      [63, [126]],
      [64, [128, 1]],
      [-65, [129, 1]],
      [300, [216, 4]],
      [2 ** 31, [128, 128, 128, 128, 16]],
      [-(2 ** 40), [255, 255, 255, 255, 255, 63]],
    ]
    for (const [n, bytes] of cases) {
      const buf = Buffer.alloc(12)
      expect(writeVarint(buf, 1, n), String(n)).toBe(1 + bytes.length)
      expect([...buf.subarray(1, 1 + bytes.length)], String(n)).toEqual(bytes)
      expect(varintBytes(n), String(n)).toBe(bytes.length)
    }
  })

  it('a packed request cut short is refused, not read wrong', () => {
    const [request] = [...packRequests([eventNo(1)], '/s', 1_000_000)]
    if (request === undefined) throw new Error('expected a request')
    expect(() => recordBatchesOf(request.buffer, request.length - 3, partitionOf)).toThrow()
  })
})

describe('a produce request that failed: which batches go again', () => {
  /** A broker's produce answer (v9) with these error codes by partition, as the client reports it. */
  const answer = (codes: Record<number, number>): ResponseError => {
    const partitionResponses = Object.entries(codes).map(([index, errorCode]) => ({ index: Number(index), errorCode, baseOffset: 0n, logAppendTimeMs: -1n, logStartOffset: 0n, recordErrors: [], errorMessage: null }))
    const errors: Record<string, [number, null]> = Object.fromEntries(partitionResponses.flatMap((p, j) => (p.errorCode === 0 ? [] : [[`/responses/0/partition_responses/${String(j)}`, [p.errorCode, null] as [number, null]]])))
    return new ResponseError(0, 9, errors, { responses: [{ name: 't', partitionResponses }], throttleTimeMs: 0 })
  }
  const batches = [0, 1, 2, 3].map((partition) => ({ partition }))
  const partitionsOf = (r: { again: ReadonlyArray<{ partition: number }> }): number[] => r.again.map((b) => b.partition)

  it('a moved leader or missing replicas: those partitions again, the written ones and duplicates not', () => {
    // 6 NOT_LEADER_OR_FOLLOWER, 19 NOT_ENOUGH_REPLICAS, 46 DUPLICATE_SEQUENCE_NUMBER (the broker holds it already).
    const r = settleFailedSend(batches, answer({ 0: 0, 1: 6, 2: 19, 3: 46 }), true)
    expect(partitionsOf(r)).toEqual([1, 2])
    expect(r.failed).toBe(false)
  })

  it('no retries left: the request fails', () => {
    const r = settleFailedSend(batches, answer({ 0: 0, 1: 6, 2: 0, 3: 0 }), false)
    expect(partitionsOf(r)).toEqual([])
    expect(r.failed).toBe(true)
  })

  it('an error Kafka does not retry (out of order sequence, too large, not authorised) fails the request', () => {
    for (const code of [45, 10, 29]) {
      const r = settleFailedSend(batches, answer({ 0: 0, 1: code, 2: 6, 3: 0 }), true)
      expect(r.failed, String(code)).toBe(true)
      expect(partitionsOf(r), String(code)).toEqual([2])
    }
  })

  it('no answer: a lost connection is tried again, an authentication failure or anything else fails', () => {
    const lost = new MultipleErrors('Producing messages failed.', [new NetworkError('Connection closed')])
    expect(partitionsOf(settleFailedSend(batches, lost, true))).toEqual([0, 1, 2, 3])
    expect(settleFailedSend(batches, lost, false).failed).toBe(true)
    expect(settleFailedSend(batches, new AuthenticationError('SASL authentication failed'), true)).toEqual({ again: [], failed: true })
    expect(settleFailedSend(batches, new Error('a defect'), true)).toEqual({ again: [], failed: true })
  })
})

describe('the Produce version for a broker (its ApiVersions answer)', () => {
  const apis = (min: number, max: number) => [{ apiKey: 18, minVersion: 0, maxVersion: 4 }, { apiKey: 0, minVersion: min, maxVersion: max }]
  it('9 where the broker takes it (Kafka 2.8 and newer), 3 for Kafka 0.11–2.7, refused with the versions otherwise', () => {
    expect(produceVersionOf(apis(3, 12))).toBe(9) // Kafka 4
    expect(produceVersionOf(apis(0, 9))).toBe(9) // Kafka 2.8
    expect(produceVersionOf(apis(0, 8))).toBe(3) // Kafka 2.4–2.7
    expect(produceVersionOf(apis(0, 3))).toBe(3) // Kafka 0.11
    expect(produceVersionOf(apis(0, 2))).toEqual({ refused: 'the broker takes Produce versions 0–2; the relay writes version 9 (Kafka 2.8 and newer) or 3 (Kafka 0.11 and newer)' })
    expect(produceVersionOf(apis(10, 13))).toEqual({ refused: 'the broker takes Produce versions 10–13; the relay writes version 9 (Kafka 2.8 and newer) or 3 (Kafka 0.11 and newer)' })
    expect(produceVersionOf([{ apiKey: 18, minVersion: 0, maxVersion: 4 }])).toEqual({ refused: 'the broker lists no Produce API' })
  })

  // A cluster upgraded one broker at a time: its brokers answer differently, so each leader is asked.
  it('asks each broker connection once, and writes each the version it takes: 9 to a Kafka 3 broker, 3 to a Kafka 2.7 one beside it', async () => {
    const newer = { name: 'broker 1, Kafka 3.9' }
    const older = { name: 'broker 2, Kafka 2.7' }
    const answers = new Map<object, BrokerApis>([
      [newer, apis(3, 11)],
      [older, apis(0, 8)],
    ])
    const asked: string[] = []
    const versionFor = produceVersionsByConnection<{ name: string }>((c) => {
      asked.push(c.name)
      return Promise.resolve(answers.get(c) ?? [])
    })
    expect(await Promise.all([versionFor(newer), versionFor(older), versionFor(newer), versionFor(older)])).toEqual([9, 3, 9, 3])
    expect(asked).toEqual([newer.name, older.name])
  })

  it('a broker that takes neither version is refused as the broker refusing (UNSUPPORTED_VERSION), naming its versions; a failed ask is asked again', async () => {
    const tooOld = { name: 'Kafka 0.10' }
    const flaky = { name: 'a connection that drops once' }
    let flakyAsks = 0
    const versionFor = produceVersionsByConnection<{ name: string }>((c) => {
      if (c === tooOld) return Promise.resolve(apis(0, 2))
      flakyAsks += 1
      return flakyAsks === 1 ? Promise.reject(new NetworkError('Connection closed')) : Promise.resolve(apis(0, 9))
    })
    await expect(versionFor(tooOld)).rejects.toMatchObject({ apiId: 'UNSUPPORTED_VERSION', message: 'the broker takes Produce versions 0–2; the relay writes version 9 (Kafka 2.8 and newer) or 3 (Kafka 0.11 and newer)' })
    await expect(versionFor(flaky)).rejects.toThrow('Connection closed')
    expect(await versionFor(flaky)).toBe(9)
    expect(await versionFor(flaky)).toBe(9)
    expect(flakyAsks).toBe(2)
  })

  it('asks with ApiVersions v1 only when the broker answers v3 with UNSUPPORTED_VERSION (Kafka before 2.4); any other error is passed on', async () => {
    const v1Answer = apis(0, 7)
    const v3Refused = new ResponseError(18, 3, { '/': [35, null] }, { errorCode: 35, apiKeys: [], throttleTimeMs: 0 })
    const calls: string[] = []
    const ask = (v3: () => Promise<BrokerApis>) =>
      askWithFallback<string>(
        (c) => (calls.push(`v3 ${c}`), v3()),
        (c) => (calls.push(`v1 ${c}`), Promise.resolve(v1Answer)),
      )
    expect(await ask(() => Promise.reject(v3Refused))('old')).toEqual(v1Answer)
    expect(await ask(() => Promise.resolve(apis(3, 11)))('new')).toEqual(apis(3, 11))
    await expect(ask(() => Promise.reject(new NetworkError('Connection closed')))('lost')).rejects.toThrow('Connection closed')
    expect(calls).toEqual(['v3 old', 'v1 old', 'v3 new', 'v3 lost'])
  })
})
