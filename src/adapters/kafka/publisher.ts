import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import kafkajs, { type Admin, type Producer, type logCreator } from 'kafkajs'
import type { Destination, EventPublisher, PublishFailure } from '../../application/ports/event-publisher.ts'
import type { RecordedEvent } from '../../application/ports/event-store.ts'
import type { Logger } from '../../logger.ts'
import { publishFailureOf } from './errors.ts'
import { toKafkaMessage, type OutgoingMessage } from './message.ts'

const { Kafka, Partitioners, logLevel } = kafkajs

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
}

// kafkajs retries a request a few times on its own (a leader moving, a connection dropping); past
// that the publish fails and the relay retries it with its own backoff, from its checkpoint.
const KAFKAJS_RETRY = { retries: 3, initialRetryTime: 200, maxRetryTime: 2_000 }

// We bound the idempotent producer's retries on purpose (above), so that a dead broker surfaces as an
// error, and we never reuse a producer after a failed send (see `publish`): the guarantee this warning
// is about does not apply. It is logged at debug level.
const BOUNDED_RETRIES_WARNING = 'Limiting retries for the idempotent producer'

/** kafkajs logs through pino, one level lower: the relay reports failures itself, in one clear line. */
const pinoLogCreator =
  (log: Logger): logCreator =>
  () =>
  ({ namespace, level, log: entry }) => {
    const { message, ...extra } = entry
    const fields = { kafkajs: namespace, ...extra }
    if (level === logLevel.ERROR) log.warn(fields, message)
    else if (level === logLevel.WARN) {
      if (message.startsWith(BOUNDED_RETRIES_WARNING)) log.debug(fields, message)
      else log.info(fields, message)
    } else if (level === logLevel.INFO) log.debug(fields, message)
    else log.trace(fields, message)
  }

/** Splits messages, in order, into requests of at most `maxBytes` each (a single larger message goes alone). */
export const requestsOf = (messages: ReadonlyArray<OutgoingMessage>, maxBytes: number): ReadonlyArray<ReadonlyArray<OutgoingMessage>> => {
  const requests: OutgoingMessage[][] = []
  let current: OutgoingMessage[] = []
  let bytes = 0
  for (const m of messages) {
    if (current.length > 0 && bytes + m.bytes > maxBytes) {
      requests.push(current)
      current = []
      bytes = 0
    }
    current.push(m)
    bytes += m.bytes
  }
  if (current.length > 0) requests.push(current)
  return requests
}

/**
 * The relay's publisher on Kafka (kafkajs): an idempotent producer (`acks: -1`, all in-sync replicas)
 * to one topic, created with the configured partitions when absent; Java-compatible murmur2
 * partitioning of the key, so any client computes the same partition for a stream.
 */
export const makeKafkaEventPublisher = (deps: { readonly log: Logger }, config: KafkaPublisherConfig): EventPublisher => {
  const log = deps.log.child({ component: 'kafka', topic: config.topic })
  const where = `topic ${config.topic} on ${config.brokers.join(',')}`
  const kafka = new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    connectionTimeout: Math.min(config.timeoutMs, 10_000),
    requestTimeout: config.timeoutMs,
    retry: KAFKAJS_RETRY,
    logCreator: pinoLogCreator(log),
  })
  let producer: Producer | undefined
  let connecting: Promise<Producer> | undefined

  const connectProducer = (): Promise<Producer> => {
    if (producer !== undefined) return Promise.resolve(producer)
    connecting ??= (async () => {
      const p = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner, retry: KAFKAJS_RETRY, allowAutoTopicCreation: false })
      try {
        await p.connect()
      } catch (e) {
        await p.disconnect().catch((err: unknown) => log.debug({ err }, 'disconnecting a producer that failed to connect'))
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
    if (p !== undefined) await p.disconnect().catch((err: unknown) => log.debug({ err }, 'disconnecting a failed producer'))
  }

  const withAdmin = async <A>(use: (admin: Admin) => Promise<A>): Promise<A> => {
    const admin = kafka.admin({ retry: KAFKAJS_RETRY })
    await admin.connect()
    try {
      return await use(admin)
    } finally {
      await admin.disconnect().catch((err: unknown) => log.debug({ err }, 'disconnecting the admin client'))
    }
  }

  const partitionsOf = async (admin: Admin): Promise<number | undefined> => {
    const topics = await admin.listTopics()
    if (!topics.includes(config.topic)) return undefined
    const metadata = await admin.fetchTopicMetadata({ topics: [config.topic] })
    return metadata.topics.find((t) => t.name === config.topic)?.partitions.length
  }

  const prepare = (): TE.TaskEither<PublishFailure, Destination> =>
    pipe(
      TE.tryCatch(
        () =>
          withAdmin(async (admin): Promise<Destination> => {
            const existing = await partitionsOf(admin)
            if (existing !== undefined) return { description: where, partitions: existing, created: false }
            // Another relay may create it at the same moment: `false` then means it exists now.
            const created = await admin.createTopics({
              topics: [{ topic: config.topic, numPartitions: config.partitions, replicationFactor: config.replicationFactor }],
              waitForLeaders: true,
              timeout: config.timeoutMs,
            })
            const partitions = await partitionsOf(admin)
            if (partitions === undefined) throw new Error(`topic ${config.topic} is still missing after it was created`)
            if (created) log.info({ partitions, replicationFactor: config.replicationFactor }, `created topic ${config.topic}`)
            return { description: where, partitions, created }
          }),
        (e) => publishFailureOf('preparing the topic', where, e),
      ),
      TE.tap(() => TE.tryCatch(connectProducer, (e) => publishFailureOf('connecting the producer', where, e))),
    )

  const publish = (events: ReadonlyArray<RecordedEvent>): TE.TaskEither<PublishFailure, void> => async () => {
    if (events.length === 0) return E.right(undefined)
    const messages = events.map((e) => toKafkaMessage(e, config.source))
    try {
      const p = await connectProducer()
      // One request at a time, in order: a request is sent only after the previous one is acknowledged.
      for (const request of requestsOf(messages, config.maxRequestBytes)) {
        await p.send({
          topic: config.topic,
          acks: -1,
          timeout: config.timeoutMs,
          messages: request.map((m) => ({ key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp })),
        })
      }
      return E.right(undefined)
    } catch (e) {
      await dropProducer()
      return E.left(publishFailureOf(`publishing ${String(events.length)} events`, where, e))
    }
  }

  const close = async (): Promise<void> => {
    await connecting?.catch((err: unknown) => log.debug({ err }, 'a producer connecting at close failed'))
    await dropProducer()
  }

  return { prepare, publish, close }
}
