import { CloudEvent, Kafka as CloudEventsKafka } from 'cloudevents'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { publishFailureOf } from '../../../src/adapters/kafka/errors.ts'
import { ceTypeOf, toKafkaMessage, typeOfCeType, type OutgoingMessage } from '../../../src/adapters/kafka/message.ts'
import { compatibilityPartitioner } from '@platformatic/kafka'
import fc from 'fast-check'
import kafkajs from 'kafkajs'
import { javaPartitionOf, murmur2 } from '../../../src/adapters/kafka/murmur2.ts'
import { kafkaRecordOf, recordOf, requestsOf } from '../../../src/adapters/kafka/publisher.ts'
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

  it('a ce_type reads back as the type and schema version it was made of; anything not of that form as none', () => {
    expect(typeOfCeType(ceTypeOf('OrderCreated', 1))).toEqual({ type: 'OrderCreated', schemaVersion: 1 })
    expect(typeOfCeType(ceTypeOf('Odd.vName', 12))).toEqual({ type: 'Odd.vName', schemaVersion: 12 })
    for (const other of ['other.OrderCreated.v1', 'satang.OrderCreated', 'satang..v1', 'satang.v1', 'satang.OrderCreated.v', 'satang.OrderCreated.v-1', 'satang.OrderCreated.v1.5', 'satang.OrderCreated.vx']) {
      expect(typeOfCeType(other), other).toBeUndefined()
    }
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

describe('the record sent (@platformatic/kafka): the same bytes and partition as before', () => {
  it('key, value and headers as UTF-8 bytes of the message, the commit time as the timestamp', () => {
    const m = toKafkaMessage(anEvent(), '/satang')
    const r = recordOf('t', m)
    expect({ topic: r.topic, key: r.key.toString('utf8'), value: r.value.toString('utf8'), timestamp: r.timestamp }).toEqual({ topic: 't', key: m.key, value: m.value, timestamp: 1767236400125n })
    expect(Object.fromEntries([...r.headers].map(([k, v]) => [k.toString('utf8'), v.toString('utf8')]))).toEqual(m.headers)
    expect(r.value.toString('utf8')).toContain('ข้าว')
  })

  it('the relay builds each record straight from the event: the same bytes, headers in the same order, and the same size as the message', () => {
    const bytesOf = (r: ReturnType<typeof recordOf>) => ({
      topic: r.topic,
      key: r.key.toString('hex'),
      value: r.value.toString('hex'),
      headers: [...r.headers].map(([k, v]) => [k.toString('utf8'), v.toString('hex')]),
      timestamp: r.timestamp,
    })
    const traced = anEvent({ metadata: { correlationId: 'ข้าว-1', causationId: 'c', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })
    for (const e of [anEvent(), traced, anEvent({ data: {}, streamRevision: 0n })]) {
      const m = toKafkaMessage(e, '/satang')
      const direct = kafkaRecordOf('t', e, '/satang')
      expect(bytesOf(direct.record)).toEqual(bytesOf(recordOf('t', m)))
      expect(direct.bytes).toBe(m.bytes)
    }
    // Two records never share a headers map, though the header names' bytes are made once.
    const [a, b] = [kafkaRecordOf('t', anEvent(), '/s').record, kafkaRecordOf('t', anEvent({ eventId: '1f8fad5b-d9cb-469f-a165-70867728950e' }), '/s').record]
    expect(a.headers).not.toBe(b.headers)
    expect([...b.headers].find(([k]) => k.toString() === 'ce_id')?.[1].toString()).toBe('1f8fad5b-d9cb-469f-a165-70867728950e')
  })

  it('the partition of a key is the Java client’s (murmur2, positive, modulo), as kafkajs and @platformatic/kafka compute it', () => {
    const kafkajsPartition = kafkajs.Partitioners.DefaultPartitioner()
    for (const partitions of [1, 3, 6, 7, 64]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 1, partitionErrorCode: 0, replicas: [1], isr: [1] }))
      for (let i = 0; i < 2_000; i++) {
        const key = `order-140000000000000001-ORD-${String(i)}-ข้าว`
        const ours = javaPartitionOf(Buffer.from(key), partitions)
        expect(ours, key).toBe(kafkajsPartition({ topic: 't', partitionMetadata, message: { key, value: null } }))
        expect(ours, key).toBe(compatibilityPartitioner({ topic: 't', key: Buffer.from(key) }, Buffer.from(key)) % partitions)
      }
    }
  })

  it('murmur2 is the client’s on any bytes: every length mod 4, high bytes, the empty key', () => {
    // Kafka's own test vectors (Utils.murmur2 in the Java client's UtilsTest).
    expect(murmur2(Buffer.from('21'))).toBe(-973932308)
    expect(murmur2(Buffer.from('foobar'))).toBe(-790332482)
    expect(murmur2(Buffer.from('a-little-bit-long-string'))).toBe(-985981536)
    expect(murmur2(Buffer.from('a-little-bit-longer-string'))).toBe(-1486304829)
    expect(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'))).toBe(-58897971)
    expect(murmur2(Buffer.from([0x61, 0x62, 0x63]))).toBe(479470107)
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 80 }), fc.integer({ min: 1, max: 1000 }), (bytes, partitions) => {
        const key = Buffer.from(bytes)
        expect(javaPartitionOf(key, partitions)).toBe(compatibilityPartitioner(undefined as never, key) % partitions)
      }),
      { numRuns: 3_000 },
    )
  })
})

describe('publishFailureOf (@platformatic/kafka errors, for the operator)', () => {
  // The shapes the client builds: an aggregate per operation, a network error per connection, the cause at the bottom.
  const aggregate = (message: string, ...errors: Error[]): Error => Object.assign(new AggregateError(errors, message), { code: 'PLT_KFK_MULTIPLE' })
  const connection = (broker: string, cause: Error): Error => Object.assign(new Error(`Connection to ${broker} failed.`), { name: 'NetworkError', code: 'PLT_KFK_NETWORK', canRetry: true, cause })
  const protocol = (apiId: string, serverErrorMessage: string | null, canRetry: boolean): Error => Object.assign(new Error(`broker says ${apiId}`), { name: 'ProtocolError', code: 'PLT_KFK_PROTOCOL', apiId, serverErrorMessage, canRetry })
  const scram = { protocol: 'sasl_ssl', sasl: { mechanism: 'SCRAM-SHA-512', username: 'satang' } }

  it('a refused connection: unreachable, retriable, naming where', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })
    const f = publishFailureOf('publishing 3 events', 'topic t on 127.0.0.1:9', aggregate('Producing messages failed.', aggregate('Cannot connect to any broker.', connection('127.0.0.1:9', refused))))
    expect(f).toMatchObject({ kind: 'unreachable', retriable: true, message: 'publishing 3 events (topic t on 127.0.0.1:9; broker 127.0.0.1:9): no broker answered: connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)' })
  })

  it('protocol errors by the broker: a missing topic, a message too large, a timeout', () => {
    expect(publishFailureOf('x', 'y', aggregate('Producing messages failed.', protocol('UNKNOWN_TOPIC_OR_PARTITION', null, true)))).toMatchObject({ kind: 'topic', retriable: true })
    expect(publishFailureOf('x', 'y', protocol('MESSAGE_TOO_LARGE', null, false))).toMatchObject({ kind: 'rejected', retriable: false, message: 'x (y): the broker refused the messages: broker says MESSAGE_TOO_LARGE (MESSAGE_TOO_LARGE)' })
    expect(publishFailureOf('x', 'y', Object.assign(new Error('Request timed out after 3000 milliseconds.'), { name: 'TimeoutError', code: 'PLT_KFK_TIMEOUT' }))).toMatchObject({ kind: 'timeout', retriable: true })
  })

  it('refused credentials: authentication, naming mechanism, user and broker, with the broker’s words', () => {
    const sasl = Object.assign(new Error('SASL authentication failed.'), {
      name: 'AuthenticationError',
      code: 'PLT_KFK_AUTHENTICATION',
      cause: aggregate('Received response with error while executing API SaslAuthenticate(v2)', protocol('SASL_AUTHENTICATION_FAILED', 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512', false)),
    })
    const f = publishFailureOf('preparing the topic', 'topic t on 127.0.0.1:19302', aggregate('Listing topics failed.', connection('127.0.0.1:19302', sasl)), scram)
    expect(f.kind).toBe('authentication')
    expect(f.retriable).toBe(true)
    expect(f.message).toBe(
      'preparing the topic (topic t on 127.0.0.1:19302, SASL_SSL; broker 127.0.0.1:19302): the broker refused the credentials: SASL SCRAM-SHA-512, user "satang" (check SATANG_KAFKA_SASL_USERNAME, the password in SATANG_KAFKA_SASL_PASSWORD_FILE, and the mechanism the listener accepts): Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (SASL_AUTHENTICATION_FAILED)',
    )
  })

  it('a broker certificate the CA did not sign: tls; the cause is a plain summary, not the client’s objects', () => {
    const tls = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN', secret: 'not-to-be-logged' })
    const f = publishFailureOf('preparing the topic', 'topic t on k:9093', aggregate('Listing topics failed.', connection('k:9093', tls)), { protocol: 'ssl' })
    expect(f).toMatchObject({ kind: 'tls', message: expect.stringContaining("(topic t on k:9093, SSL; broker k:9093): the TLS handshake failed: the broker's certificate is not trusted") })
    expect(f.cause).toBeInstanceOf(Error)
    expect(JSON.stringify(f.cause) + String((f.cause as Error).message)).not.toContain('not-to-be-logged')
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
