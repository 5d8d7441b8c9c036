import { Worker } from 'node:worker_threads'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { Destination, EventPublisher, Published, PublishFailure } from '../../application/ports/event-publisher.ts'
import type { RecordedEvent } from '../../application/ports/event-store.ts'
import type { Logger } from '../../logger.ts'
import type { SecurityDescription } from './errors.ts'
import { headersOf, type OutgoingMessage } from './message.ts'
import { headerNameBytes, packRequests, type KafkaRecord } from './packed-records.ts'
import type { FromProducerThread, ProducerThreadConfig, ThreadFailure, ToProducerThread } from './producer-thread.ts'

export type { KafkaRecord } from './packed-records.ts'

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
  /** The producer thread's module; only tests give another (a thread that fails on purpose). */
  readonly threadModule?: URL
}

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

/**
 * Splits items, in order, into requests of at most `maxBytes` each (a single larger item goes alone).
 * Lazy: an item is taken from `items` only when the request before it has been handed out, so items
 * built on the way are built while the previous request is being sent.
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
 * The producer thread's young generation. Each produce request's records and the client's encoding of
 * them live until the broker acknowledges the request; 48 MiB (about what the relay's own thread has
 * with bin/heap.js's 16 MiB semi-space) measured no faster on the bench's drain and no smaller in RSS
 * than this, 24 and 96 neither (runs of 100,000 events, within the noise of ±15%).
 */
const YOUNG_GENERATION_MB = 16

/** Request buffers kept for packing again (each about SATANG_KAFKA_BATCH_BYTES + 256 KiB). */
const MAX_SPARES = 4

// The producer thread's module, next to this one (.ts from the sources, .js when built to dist/).
const PRODUCER_THREAD = new URL(`./producer-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url)

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * The relay's publisher on Kafka (@platformatic/kafka, on a worker thread of its own:
 * producer-thread.ts): an idempotent producer (`acks: -1`, all in-sync replicas) to one topic, created
 * with the configured partitions when absent; Java-compatible murmur2 partitioning of the key, so any
 * client computes the same partition for a stream. TLS and SASL as `config.security` says.
 *
 * `publish` packs the records' bytes here (packed-records.ts), one buffer per produce request, and hands
 * each to the thread as soon as it is packed; the thread checks each request's records against their
 * codecs (checked-records.ts) and sends them one at a time, in order, each after the previous one was
 * acknowledged, and answers once all were (or with the first failure, or with how many it sent before
 * the first record it refused).
 */
export const makeKafkaEventPublisher = (deps: { readonly log: Logger }, config: KafkaPublisherConfig): EventPublisher => {
  const log = deps.log.child({ component: 'kafka', topic: config.topic })
  const where = `topic ${config.topic} on ${config.brokers.join(',')}`
  const security = securityDescriptionOf(config.security)
  const tls = config.security?.tls
  const sasl = config.security?.sasl
  const threadConfig: ProducerThreadConfig = {
    brokers: [...config.brokers],
    topic: config.topic,
    clientId: config.clientId,
    partitions: config.partitions,
    replicationFactor: config.replicationFactor,
    timeoutMs: config.timeoutMs,
    where,
    security,
    ...(tls === undefined ? {} : { tls: { ...tls } }),
    ...(sasl === undefined ? {} : { sasl: { mechanism: SASL_MECHANISMS[sasl.mechanism], username: sasl.username } }),
  }
  let thread: Worker | undefined
  let nextId = 0
  const waiting = new Map<number, (reply: FromProducerThread) => void>()
  // Request buffers the thread gave back, packed again instead of allocating new ones.
  const spares: ArrayBuffer[] = []

  const failureOf = (f: ThreadFailure): PublishFailure => ({ ...f, cause: new Error(f.cause) })

  /** The thread is gone: everything waiting on it fails (the relay retries from its checkpoint with a new thread). */
  const threadStopped = (w: Worker, why: string): void => {
    if (thread !== w) return
    thread = undefined
    const message = `the Kafka producer thread (${where}) stopped: ${why}`
    for (const [id, reply] of waiting) reply({ op: 'failed', id, failure: { _tag: 'PublishFailure', kind: 'unreachable', message, retriable: true, cause: message } })
    waiting.clear()
  }

  const started = (): Worker => {
    if (thread !== undefined) return thread
    const w = new Worker(config.threadModule ?? PRODUCER_THREAD, { workerData: threadConfig, name: 'satang kafka producer', resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } })
    // Idle, the thread does not keep the process alive; it does while an answer is awaited.
    w.unref()
    w.on('message', (m: FromProducerThread) => {
      if (m.op === 'log') {
        log[m.level](m.fields, m.message)
        return
      }
      if (m.op === 'spare') {
        if (spares.length < MAX_SPARES) spares.push(m.buffer)
        return
      }
      const reply = waiting.get(m.id)
      waiting.delete(m.id)
      if (waiting.size === 0) w.unref()
      reply?.(m)
    })
    w.on('error', (e: unknown) => {
      log.error({ err: e }, 'the Kafka producer thread failed')
      threadStopped(w, messageOf(e))
    })
    w.on('exit', (code: number) => threadStopped(w, `it exited with code ${String(code)}`))
    if (sasl !== undefined) w.postMessage({ op: 'password', password: sasl.password() } satisfies ToProducerThread)
    thread = w
    return w
  }

  /** The thread's answer to message `id`, once it comes. */
  const reply = (id: number): Promise<FromProducerThread> =>
    new Promise((resolve) => {
      waiting.set(id, resolve)
      thread?.ref()
    })

  // The thread loads the Kafka client (about half a second) while the process starts, not when the relay first publishes.
  started()

  const prepare = (): TE.TaskEither<PublishFailure, Destination> => async () => {
    const w = started()
    const id = ++nextId
    const answer = reply(id)
    w.postMessage({ op: 'prepare', id } satisfies ToProducerThread)
    const m = await answer
    if (m.op === 'prepared') return E.right(m.destination)
    if (m.op === 'failed') return E.left(failureOf(m.failure))
    throw new Error(`the Kafka producer thread answered a prepare with ${m.op}`)
  }

  const publish = (events: ReadonlyArray<RecordedEvent>): TE.TaskEither<PublishFailure, Published> => async () => {
    if (events.length === 0) return E.right({ published: 0, refused: null })
    const w = started()
    const id = ++nextId
    const answer = reply(id)
    w.postMessage({ op: 'publish', id, events: events.length } satisfies ToProducerThread)
    try {
      // Each request goes to the thread as soon as it is packed: the first is on its way while the rest are packed.
      for (const request of packRequests(events, config.source, config.maxRequestBytes, () => spares.pop())) {
        w.postMessage({ op: 'request', id, buffer: request.buffer, length: request.length } satisfies ToProducerThread, [request.buffer])
      }
    } catch (e) {
      waiting.delete(id)
      if (waiting.size === 0) w.unref()
      w.postMessage({ op: 'end', id } satisfies ToProducerThread)
      return E.left({ _tag: 'PublishFailure', kind: 'rejected', message: `publishing ${String(events.length)} events (${where}): the records could not be built: ${messageOf(e)}`, retriable: false, cause: e })
    }
    w.postMessage({ op: 'end', id } satisfies ToProducerThread)
    const m = await answer
    if (m.op === 'published') return E.right({ published: m.published, refused: m.refused })
    if (m.op === 'failed') return E.left(failureOf(m.failure))
    throw new Error(`the Kafka producer thread answered a publish with ${m.op}`)
  }

  const close = async (): Promise<void> => {
    const w = thread
    if (w === undefined) return
    const id = ++nextId
    const answer = reply(id)
    w.postMessage({ op: 'close', id } satisfies ToProducerThread)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([answer, new Promise<void>((r) => (timer = setTimeout(r, config.timeoutMs)))])
    clearTimeout(timer)
    waiting.delete(id)
    thread = undefined
    await w.terminate()
    const message = `the Kafka publisher (${where}) was closed`
    for (const [pending, answer] of waiting) answer({ op: 'failed', id: pending, failure: { _tag: 'PublishFailure', kind: 'unreachable', message, retriable: true, cause: message } })
    waiting.clear()
  }

  return { prepare, publish, close }
}

/** A record from its texts, and its bytes (key, value, header names and values). */
const recordFrom = (topic: string, key: string, value: string, texts: Readonly<Record<string, string>>, timestamp: bigint): { readonly record: KafkaRecord; readonly bytes: number } => {
  const keyBytes = Buffer.from(key, 'utf8')
  const valueBytes = Buffer.from(value, 'utf8')
  const headers = new Map<Buffer, Buffer>()
  let bytes = keyBytes.length + valueBytes.length
  for (const name in texts) {
    const n = headerNameBytes(name)
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
