import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { Admin, compatibilityPartitioner, ProduceAcks, Producer, type BaseOptions, type SASLOptions } from '@platformatic/kafka'
import type { Destination, EventPublisher, PublishFailure } from '../../application/ports/event-publisher.ts'
import type { RecordedEvent } from '../../application/ports/event-store.ts'
import type { Logger } from '../../logger.ts'
import { publishFailureOf, type SecurityDescription } from './errors.ts'
import { headersOf, type OutgoingMessage } from './message.ts'

/** How the publisher reaches a secured cluster: TLS and/or SASL. The PEM texts and the password are read by the caller. */
export type KafkaSecurity = {
  /** TLS to the brokers; undefined = PLAINTEXT. */
  readonly tls?: {
    /** PEM certificates to trust; undefined = the system's trust store. */
    readonly ca?: string
    /** Mutual TLS: the client certificate and its key (PEM). */
    readonly cert?: string
    readonly key?: string
    /** False only for a broker whose certificate cannot be checked (the caller warns loudly). */
    readonly rejectUnauthorized: boolean
  }
  /** SASL authentication; undefined = none. */
  readonly sasl?: {
    readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'
    readonly username: string
    /** A function, so that the password is never a field of an object that could be logged. */
    readonly password: () => string
  }
}

export type KafkaPublisherConfig = {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: ReadonlyArray<string>
  readonly topic: string
  readonly clientId: string
  /** Partitions and replication factor of the topic when `prepare` creates it. */
  readonly partitions: number
  readonly replicationFactor: number
  /** The CloudEvents `source` of every message. */
  readonly source: string
  /** Most bytes (keys, values, headers) in one produce request; a larger publish is sent as several, in order. */
  readonly maxRequestBytes: number
  /** How long a broker may take to acknowledge, and to accept a connection. */
  readonly timeoutMs: number
  readonly security?: KafkaSecurity
}

// The client retries a request a few times on its own (a leader moving, a connection dropping); past
// that the publish fails and the relay retries it with its own backoff, from its checkpoint. The
// idempotent producer's retries of one request carry the same producer id and sequence numbers, so a
// retried batch the broker already wrote is not written twice.
const CLIENT_RETRIES = 3
const CLIENT_RETRY_DELAY_MS = 250

const SASL_MECHANISMS = { plain: 'PLAIN', 'scram-sha-256': 'SCRAM-SHA-256', 'scram-sha-512': 'SCRAM-SHA-512' } as const

/** What the operator's error lines say about the connection (never the password). */
export const securityDescriptionOf = (security: KafkaSecurity | undefined): SecurityDescription => {
  const tls = security?.tls !== undefined
  const sasl = security?.sasl
  return {
    protocol: sasl === undefined ? (tls ? 'ssl' : 'plaintext') : tls ? 'sasl_ssl' : 'sasl_plaintext',
    ...(sasl === undefined ? {} : { sasl: { mechanism: SASL_MECHANISMS[sasl.mechanism], username: sasl.username } }),
  }
}

/** The client's connection options for `security`. */
const connectionOptionsOf = (security: KafkaSecurity | undefined): Pick<BaseOptions, 'tls' | 'sasl'> => {
  const out: { tls?: BaseOptions['tls']; sasl?: SASLOptions } = {}
  const tls = security?.tls
  if (tls !== undefined) {
    out.tls = {
      rejectUnauthorized: tls.rejectUnauthorized,
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert }),
      ...(tls.key === undefined ? {} : { key: tls.key }),
    }
  }
  const sasl = security?.sasl
  if (sasl !== undefined) out.sasl = { mechanism: SASL_MECHANISMS[sasl.mechanism], username: sasl.username, password: sasl.password }
  return out
}

/**
 * Splits items, in order, into requests of at most `maxBytes` each (a single larger item goes alone).
 * Lazy: an item is taken from `items` only when the request before it has been handed out, so items
 * built on the way (the relay's records) are built while the previous request is being sent.
 */
export function* requestsFrom<T extends { readonly bytes: number }>(items: Iterable<T>, maxBytes: number): Generator<ReadonlyArray<T>> {
  let current: T[] = []
  let bytes = 0
  for (const m of items) {
    if (current.length > 0 && bytes + m.bytes > maxBytes) {
      yield current
      current = []
      bytes = 0
    }
    current.push(m)
    bytes += m.bytes
  }
  if (current.length > 0) yield current
}

/** Splits messages, in order, into requests of at most `maxBytes` each (a single larger message goes alone). */
export const requestsOf = (messages: ReadonlyArray<OutgoingMessage>, maxBytes: number): ReadonlyArray<ReadonlyArray<OutgoingMessage>> => [...requestsFrom(messages, maxBytes)]

/**
 * The relay's publisher on Kafka (@platformatic/kafka): an idempotent producer (`acks: -1`, all in-sync
 * replicas) to one topic, created with the configured partitions when absent; Java-compatible murmur2
 * partitioning of the key, so any client computes the same partition for a stream. TLS and SASL as
 * `config.security` says.
 */
export const makeKafkaEventPublisher = (deps: { readonly log: Logger }, config: KafkaPublisherConfig): EventPublisher => {
  const log = deps.log.child({ component: 'kafka', topic: config.topic })
  const where = `topic ${config.topic} on ${config.brokers.join(',')}`
  const security = securityDescriptionOf(config.security)
  const failure = (operation: string, e: unknown): PublishFailure => publishFailureOf(operation, where, e, security)
  const base = {
    clientId: config.clientId,
    bootstrapBrokers: [...config.brokers],
    connectTimeout: Math.min(config.timeoutMs, 10_000),
    requestTimeout: config.timeoutMs,
    timeout: config.timeoutMs,
    retries: CLIENT_RETRIES,
    retryDelay: CLIENT_RETRY_DELAY_MS,
    autocreateTopics: false,
    ...connectionOptionsOf(config.security),
  }
  let producer: Producer | undefined
  let connecting: Promise<Producer> | undefined

  /** A producer with its producer id: connected, authenticated, and known to the broker. */
  const connectProducer = (): Promise<Producer> => {
    if (producer !== undefined) return Promise.resolve(producer)
    connecting ??= (async () => {
      const p = new Producer({ ...base, idempotent: true, acks: ProduceAcks.ALL, partitioner: compatibilityPartitioner })
      try {
        await p.initIdempotentProducer({})
      } catch (e) {
        await p.close(true).catch((err: unknown) => log.debug({ err: String(err) }, 'closing a producer that failed to connect'))
        throw e
      }
      producer = p
      return p
    })().finally(() => {
      connecting = undefined
    })
    return connecting
  }

  /** After a failed send the producer is dropped: the next publish starts a new one (a new producer id). */
  const dropProducer = async (): Promise<void> => {
    const p = producer
    producer = undefined
    if (p !== undefined) await p.close(true).catch((err: unknown) => log.debug({ err: String(err) }, 'closing a failed producer'))
  }

  const withAdmin = async <A>(use: (admin: Admin) => Promise<A>): Promise<A> => {
    const admin = new Admin(base)
    try {
      return await use(admin)
    } finally {
      await admin.close().catch((err: unknown) => log.debug({ err: String(err) }, 'closing the admin client'))
    }
  }

  const partitionsOf = async (admin: Admin): Promise<number | undefined> => {
    const topics = await admin.listTopics()
    if (!topics.includes(config.topic)) return undefined
    const metadata = await admin.metadata({ topics: [config.topic], forceUpdate: true })
    return metadata.topics.get(config.topic)?.partitionsCount
  }

  const prepare = (): TE.TaskEither<PublishFailure, Destination> =>
    pipe(
      TE.tryCatch(
        () =>
          withAdmin(async (admin): Promise<Destination> => {
            const existing = await partitionsOf(admin)
            if (existing !== undefined) return { description: where, partitions: existing, created: false }
            let created = true
            try {
              await admin.createTopics({ topics: [config.topic], partitions: config.partitions, replicas: config.replicationFactor })
            } catch (e) {
              // Another relay may create it at the same moment (TOPIC_ALREADY_EXISTS): then it exists now.
              if ((await partitionsOf(admin)) === undefined) throw e
              created = false
            }
            const partitions = await partitionsOf(admin)
            if (partitions === undefined) throw new Error(`topic ${config.topic} is still missing after it was created`)
            if (created) log.info({ partitions, replicationFactor: config.replicationFactor }, `created topic ${config.topic}`)
            return { description: where, partitions, created }
          }),
        (e) => failure('preparing the topic', e),
      ),
      TE.tap(() => TE.tryCatch(connectProducer, (e) => failure('connecting the producer', e))),
    )

  const publish = (events: ReadonlyArray<RecordedEvent>): TE.TaskEither<PublishFailure, void> => async () => {
    if (events.length === 0) return E.right(undefined)
    try {
      const p = await connectProducer()
      // One request at a time, in order: a request is sent only after the previous one is acknowledged.
      // The next request's records are built while the previous one is on its way to the broker.
      const records = function* () {
        for (const e of events) yield kafkaRecordOf(config.topic, e, config.source)
      }
      let inFlight: Promise<unknown> | undefined
      for (const request of requestsFrom(records(), config.maxRequestBytes)) {
        if (inFlight !== undefined) await inFlight
        inFlight = p.send({ acks: ProduceAcks.ALL, messages: request.map((r) => r.record) })
        // Awaited before the next send or at the end; this only keeps a failure from counting as unhandled meanwhile.
        inFlight.catch(() => undefined)
      }
      await inFlight
      return E.right(undefined)
    } catch (e) {
      await dropProducer()
      return E.left(failure(`publishing ${String(events.length)} events`, e))
    }
  }

  const close = async (): Promise<void> => {
    await connecting?.catch((err: unknown) => log.debug({ err: String(err) }, 'a producer connecting at close failed'))
    await dropProducer()
  }

  return { prepare, publish, close }
}

/** A record as the client sends it: key, value and headers as UTF-8 bytes, the commit time as the timestamp. */
export type KafkaRecord = {
  readonly topic: string
  readonly key: Buffer
  readonly value: Buffer
  readonly headers: Map<Buffer, Buffer>
  readonly timestamp: bigint
}

// Header names are a fixed set: their bytes are made once (each record's headers are a Map of its own).
const headerNames = new Map<string, Buffer>()
const headerName = (name: string): Buffer => {
  let b = headerNames.get(name)
  if (b === undefined) {
    b = Buffer.from(name, 'utf8')
    headerNames.set(name, b)
  }
  return b
}

/** A record from its texts, and its bytes (key, value, header names and values). */
const recordFrom = (topic: string, key: string, value: string, texts: Readonly<Record<string, string>>, timestamp: bigint): { readonly record: KafkaRecord; readonly bytes: number } => {
  const keyBytes = Buffer.from(key, 'utf8')
  const valueBytes = Buffer.from(value, 'utf8')
  const headers = new Map<Buffer, Buffer>()
  let bytes = keyBytes.length + valueBytes.length
  for (const name in texts) {
    const n = headerName(name)
    const v = Buffer.from(texts[name] ?? '', 'utf8')
    headers.set(n, v)
    bytes += n.length + v.length
  }
  return { record: { topic, key: keyBytes, value: valueBytes, headers, timestamp }, bytes }
}

/** The record the client sends for a message. */
export const recordOf = (topic: string, m: OutgoingMessage): KafkaRecord => recordFrom(topic, m.key, m.value, m.headers, BigInt(m.timestamp)).record

/**
 * The record of one stored event, straight from the event (what `recordOf(topic, toKafkaMessage(e,
 * source))` gives, without the text message in between), and its bytes as `toKafkaMessage` counts them.
 */
export const kafkaRecordOf = (topic: string, e: RecordedEvent, source: string): { readonly record: KafkaRecord; readonly bytes: number } =>
  recordFrom(topic, e.streamName, JSON.stringify(e.data), headersOf(e, source), BigInt(e.recordedAt.getTime()))
