import { CloudEvent, Kafka as CloudEventsKafka } from 'cloudevents'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { publishFailureOf } from '../../../src/adapters/kafka/errors.ts'
import { toKafkaMessage, type OutgoingMessage } from '../../../src/adapters/kafka/message.ts'
import { requestsOf } from '../../../src/adapters/kafka/publisher.ts'
import { Position, type RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { decodeConfig } from '../../../src/config.ts'
import { asCloudEventsMessage } from './schema-validator.ts'

const position = (p: string): Position => {
  const d = Position.decode(p)
  if (E.isLeft(d)) throw new Error('bad position')
  return d.right
}

const anEvent = (over: Partial<RecordedEvent> = {}): RecordedEvent => ({
  eventId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  type: 'OrderCreated',
  schemaVersion: 1,
  data: { merchantId: '140000000000000001', merchantOrderId: 'A-1', amount: '42000', note: 'ข้าว' },
  metadata: { correlationId: 'corr-1', causationId: 'cause-1', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request' },
  streamName: 'order-140000000000000001-A-1',
  streamRevision: 7n,
  position: position('00000000000000000123-00000000000000000456'),
  recordedAt: new Date('2026-01-01T03:00:00.125Z'),
  ...over,
})

describe('toKafkaMessage (the public message contract)', () => {
  it('key = stream; CloudEvents binary headers; value = the stored data as JSON', () => {
    const m = toKafkaMessage(anEvent(), '/satang')
    expect(m.key).toBe('order-140000000000000001-A-1')
    expect(JSON.parse(m.value)).toEqual(anEvent().data)
    expect(m.timestamp).toBe(String(Date.parse('2026-01-01T03:00:00.125Z')))
    expect(m.headers).toEqual({
      'content-type': 'application/json',
      ce_specversion: '1.0',
      ce_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
      ce_source: '/satang',
      ce_type: 'satang.OrderCreated.v1',
      ce_subject: 'order-140000000000000001-A-1',
      ce_time: '2026-01-01T03:00:00.125Z',
      ce_satangposition: '00000000000000000123-00000000000000000456',
      ce_streamrevision: '7',
      ce_correlationid: 'corr-1',
      ce_causationid: 'cause-1',
    })
    // bytes counts UTF-8 (Thai characters are 3 bytes each)
    const expected = Buffer.byteLength(m.key) + Buffer.byteLength(m.value) + Object.entries(m.headers).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v), 0)
    expect(m.bytes).toBe(expected)
  })

  it('a CloudEvents SDK reads the message back as the same event', () => {
    const m = toKafkaMessage(anEvent(), 'urn:satang:shop-1')
    const ce = CloudEventsKafka.toEvent(asCloudEventsMessage(m))
    if (Array.isArray(ce)) throw new Error('expected one event')
    expect(() => new CloudEvent(ce)).not.toThrow() // strict: every attribute valid per the CloudEvents spec
    expect({ id: ce.id, source: ce.source, type: ce.type, subject: ce.subject, time: ce.time, datacontenttype: ce.datacontenttype, data: ce.data, satangposition: ce['satangposition'], streamrevision: ce['streamrevision'] }).toEqual({
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
      source: 'urn:satang:shop-1',
      type: 'satang.OrderCreated.v1',
      subject: 'order-140000000000000001-A-1',
      time: '2026-01-01T03:00:00.125Z',
      datacontenttype: 'application/json',
      data: anEvent().data,
      satangposition: '00000000000000000123-00000000000000000456',
      streamrevision: '7',
    })
  })

  it('carries correlation and causation ids that are not strings as JSON text', () => {
    const m = toKafkaMessage(anEvent({ metadata: { correlationId: 'c', causationId: 'd', recordedAt: 'x', source: 's', extra: 1 } }), '/satang')
    expect([m.headers['ce_correlationid'], m.headers['ce_causationid']]).toEqual(['c', 'd'])
  })
})

describe('requestsOf (produce requests under the size limit, in order)', () => {
  const m = (bytes: number, key: string): OutgoingMessage => ({ key, value: '', headers: {}, timestamp: '0', bytes })
  it('cuts before the message that would pass the limit; a message larger than the limit goes alone', () => {
    const requests = requestsOf([m(400, 'a'), m(500, 'b'), m(200, 'c'), m(2_000, 'd'), m(10, 'e')], 1_000)
    expect(requests.map((r) => r.map((x) => x.key).join(''))).toEqual(['ab', 'c', 'd', 'e'])
    expect(requestsOf([], 1_000)).toEqual([])
  })
})

describe('publishFailureOf (kafkajs errors, for the operator)', () => {
  const retriesExceeded = (cause: Error): Error => Object.assign(new Error(cause.message), { name: 'KafkaJSNumberOfRetriesExceeded', retriable: false, cause })
  it('a refused connection: unreachable, retriable, naming where', () => {
    const f = publishFailureOf('publishing 3 events', 'topic t on 127.0.0.1:9', retriesExceeded(Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9'), { name: 'KafkaJSConnectionError', retriable: true })))
    expect(f).toMatchObject({ kind: 'unreachable', retriable: true, message: 'publishing 3 events (topic t on 127.0.0.1:9): no broker answered: Connection error: connect ECONNREFUSED 127.0.0.1:9' })
  })
  it('protocol errors by the broker: a missing topic, a message too large, a timeout', () => {
    const protocol = (type: string, retriable: boolean): Error => Object.assign(new Error(`broker says ${type}`), { name: 'KafkaJSProtocolError', type, retriable })
    expect(publishFailureOf('x', 'y', retriesExceeded(protocol('UNKNOWN_TOPIC_OR_PARTITION', true)))).toMatchObject({ kind: 'topic', retriable: true })
    expect(publishFailureOf('x', 'y', protocol('MESSAGE_TOO_LARGE', false))).toMatchObject({ kind: 'rejected', retriable: false, message: 'x (y): the broker refused the messages: broker says MESSAGE_TOO_LARGE (MESSAGE_TOO_LARGE)' })
    expect(publishFailureOf('x', 'y', Object.assign(new Error('Request Produce timed out'), { name: 'KafkaJSRequestTimeoutError', retriable: true }))).toMatchObject({ kind: 'timeout' })
  })
})

describe('Kafka settings', () => {
  it('decode brokers, topic and defaults; name the variable and the rule when wrong', () => {
    const ok = decodeConfig({ SATANG_KAFKA_BROKERS: '127.0.0.1:9092, kafka-2:9093,[::1]:9094' })
    expect(E.isRight(ok) && ok.right.SATANG_KAFKA_BROKERS).toEqual(['127.0.0.1:9092', 'kafka-2:9093', '[::1]:9094'])
    expect(E.isRight(ok) && [ok.right.SATANG_KAFKA_TOPIC, ok.right.SATANG_KAFKA_TOPIC_PARTITIONS, ok.right.SATANG_KAFKA_SOURCE]).toEqual(['satang.events', 6, '/satang'])
    const off = decodeConfig({})
    expect(E.isRight(off) && off.right.SATANG_KAFKA_BROKERS).toBeUndefined()
    const bad = decodeConfig({ SATANG_KAFKA_BROKERS: 'kafka', SATANG_KAFKA_TOPIC: 'a topic', SATANG_KAFKA_BATCH_SIZE: '0' })
    expect(E.isLeft(bad) && bad.left.map((e) => `${e.variable}: ${e.rule}`)).toEqual([
      'SATANG_KAFKA_BROKERS: must be a comma-separated list of host:port (e.g. 127.0.0.1:9092,kafka-2:9092)',
      'SATANG_KAFKA_TOPIC: must be a Kafka topic name: 1 to 249 letters, digits, dots, underscores or hyphens',
      'SATANG_KAFKA_BATCH_SIZE: must be a whole number from 1 to 50000',
    ])
  })
})
