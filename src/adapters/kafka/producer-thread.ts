/**
 * The relay's Kafka client, on a worker thread of its own (started by publisher.ts). The relay's thread
 * reads the log and packs the records' bytes (packed-records.ts); this thread checks each record
 * against its event type's codec (checked-records.ts) and owns the client (@platformatic/kafka): the
 * topic, the idempotent producer, and the sending, one request at a time in the order the requests
 * came. So checking and encoding the produce requests and waiting for the broker's acknowledgements
 * overlap with reading and packing the next events, on another core. A record the check refuses ends
 * its publish: the records before it are sent, none after it, and the answer names it.
 *
 * The client connects (TLS, SASL), creates the topic, gives the producer id and the partitions'
 * leaders; the produce requests themselves are written here: each packed request becomes one record
 * batch per partition (record-batches.ts, the partition as the Java client's partitioner picks it:
 * murmur2.ts), sealed with the producer id, its epoch and the partition's next sequence, and sent to the
 * partition's leader as a Produce request (v9, or v3 for a broker older than Kafka 2.8; acks=all) over
 * the client's own connection. This is the idempotent producer's protocol, kept here instead of in the
 * client's `send` because the client builds an object per record and copies each batch several times:
 * that was most of the relay's CPU
 * (docs/development.md "The relay's own produce requests").
 *
 * Every message from the relay's thread is handled after the one before it has finished (one chain):
 * requests are sent strictly in order, a request only after the previous one was acknowledged, and
 * none of a publish after one of its requests failed. Failures come back classified
 * (`publishFailureOf`): kind, one line for the operator, and a plain summary of the client's errors.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { Admin, ProduceAcks, Producer, type BaseOptions, type Connection, type SASLOptions } from '@platformatic/kafka'
import type { Destination, PublishFailure } from '../../application/ports/event-publisher.ts'
import { firstRefusedRecord, truncatedBefore } from './checked-records.ts'
import { publishFailureOf, type SecurityDescription } from './errors.ts'
import { javaPartitionOf } from './murmur2.ts'
import { askBrokerApis, produceVersionsByConnection, recordBatchesOf, requiredProduceVersion, sealBatches, sendBatches, type ProducerState, type ProduceVersion } from './record-batches.ts'

/** What the thread is started with (workerData): no secret; the SASL password comes in a message. */
export type ProducerThreadConfig = {
  readonly brokers: ReadonlyArray<string>
  readonly topic: string
  readonly clientId: string
  readonly partitions: number
  readonly replicationFactor: number
  readonly timeoutMs: number
  /** For the operator's error lines. */
  readonly where: string
  readonly security: SecurityDescription
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string; readonly rejectUnauthorized: boolean }
  readonly sasl?: { readonly mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; readonly username: string }
}

/** From the relay's thread, in order. */
export type ToProducerThread =
  | { readonly op: 'password'; readonly password: string }
  | { readonly op: 'prepare'; readonly id: number }
  /** A publish of `events` events begins; its requests follow, then its `end`. */
  | { readonly op: 'publish'; readonly id: number; readonly events: number }
  | { readonly op: 'request'; readonly id: number; readonly buffer: ArrayBuffer; readonly length: number }
  | { readonly op: 'end'; readonly id: number }
  | { readonly op: 'close'; readonly id: number }

/** A failure as it crosses threads: the cause as its one line of text. */
export type ThreadFailure = Omit<PublishFailure, 'cause'> & { readonly cause: string }

/** To the relay's thread. */
export type FromProducerThread =
  | { readonly op: 'prepared'; readonly id: number; readonly destination: Destination }
  /** Acknowledged: the first `published` events; `refused` names the event after them the check refused (null: none, all published). */
  | { readonly op: 'published'; readonly id: number; readonly published: number; readonly refused: string | null }
  | { readonly op: 'failed'; readonly id: number; readonly failure: ThreadFailure }
  | { readonly op: 'closed'; readonly id: number }
  /** A request's buffer, sent and acknowledged: the relay's thread packs a later request into it. */
  | { readonly op: 'spare'; readonly buffer: ArrayBuffer }
  | { readonly op: 'log'; readonly level: 'debug' | 'info'; readonly fields: Readonly<Record<string, unknown>>; readonly message: string }

// A batch whose partition answered with an error Kafka marks retriable (its leader moved, not enough
// replicas yet) or whose connection dropped is sent again a few times, after the metadata is read again;
// past that the publish fails and the relay retries it with its own backoff, from its checkpoint (with a
// new producer id). A batch sent again is the same bytes with the same producer id and sequence, so one
// the broker already wrote is not written twice.
const CLIENT_RETRIES = 3
const CLIENT_RETRY_DELAY_MS = 250

const port = parentPort
if (port === null) throw new Error('producer-thread.ts runs as a worker thread (publisher.ts starts it)')
const config = workerData as ProducerThreadConfig
let password: string | undefined

const post = (message: FromProducerThread): void => port.postMessage(message)
const log = (level: 'debug' | 'info', fields: Readonly<Record<string, unknown>>, message: string): void => post({ op: 'log', level, fields, message })
const failed = (id: number, operation: string, e: unknown): void => {
  const f = publishFailureOf(operation, config.where, e, config.security)
  post({ op: 'failed', id, failure: { _tag: 'PublishFailure', kind: f.kind, message: f.message, retriable: f.retriable, cause: f.cause instanceof Error ? f.cause.message : String(f.cause) } })
}

const connectionOptions = (): Pick<BaseOptions, 'tls' | 'sasl'> => {
  const out: { tls?: BaseOptions['tls']; sasl?: SASLOptions } = {}
  const tls = config.tls
  if (tls !== undefined) {
    out.tls = {
      rejectUnauthorized: tls.rejectUnauthorized,
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert }),
      ...(tls.key === undefined ? {} : { key: tls.key }),
    }
  }
  const sasl = config.sasl
  // A function, so that the password is never a field of an object the client could log.
  if (sasl !== undefined) out.sasl = { mechanism: sasl.mechanism, username: sasl.username, password: () => password ?? '' }
  return out
}

const base = {
  clientId: config.clientId,
  bootstrapBrokers: [...config.brokers],
  connectTimeout: Math.min(config.timeoutMs, 10_000),
  requestTimeout: config.timeoutMs,
  timeout: config.timeoutMs,
  retries: CLIENT_RETRIES,
  retryDelay: CLIENT_RETRY_DELAY_MS,
  autocreateTopics: false,
  ...connectionOptions(),
}

/**
 * The client, the producer id and epoch the broker gave it, each partition's next sequence, and the
 * Produce version to write on each broker's connection (each leader is asked once, record-batches.ts).
 */
type Session = ProducerState & { readonly client: Producer; readonly versionFor: (connection: Connection) => Promise<ProduceVersion> }
let producer: Session | undefined

/** A producer with its producer id: connected, authenticated, and known to the broker. */
const connectProducer = async (): Promise<Session> => {
  if (producer !== undefined) return producer
  // Only its connections, metadata and producer id are used: the produce requests are this thread's own.
  const p = new Producer({ ...base, idempotent: true, acks: ProduceAcks.ALL })
  let info: { producerId: bigint; producerEpoch: number }
  try {
    info = await p.initIdempotentProducer({})
    // The bootstrap broker's answer, to refuse a cluster the relay cannot write to at once, with the
    // versions named. Each leader is asked again when first sent to.
    requiredProduceVersion(await p.listApis())
  } catch (e) {
    await p.close(true).catch((err: unknown) => log('debug', { err: String(err) }, 'closing a producer that failed to connect'))
    throw e
  }
  producer = { client: p, producerId: info.producerId, epoch: info.producerEpoch, sequences: new Map(), versionFor: produceVersionsByConnection(askBrokerApis) }
  return producer
}

/** After a failed send the producer is dropped: the next publish starts a new one (a new producer id). */
const dropProducer = async (): Promise<void> => {
  const p = producer?.client
  producer = undefined
  if (p !== undefined) await p.close(true).catch((err: unknown) => log('debug', { err: String(err) }, 'closing a failed producer'))
}

const withAdmin = async <A>(use: (admin: Admin) => Promise<A>): Promise<A> => {
  const admin = new Admin(base)
  try {
    return await use(admin)
  } finally {
    await admin.close().catch((err: unknown) => log('debug', { err: String(err) }, 'closing the admin client'))
  }
}

const partitionsOf = async (admin: Admin): Promise<number | undefined> => {
  const topics = await admin.listTopics()
  if (!topics.includes(config.topic)) return undefined
  const metadata = await admin.metadata({ topics: [config.topic], forceUpdate: true })
  return metadata.topics.get(config.topic)?.partitionsCount
}

/**
 * The partitions of a topic this relay has just created: a broker may
 * answer the next metadata request before the new topic is in it, so ask again for up to the request
 * timeout, soon at first, before calling it missing (once, in CI, the relay's first start logged
 * "still missing after it was created" and kept it as its last error although it published at the
 * next attempt).
 */
const partitionsOfCreated = async (admin: Admin): Promise<number | undefined> => {
  const until = Date.now() + config.timeoutMs
  for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
    const partitions = await partitionsOf(admin)
    if (partitions !== undefined || Date.now() + wait > until) return partitions
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
}

const prepare = async (id: number): Promise<void> => {
  let destination: Destination
  try {
    destination = await withAdmin(async (admin): Promise<Destination> => {
      const existing = await partitionsOf(admin)
      if (existing !== undefined) return { description: config.where, partitions: existing, created: false }
      // Set when another relay created it at the same moment (TOPIC_ALREADY_EXISTS): then it exists now.
      let createdElsewhere: number | undefined
      try {
        await admin.createTopics({ topics: [config.topic], partitions: config.partitions, replicas: config.replicationFactor })
      } catch (e) {
        createdElsewhere = await partitionsOf(admin)
        if (createdElsewhere === undefined) throw e
      }
      const created = createdElsewhere === undefined
      const partitions = createdElsewhere ?? (await partitionsOfCreated(admin))
      if (partitions === undefined) throw new Error(`topic ${config.topic} is still missing after it was created`)
      if (created) log('info', { partitions, replicationFactor: config.replicationFactor }, `created topic ${config.topic}`)
      return { description: config.where, partitions, created }
    })
  } catch (e) {
    failed(id, 'preparing the topic', e)
    return
  }
  try {
    await connectProducer()
  } catch (e) {
    failed(id, 'connecting the producer', e)
    return
  }
  post({ op: 'prepared', id, destination })
}

/**
 * The publish whose requests are arriving: its id, its size, whether one of its requests failed, the
 * events acknowledged so far, and the event the check refused (after which nothing of it is sent).
 */
let current: { id: number; events: number; failed: boolean; published: number; refused: string | null } | undefined

/**
 * Sends one packed request's records: a batch per partition (the partition as the Java client picks
 * it from the key, over the topic's partitions now), sealed and sent to the leaders (`sendBatches`).
 */
const produceRequest = async (session: Session, buffer: ArrayBuffer, length: number): Promise<void> => {
  const metadata = await session.client.metadata({ topics: [config.topic] })
  const partitions = metadata.topics.get(config.topic)?.partitionsCount
  if (partitions === undefined || partitions < 1) throw new Error(`topic ${config.topic} has no partitions in the cluster's metadata`)
  const batches = recordBatchesOf(buffer, length, (key) => javaPartitionOf(key, partitions))
  sealBatches(batches, session)
  await sendBatches(session.client, batches, {
    topic: config.topic,
    timeoutMs: config.timeoutMs,
    versionFor: session.versionFor,
    retries: CLIENT_RETRIES,
    retryDelayMs: CLIENT_RETRY_DELAY_MS,
    onRetry: (again, attempt) => log('debug', { partitions: again, attempt }, 'sending batches again after a retriable error'),
  })
}

/**
 * Checks a request's records (checked-records.ts) and sends those before the first one refused, if
 * any; after a refused record nothing more of the publish is sent.
 */
const sendRequest = async (id: number, buffer: ArrayBuffer, length: number): Promise<void> => {
  const publish = current
  if (publish?.id !== id || publish.failed || publish.refused !== null) return
  try {
    const refused = firstRefusedRecord(buffer, length)
    const records = refused === null ? new DataView(buffer).getUint32(0, true) : refused.index
    const sending = refused === null ? length : truncatedBefore(buffer, refused)
    if (sending > 0) await produceRequest(await connectProducer(), buffer, sending)
    publish.published += records
    if (refused !== null) publish.refused = refused.reason
    // Acknowledged: the client holds none of its records any more; the buffer goes back to be packed again.
    port.postMessage({ op: 'spare', buffer } satisfies FromProducerThread, [buffer])
  } catch (e) {
    publish.failed = true
    await dropProducer()
    failed(id, `publishing ${String(publish.events)} events`, e)
  }
}

const close = async (id: number): Promise<void> => {
  await dropProducer()
  post({ op: 'closed', id })
}

const handle = async (m: ToProducerThread): Promise<void> => {
  switch (m.op) {
    case 'password':
      password = m.password
      return
    case 'prepare':
      return prepare(m.id)
    case 'publish':
      current = { id: m.id, events: m.events, failed: false, published: 0, refused: null }
      return
    case 'request':
      return sendRequest(m.id, m.buffer, m.length)
    case 'end':
      if (current?.id === m.id && !current.failed) post({ op: 'published', id: m.id, published: current.published, refused: current.refused })
      current = undefined
      return
    case 'close':
      return close(m.id)
  }
}

let chain: Promise<void> = Promise.resolve()
port.on('message', (m: ToProducerThread) => {
  chain = chain.then(() => handle(m)).catch((e: unknown) => {
    // A defect here (not a client failure, which `handle` reports): fail what waits on this message.
    if (!('id' in m)) return
    if (current?.id === m.id) current.failed = true
    failed(m.id, 'the Kafka producer thread', e)
  })
})
