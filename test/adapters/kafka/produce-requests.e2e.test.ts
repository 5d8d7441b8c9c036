import { Admin, ProduceAcks, Producer, type Connection } from '@platformatic/kafka'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packRequests } from '../../../src/adapters/kafka/packed-records.ts'
import { javaPartitionOf } from '../../../src/adapters/kafka/murmur2.ts'
import { kafkaRecordOf } from '../../../src/adapters/kafka/publisher.ts'
import { askBrokerApis, produceVersionOf, produceVersionsByConnection, recordBatchesOf, sealBatches, sendBatches, type PartitionBatch, type ProduceVersion } from '../../../src/adapters/kafka/record-batches.ts'
import type { RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { consumeTopic, kafkaSkipReason, startTestBroker, type TestBroker } from '../../support/kafka.ts'
import { eventNo } from './events.ts'

// The relay's own Produce requests (record-batches.ts) against a real broker, in both versions it
// writes: the broker takes the batches (it checks their CRC, sequences and format), a resend of a
// request it already wrote is not written twice, and an independent client (kafkajs) reads back what
// the message contract says, in the partition the Java partitioner picks, in order.

const skipReason = await kafkaSkipReason()
if (skipReason !== undefined) process.stderr.write(`produce-requests.e2e: skipped: ${skipReason}\n`)

const PARTITIONS = 3

describe.skipIf(skipReason !== undefined)('the relay’s Produce requests against a real broker', () => {
  let broker: TestBroker
  let producer: Producer
  const topic = `satang.test.produce.${String(Date.now())}`

  beforeAll(async () => {
    broker = await startTestBroker()
    const admin = new Admin({ clientId: 'satang-test-produce-admin', bootstrapBrokers: [...broker.brokers] })
    await admin.createTopics({ topics: [topic], partitions: PARTITIONS, replicas: 1 })
    await admin.close()
    producer = new Producer({ clientId: 'satang-test-produce', bootstrapBrokers: [...broker.brokers], idempotent: true, acks: ProduceAcks.ALL, autocreateTopics: false })
  }, 120_000)

  afterAll(async () => {
    await producer.close(true)
    await broker.stop()
  })

  it('version 9 then 3 under one producer id, and a resend of a written request: every record once, as the contract says', async () => {
    expect(produceVersionOf(await producer.listApis())).toBe(9)
    const { producerId, producerEpoch } = await producer.initIdempotentProducer({})
    const state = { producerId, epoch: producerEpoch, sequences: new Map<number, number>() }
    const partitionOf = (key: Buffer): number => javaPartitionOf(key, PARTITIONS)

    // Sent as the producer thread sends: batches whose partition answers with a retriable error (a topic
    // this new may not have its leaders everywhere yet) go again after the metadata is read again.
    const send = (version: ProduceVersion, batches: ReadonlyArray<PartitionBatch>): Promise<void> => sendBatches(producer, batches, { topic, timeoutMs: 10_000, versionFor: () => Promise.resolve(version), retries: 20, retryDelayMs: 250 })
    const sealed = (events: ReadonlyArray<RecordedEvent>): PartitionBatch[] =>
      [...packRequests(events, '/satang', 1_000_000)].flatMap((r) => {
        const batches = recordBatchesOf(r.buffer, r.length, partitionOf)
        sealBatches(batches, state)
        return batches
      })

    // Recorded now: the broker deletes records older than its retention (7 days) at once.
    const now = Date.now()
    const first = Array.from({ length: 40 }, (_, i) => eventNo(i, { recordedAt: new Date(now + i) }))
    const second = Array.from({ length: 25 }, (_, i) => eventNo(100 + i, { recordedAt: new Date(now + 100 + i) }))
    await expect(send(9, sealed(first))).resolves.toBeUndefined()
    const v3 = sealed(second)
    expect(new Set(v3.map((b) => b.partition)).size).toBe(PARTITIONS)
    await expect(send(3, v3)).resolves.toBeUndefined()
    // The same bytes again (an answer lost, say): the broker knows the sequences, takes it as a
    // duplicate, and writes nothing twice (the count below).
    await expect(send(3, v3)).resolves.toBeUndefined()

    const events = [...first, ...second]
    const read = await consumeTopic(broker.brokers, topic)
    expect(read).toHaveLength(events.length)
    for (let p = 0; p < PARTITIONS; p++) {
      const want = events.filter((e) => partitionOf(kafkaRecordOf(topic, e, '/satang').record.key) === p)
      const got = read.filter((m) => m.partition === p)
      expect(got.map((m) => m.headers['ce_id'])).toEqual(want.map((e) => e.eventId))
      for (const [i, e] of want.entries()) {
        const { record } = kafkaRecordOf(topic, e, '/satang')
        expect(got[i]?.key).toBe(record.key.toString('utf8'))
        expect(got[i]?.value).toBe(record.value.toString('utf8'))
        expect(got[i]?.timestamp).toBe(String(record.timestamp))
        expect(got[i]?.headers).toEqual(Object.fromEntries([...record.headers].map(([k, v]) => [k.toString('utf8'), v.toString('utf8')])))
      }
    }
  }, 120_000)

  it('asks each partition leader which Produce version it takes, over the connection the batches then go on, once per connection', async () => {
    const own = `${topic}.leaders`
    const admin = new Admin({ clientId: 'satang-test-produce-admin', bootstrapBrokers: [...broker.brokers] })
    await admin.createTopics({ topics: [own], partitions: PARTITIONS, replicas: 1 })
    await admin.close()
    const { producerId, producerEpoch } = await producer.initIdempotentProducer({})
    const state = { producerId, epoch: producerEpoch, sequences: new Map<number, number>() }
    const asked: Connection[] = []
    const versionFor = produceVersionsByConnection<Connection>(async (c) => {
      asked.push(c)
      return askBrokerApis(c)
    })
    const now = Date.now()
    const events = Array.from({ length: 30 }, (_, i) => eventNo(500 + i, { recordedAt: new Date(now + i) }))
    const sealed = [...packRequests(events, '/satang', 1_000_000)].flatMap((r) => {
      const batches = recordBatchesOf(r.buffer, r.length, (key) => javaPartitionOf(key, PARTITIONS))
      sealBatches(batches, state)
      return batches
    })
    await sendBatches(producer, sealed, { topic: own, timeoutMs: 10_000, versionFor, retries: 20, retryDelayMs: 250 })
    // One broker here: its connection asked once (ApiVersions v3 over the real protocol), however many
    // partitions it leads and rounds it took; it takes version 9.
    expect(asked.length).toBe(1)
    expect(await versionFor(asked[0] as Connection)).toBe(9)
    expect(asked.length).toBe(1)
    expect(produceVersionOf(await askBrokerApis(asked[0] as Connection))).toBe(9)
    const read = await consumeTopic(broker.brokers, own)
    expect(read.map((m) => m.headers['ce_id']).sort()).toEqual(events.map((e) => e.eventId).sort())
  }, 120_000)
})
