import { apiVersionsV1, apiVersionsV3, crc32c, createAPI, NetworkError, ProduceAcks, produceV3, produceV9, protocolErrors, protocolErrorsCodesById, ResponseError, Writer, type API, type Connection, type Producer } from '@platformatic/kafka'
import { hasBrokerError } from './errors.ts'
import { HEADER_NAME_BYTES } from './packed-records.ts'

/*
 * Kafka record batches (the broker's on-disk and wire format, magic 2) straight from a packed request
 * (packed-records.ts), for the producer thread. The client's own path builds an object per record, a
 * writer per field and a chain of buffers per batch, then copies them together; the relay's records
 * are already bytes, so this writes each partition's batch into one buffer of its exact size, with
 * two passes over the packed request and no object per record.
 *
 * A batch, big-endian: base offset i64 (0), length i32 (bytes after this field), partition leader
 * epoch i32 (-1: the broker fills it), magic i8 (2), CRC-32C u32 (of every byte after it), attributes
 * i16 (0: no compression, not transactional, create time), last offset delta i32, base timestamp i64,
 * max timestamp i64, producer id i64, producer epoch i16, base sequence i32, record count i32, then
 * the records. Each record: its length, attributes i8 (0), timestamp delta, offset delta, key length,
 * key, value length, value, header count, then per header its name's length, name, value's length,
 * value; every length, count and delta a zig-zag varint (Kafka's DefaultRecord).
 *
 * The producer id, epoch and base sequence are the sender's; `sealBatch` writes them and the CRC just
 * before the batch is sent (a resend of the same batch keeps them: that is what lets the broker drop a
 * duplicate).
 */

/** Bytes before the first record. */
export const BATCH_HEADER_BYTES = 61
const EMPTY = Buffer.alloc(0)
const AT_LENGTH = 8
const AT_LEADER_EPOCH = 12
const AT_MAGIC = 16
const AT_CRC = 17
const AT_ATTRIBUTES = 21
const AT_LAST_OFFSET_DELTA = 23
const AT_BASE_TIMESTAMP = 27
const AT_MAX_TIMESTAMP = 35
const AT_PRODUCER_ID = 43
const AT_PRODUCER_EPOCH = 51
const AT_BASE_SEQUENCE = 53
const AT_RECORD_COUNT = 57

/** One partition's records of a request, as a batch ready to be sealed. */
export type PartitionBatch = {
  readonly partition: number
  readonly records: number
  /** The whole batch: header and records. */
  readonly bytes: Buffer
}

/** Zig-zag: small negative and positive numbers both take few bytes. Exact for every safe integer. */
const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1)

/** Bytes of `n` (a zig-zag varint, `n` a safe integer). */
export const varintBytes = (n: number): number => {
  let z = zigzag(n)
  let size = 1
  while (z >= 128) {
    z = Math.floor(z / 128)
    size += 1
  }
  return size
}

/** Writes `n` as a zig-zag varint at `at`; returns the position after it. */
export const writeVarint = (buf: Buffer, at: number, n: number): number => {
  let z = zigzag(n)
  let i = at
  while (z >= 128) {
    buf[i++] = (z % 128) | 128
    z = Math.floor(z / 128)
  }
  buf[i++] = z
  return i
}

/**
 * The batches of one packed request, one per partition in the order of each partition's first record;
 * each partition's records in their order in the request. `partitionOf` gives a record's partition
 * from its key's bytes.
 */
export const recordBatchesOf = (buffer: ArrayBuffer, length: number, partitionOf: (key: Buffer) => number): PartitionBatch[] => {
  const buf = Buffer.from(buffer, 0, length)
  const count = buf.readUInt32LE(0)
  /** One partition's batch as it is measured (pass 1), then written (pass 2, `bytes` and `at`). */
  type Slot = { readonly partition: number; records: number; size: number; readonly first: number; max: number; bytes: Buffer; at: number }
  const slots: Slot[] = []
  const slotOf = new Map<number, Slot>()
  // Pass 1: each record's batch and size (its body: what its length varint counts); each batch's size, first and largest timestamp.
  const slotOfRecord: Slot[] = new Array<Slot>(count)
  const bodyOfRecord = new Int32Array(count)
  let at = 4
  for (let i = 0; i < count; i++) {
    const timestamp = buf.readDoubleLE(at)
    const keyLength = buf.readUInt32LE(at + 8)
    const key = buf.subarray(at + 12, at + 12 + keyLength)
    at += 12 + keyLength
    const valueLength = buf.readUInt32LE(at)
    at += 4 + valueLength
    const headers = buf.readUInt8(at)
    at += 1
    let headerBytes = varintBytes(headers)
    for (let h = 0; h < headers; h++) {
      const name = HEADER_NAME_BYTES[buf.readUInt8(at)]
      if (name === undefined) throw new Error('recordBatchesOf: a header name index out of range (a defect of packRequests)')
      const valueBytes = buf.readUInt32LE(at + 1)
      headerBytes += varintBytes(name.length) + name.length + varintBytes(valueBytes) + valueBytes
      at += 5 + valueBytes
    }
    const partition = partitionOf(key)
    let slot = slotOf.get(partition)
    if (slot === undefined) {
      slot = { partition, records: 0, size: BATCH_HEADER_BYTES, first: timestamp, max: timestamp, bytes: EMPTY, at: BATCH_HEADER_BYTES }
      slotOf.set(partition, slot)
      slots.push(slot)
    }
    if (timestamp > slot.max) slot.max = timestamp
    const body = 1 + varintBytes(timestamp - slot.first) + varintBytes(slot.records) + varintBytes(keyLength) + keyLength + varintBytes(valueLength) + valueLength + headerBytes
    slotOfRecord[i] = slot
    bodyOfRecord[i] = body
    slot.records += 1
    slot.size += varintBytes(body) + body
  }
  if (at !== length) throw new Error(`recordBatchesOf: ${String(count)} records take ${String(at)} bytes of a request of ${String(length)} (a defect of packRequests)`)

  // Pass 2: each batch's header, then its records in order (their offset deltas counted again from 0).
  for (const slot of slots) {
    const bytes = Buffer.allocUnsafe(slot.size)
    bytes.fill(0, 0, BATCH_HEADER_BYTES)
    bytes.writeInt32BE(bytes.length - AT_LEADER_EPOCH, AT_LENGTH)
    bytes.writeInt32BE(-1, AT_LEADER_EPOCH)
    bytes.writeInt8(2, AT_MAGIC)
    bytes.writeInt16BE(0, AT_ATTRIBUTES)
    bytes.writeInt32BE(slot.records - 1, AT_LAST_OFFSET_DELTA)
    bytes.writeBigInt64BE(BigInt(slot.first), AT_BASE_TIMESTAMP)
    bytes.writeBigInt64BE(BigInt(slot.max), AT_MAX_TIMESTAMP)
    bytes.writeInt32BE(slot.records, AT_RECORD_COUNT)
    slot.bytes = bytes
    slot.records = 0
  }
  at = 4
  for (let i = 0; i < count; i++) {
    const slot = slotOfRecord[i]
    if (slot === undefined) throw new Error('recordBatchesOf: a record of no batch')
    const target = slot.bytes
    let w = writeVarint(target, slot.at, bodyOfRecord[i] ?? 0)
    target[w++] = 0
    w = writeVarint(target, w, buf.readDoubleLE(at) - slot.first)
    w = writeVarint(target, w, slot.records)
    slot.records += 1
    const keyLength = buf.readUInt32LE(at + 8)
    w = writeVarint(target, w, keyLength)
    w += buf.copy(target, w, at + 12, at + 12 + keyLength)
    at += 12 + keyLength
    const valueLength = buf.readUInt32LE(at)
    w = writeVarint(target, w, valueLength)
    w += buf.copy(target, w, at + 4, at + 4 + valueLength)
    at += 4 + valueLength
    const headers = buf.readUInt8(at)
    at += 1
    w = writeVarint(target, w, headers)
    for (let h = 0; h < headers; h++) {
      const name = HEADER_NAME_BYTES[buf.readUInt8(at)] ?? EMPTY
      const valueBytes = buf.readUInt32LE(at + 1)
      w = writeVarint(target, w, name.length)
      w += name.copy(target, w)
      w = writeVarint(target, w, valueBytes)
      w += buf.copy(target, w, at + 5, at + 5 + valueBytes)
      at += 5 + valueBytes
    }
    slot.at = w
  }
  for (const b of slots) if (b.at !== b.bytes.length) throw new Error(`recordBatchesOf: partition ${String(b.partition)}'s batch is ${String(b.bytes.length)} bytes but ${String(b.at)} were written (a defect)`)
  return slots.map(({ partition, records, bytes }) => ({ partition, records, bytes }))
}

/** Writes the sender's producer id, epoch and base sequence into a batch, then its CRC-32C. */
export const sealBatch = (batch: Buffer, producerId: bigint, producerEpoch: number, baseSequence: number, crc: (bytes: Buffer) => number = crc32c): void => {
  batch.writeBigInt64BE(producerId, AT_PRODUCER_ID)
  batch.writeInt16BE(producerEpoch, AT_PRODUCER_EPOCH)
  batch.writeInt32BE(baseSequence, AT_BASE_SEQUENCE)
  batch.writeUInt32BE(crc(batch.subarray(AT_ATTRIBUTES)) >>> 0, AT_CRC)
}

/** An idempotent producer as its batches are sealed: its id and epoch, and each partition's next sequence. */
export type ProducerState = { readonly producerId: bigint; readonly epoch: number; readonly sequences: Map<number, number> }

/** Seals batches in order, each with its partition's next sequence, and moves those sequences on. */
export const sealBatches = (batches: ReadonlyArray<PartitionBatch>, producer: ProducerState): void => {
  for (const b of batches) {
    const sequence = producer.sequences.get(b.partition) ?? 0
    sealBatch(b.bytes, producer.producerId, producer.epoch, sequence)
    producer.sequences.set(b.partition, nextSequence(sequence, b.records))
  }
}

/** The sequence after `sequence` and `records` more records: Kafka's sequences wrap from 2^31 - 1 to 0. */
export const nextSequence = (sequence: number, records: number): number => (sequence + records) % 2 ** 31

/** Error codes of a produce response's partitions (0 = written), by partition; undefined when `e` is no broker answer. */
const partitionCodesOf = (e: unknown): Map<number, number> | undefined => {
  if (!(e instanceof ResponseError)) return undefined
  const response = (e as { response?: { responses?: Array<{ partitionResponses?: Array<{ index: number; errorCode: number }> }> } }).response
  const codes = new Map<number, number>()
  for (const t of response?.responses ?? []) for (const p of t.partitionResponses ?? []) codes.set(p.index, p.errorCode)
  return codes
}

// The broker already holds this batch (a resend after an answer that was lost): it is written, once.
const DUPLICATE_SEQUENCE_NUMBER = 46

const retriableCode = (code: number): boolean => {
  const id = (protocolErrorsCodesById as Record<number, string | undefined>)[code]
  return id !== undefined && (protocolErrors as Record<string, { canRetry?: boolean } | undefined>)[id]?.canRetry === true
}

/**
 * After a produce request to one broker failed with `error`: which of its batches to send again (the
 * same bytes, so the same sequence) and whether the request fails. A partition the broker wrote (0, or
 * a duplicate of a batch it holds) is done; one with an error Kafka marks retriable (its leader moved,
 * not enough replicas yet, a timeout) goes again while `mayRetry`; any other error fails the request.
 * With no answer per partition (a connection lost), the client's error says whether to retry.
 */
export const settleFailedSend = <B extends { readonly partition: number }>(batches: ReadonlyArray<B>, error: unknown, mayRetry: boolean): { readonly again: ReadonlyArray<B>; readonly failed: boolean } => {
  const codes = partitionCodesOf(error)
  const again: B[] = []
  let failed = false
  for (const b of batches) {
    const code = codes?.get(b.partition)
    if (code === 0 || code === DUPLICATE_SEQUENCE_NUMBER) continue
    const retriable = code === undefined ? error instanceof Error && NetworkError.isRetryable(error) : retriableCode(code)
    if (retriable && mayRetry) again.push(b)
    else failed = true
  }
  return { again, failed }
}

/**
 * The Produce request versions the relay writes: 9 (flexible, Kafka 2.8 and newer) where the broker
 * takes it, else 3 (Kafka 0.11 and newer: the first with record batches, the idempotent producer's
 * format). Either way acks=all, no transactional id, one topic, one batch per partition.
 */
export type ProduceVersion = 3 | 9

/** A Produce request of `version` carrying `batches` of `topic`. */
export const produceRequestOf = (version: ProduceVersion, timeoutMs: number, topic: string, batches: ReadonlyArray<PartitionBatch>): Writer => {
  const flexible = version === 9
  const writer = Writer.create()
    .appendString(null, flexible)
    .appendInt16(ProduceAcks.ALL)
    .appendInt32(timeoutMs)
    .appendArray(
      [topic],
      (w, name: string) => {
        w.appendString(name, flexible).appendArray(
          [...batches],
          (pw, b: PartitionBatch) => {
            pw.appendInt32(b.partition)
            if (flexible) pw.appendUnsignedVarInt(b.bytes.length + 1)
            else pw.appendInt32(b.bytes.length)
            pw.append(b.bytes)
          },
          flexible,
          flexible,
        )
      },
      flexible,
      flexible,
    )
  return flexible ? writer.appendTaggedFields() : writer
}

type ProduceArgs = [timeoutMs: number, topic: string, batches: ReadonlyArray<PartitionBatch>]

/** The request of each version as the client's connection sends it, with the client's parser of the answer. */
export const PRODUCE: Readonly<Record<ProduceVersion, API<ProduceArgs, unknown>>> = {
  9: createAPI<ProduceArgs, unknown>(0, 9, (t: number, topic: string, b: ReadonlyArray<PartitionBatch>) => produceRequestOf(9, t, topic, b), produceV9.parseResponse),
  3: createAPI<ProduceArgs, unknown>(0, 3, (t: number, topic: string, b: ReadonlyArray<PartitionBatch>) => produceRequestOf(3, t, topic, b), produceV3.parseResponse, false, false),
}

/** The version to write for a broker that lists these APIs (its ApiVersions answer), or why none will do. */
export const produceVersionOf = (apis: BrokerApis): ProduceVersion | { readonly refused: string } => {
  const produce = apis.find((a) => a.apiKey === 0)
  if (produce === undefined) return { refused: 'the broker lists no Produce API' }
  if (produce.minVersion <= 9 && produce.maxVersion >= 9) return 9
  if (produce.minVersion <= 3 && produce.maxVersion >= 3) return 3
  return { refused: `the broker takes Produce versions ${String(produce.minVersion)}–${String(produce.maxVersion)}; the relay writes version 9 (Kafka 2.8 and newer) or 3 (Kafka 0.11 and newer)` }
}

/** What a broker lists in its ApiVersions answer. */
export type BrokerApis = ReadonlyArray<{ readonly apiKey: number; readonly minVersion: number; readonly maxVersion: number }>

/**
 * The version to write for a broker that lists these APIs; for one that takes neither, an error that
 * is classified as the broker refusing (`rejected`, errors.ts), naming the versions it takes.
 */
export const requiredProduceVersion = (apis: BrokerApis): ProduceVersion => {
  const v = produceVersionOf(apis)
  if (typeof v !== 'number') throw Object.assign(new Error(v.refused), { apiId: 'UNSUPPORTED_VERSION' })
  return v
}

/**
 * Asks with `v3`, and with `v1` when the broker does not take ApiVersions v3 (Kafka before 2.4
 * answers UNSUPPORTED_VERSION); anything else is the caller's error.
 */
export const askWithFallback =
  <C>(v3: (c: C) => Promise<BrokerApis>, v1: (c: C) => Promise<BrokerApis>) =>
  async (connection: C): Promise<BrokerApis> => {
    try {
      return await v3(connection)
    } catch (e) {
      if (hasBrokerError(e, 'UNSUPPORTED_VERSION')) return v1(connection)
      throw e
    }
  }

/** A broker connection's ApiVersions answer. */
export const askBrokerApis = askWithFallback<Connection>(
  async (c) => (await apiVersionsV3.api.async(c, 'satang-relay', '1')).apiKeys,
  async (c) => (await apiVersionsV1.api.async(c, 'satang-relay', '1')).apiKeys,
)

/**
 * The Produce version for each broker connection, asked once per connection (`ask`, `askBrokerApis`
 * for a real one: its ApiVersions answer, then `produceVersionOf`). The brokers of one cluster may run
 * different Kafka versions while it is upgraded one broker at a time, so the bootstrap broker's answer
 * does not hold for every partition leader. An answer that names no version the relay writes rejects
 * as the broker refusing; an ask that failed (a connection lost) is asked again the next time.
 */
export const produceVersionsByConnection = <C extends object>(ask: (connection: C) => Promise<BrokerApis>): ((connection: C) => Promise<ProduceVersion>) => {
  const known = new WeakMap<C, Promise<ProduceVersion>>()
  return (connection) => {
    const cached = known.get(connection)
    if (cached !== undefined) return cached
    const chosen = ask(connection).then(requiredProduceVersion)
    known.set(connection, chosen)
    chosen.catch(() => known.delete(connection))
    return chosen
  }
}

export type SendOptions = {
  readonly topic: string
  readonly timeoutMs: number
  /** The Produce version to write on each leader's connection (`produceVersionsByConnection`). */
  readonly versionFor: (connection: Connection) => Promise<ProduceVersion>
  /** How many times a batch is sent again after a retriable answer, and the pause before each time. */
  readonly retries: number
  readonly retryDelayMs: number
  /** Told of each round of batches sent again. */
  readonly onRetry?: (partitions: ReadonlyArray<number>, attempt: number) => void
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Sends sealed batches, each to its partition's leader (the client's metadata and connections), all
 * acknowledged by every in-sync replica. A batch whose partition answers with a retriable error, has
 * no leader yet, or whose connection dropped is sent again (the same bytes, so the same sequence: the
 * broker writes it once) after the metadata is read again, up to `retries` times; anything else, or
 * retries exhausted, rejects with the first such error.
 */
export const sendBatches = async (client: Producer, batches: ReadonlyArray<PartitionBatch>, options: SendOptions): Promise<void> => {
  let metadata = await client.metadata({ topics: [options.topic] })
  let pending = batches
  for (let attempt = 0; ; attempt++) {
    const byLeader = new Map<number, PartitionBatch[]>()
    const topic = metadata.topics.get(options.topic)
    for (const b of pending) {
      const leader = topic?.partitions[b.partition]?.leader ?? -1
      const group = byLeader.get(leader)
      if (group === undefined) byLeader.set(leader, [b])
      else group.push(b)
    }
    const again: PartitionBatch[] = []
    let lastError: unknown
    await Promise.all(
      [...byLeader].map(async ([leader, group]) => {
        try {
          const broker = metadata.brokers.get(leader)
          // No leader in the metadata (an election under way): retriable, after the metadata is read again.
          if (broker === undefined) throw new NetworkError(`no leader is known for partitions ${group.map((b) => b.partition).join(', ')} of ${options.topic}`)
          const connection = await new Promise<Connection>((resolve, reject) => client.connections.get(broker, (e, c) => (e === null || e === undefined ? resolve(c as Connection) : reject(e))))
          await PRODUCE[await options.versionFor(connection)].async(connection, options.timeoutMs, options.topic, group)
        } catch (e) {
          const answer = settleFailedSend(group, e, attempt < options.retries)
          again.push(...answer.again)
          if (answer.failed) lastError ??= e
        }
      }),
    )
    if (lastError !== undefined) throw lastError
    if (again.length === 0) return
    options.onRetry?.(again.map((b) => b.partition), attempt + 1)
    pending = again
    await sleep(options.retryDelayMs)
    metadata = await client.metadata({ topics: [options.topic], forceUpdate: true })
  }
}
