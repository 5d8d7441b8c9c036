// Kafka relay benchmark (issue 14). A log of 100,000 events (orders: OrderCreated, then StatusObserved
// observations) is written first; then `satang relay` runs as its own process and drains it to a real
// broker. Figures, each with a bare baseline measured in the same run on the same broker:
// - backlog drain, events/s from the log to broker acknowledgement (the relay's checkpoint row, by the
//   database's clock: from its first checkpoint to its last; start-up reported apart), against a bare
//   idempotent producer of the relay's own client (@platformatic/kafka) sending the same messages,
//   pre-built, in batches of the same size (no log reading, no decoding, no checkpoint); and, for
//   comparison, the same bare run with kafkajs, the relay's client before issue 26;
// - live latency, append to a consumer receiving the message (p50/p99), one event at a time at ~100/s
//   while the relay follows the log, against a bare producer → consumer round trip.
// The broker: SATANG_BENCH_KAFKA_BROKERS (or SATANG_TEST_KAFKA_BROKERS), else one started here with
// scripts/kafka.sh on a free port and stopped afterwards.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as E from 'fp-ts/lib/Either.js'
import { compatibilityPartitioner, ProduceAcks, Producer } from '@platformatic/kafka'
import kafkajs from 'kafkajs'
import { makePostgresEventStore } from '../src/adapters/eventstore/postgres.ts'
import { toKafkaMessage } from '../src/adapters/kafka/message.ts'
import { recordOf, requestsOf } from '../src/adapters/kafka/publisher.ts'
import { migrateEventStore } from '../src/adapters/postgres/migrations/eventstore.ts'
import type { EventStore, EventToAppend, Position, RecordedEvent } from '../src/application/ports/event-store.ts'
import { decodeDomainEvent } from '../src/domain/events/registry.ts'
import { makeKnex, makePostgresPool } from '../src/platform/postgres/pool.ts'
import { PROJECTIONS } from '../src/projections/index.ts'
import { migrateReadModels } from '../src/projections/migrations.ts'
import { filterKafkajsNegativeTimeoutWarning } from '../test/support/kafkajs-warning.ts'
import { connectAdmin } from './support/databases.ts'
import type { BenchContext, BenchResult } from './types.ts'
import { percentile, round } from './support/stats.ts'

// kafkajs (the old client: its bare producer, the bench's admin and consumers) warns of a negative timeout on Node 24 from one known place.
filterKafkajsNegativeTimeoutWarning()
const { Kafka, Partitioners, logLevel } = kafkajs

const SATANG_BIN = fileURLToPath(new URL('../bin/satang.js', import.meta.url))
const KAFKA_SH = fileURLToPath(new URL('../scripts/kafka.sh', import.meta.url))
/** Events in the backlog the relay drains; a smoke run (`--quick`) drains a fifth, still over several batches. */
const BACKLOG = 100_000
const QUICK_BACKLOG = 20_000
const EVENTS_PER_STREAM = 20
const WRITERS = 8
const BATCH = 5_000
const MAX_REQUEST_BYTES = 900_000
const PARTITIONS = 6
const LIVE_EVENTS = 600
const LIVE_INTERVAL_MS = 10

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const runCommand = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${String(code)}): ${err}`))))
  })

/** The bench's broker: configured, or started here (and stopped by `stop`). */
const brokerFor = async (): Promise<{ brokers: string[]; stop: () => Promise<void> }> => {
  const configured = process.env['SATANG_BENCH_KAFKA_BROKERS'] ?? process.env['SATANG_TEST_KAFKA_BROKERS']
  if (configured !== undefined && configured !== '') return { brokers: configured.split(','), stop: () => Promise.resolve() }
  const port = await freePort()
  const runDir = await mkdtemp(join(tmpdir(), 'satang-bench-kafka-'))
  const env = { SATANG_KAFKA_PORT: String(port), SATANG_KAFKA_RUN_DIR: runDir }
  process.stderr.write(`  relay: starting a broker with scripts/kafka.sh on 127.0.0.1:${String(port)}…\n`)
  await runCommand('bash', [KAFKA_SH, 'start'], env)
  return {
    brokers: [`127.0.0.1:${String(port)}`],
    stop: async () => {
      await runCommand('bash', [KAFKA_SH, 'stop'], env)
      await rm(runDir, { recursive: true, force: true })
    },
  }
}

// Stored JSON of two real event types (checked against their codecs before the run).
const orderCreated = (stream: number): EventToAppend => ({
  eventId: randomUUID(),
  type: 'OrderCreated',
  schemaVersion: 1,
  data: {
    merchantId: '140000000000000001',
    storeId: null,
    merchantOrderId: `BENCH-${String(stream)}`,
    operation: 'checkout',
    service: 'svc.checkout.pay',
    paymentMethod: null,
    productCode: null,
    amount: '42000',
    currency: 'THB',
    orderDesc: 'Rice cooker, 1.8 litre',
    merchantUrls: { notifyUrl: 'https://shop.example/notify', redirectUrl: 'https://shop.example/thanks', cancelUrl: null },
    createdAt: '2026-01-01T03:00:00.000Z',
  },
  metadata: { correlationId: randomUUID(), causationId: randomUUID(), recordedAt: new Date().toISOString(), source: 'api_request' },
})
const statusObserved = (stream: number, i: number): EventToAppend => ({
  eventId: randomUUID(),
  type: 'StatusObserved',
  schemaVersion: 2,
  data: {
    merchantId: '140000000000000001',
    merchantOrderId: `BENCH-${String(stream)}`,
    gatewayOrderId: `2026010100000${String(stream).padStart(5, '0')}`,
    statusCode: i % 2 === 0 ? 'WP' : 'PS',
    classification: { code: 'PS', meaning: 'paid', outcome: 'succeeded', final: true, needsReview: false },
    amount: '42000',
    currency: 'THB',
    observationKey: `query:${String(stream)}:${String(i)}`,
    traceId: randomUUID(),
    completeTime: '2026-01-01T03:05:00.000Z',
    source: 'query',
    observedAt: '2026-01-01T03:05:00.000Z',
  },
  metadata: { correlationId: randomUUID(), causationId: randomUUID(), recordedAt: new Date().toISOString(), source: 'query' },
})
const streamEvents = (stream: number): EventToAppend[] => [orderCreated(stream), ...Array.from({ length: EVENTS_PER_STREAM - 1 }, (_, i) => statusObserved(stream, i))]

const mustAppend = async (store: EventStore, stream: string, events: ReadonlyArray<EventToAppend>): Promise<Position> => {
  const r = await store.append(stream, events, 'any')()
  if (E.isLeft(r)) throw new Error(`bench: append failed: ${r.left._tag}`)
  return r.right.position
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc (Linux); null elsewhere. The relay
 * process keeps its pid when it restarts itself with its heap flags (process.execve).
 */
const cpuSecondsOf = async (pid: number | undefined): Promise<number | null> => {
  if (pid === undefined) return null
  const stat = await readFile(`/proc/${String(pid)}/stat`, 'utf8').catch(() => null)
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')
  if (fields === undefined) return null
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** This process's CPU seconds so far (user + system). */
const ownCpuSeconds = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/**
 * A `satang relay` process; resolves once it printed that it publishes. SATANG_BENCH_PROFILE_DIR: a CPU
 * profile of it (written when it stops), to see where its time goes.
 */
const startRelayProcess = (env: NodeJS.ProcessEnv): Promise<{ stop: () => Promise<void>; pid: number | undefined; startedAt: number }> =>
  new Promise((resolve, reject) => {
    const startedAt = Date.now()
    const clean: NodeJS.ProcessEnv = {}
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SATANG_')) clean[k] = v
    const profile = process.env['SATANG_BENCH_PROFILE_DIR']
    const args = [...(profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`]), SATANG_BIN, 'relay']
    const child = spawn(process.execPath, args, { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    const exited = new Promise<void>((done) => child.on('close', () => done()))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
      if (out.includes('relay publishing')) resolve({ stop: async () => void (child.kill('SIGTERM'), await exited), pid: child.pid, startedAt })
    })
    child.on('close', (code) => reject(new Error(`satang relay exited (${String(code)}): ${out}\n${err}`)))
  })

type Consumed = { readonly stop: () => Promise<void> }

/** A consumer of `topic` from its end, calling `onMessage(ce_id or key, receivedAt)`; resolves once it is assigned partitions. */
const consumeLive = async (kafka: InstanceType<typeof Kafka>, topic: string, onMessage: (id: string, at: number) => void): Promise<Consumed> => {
  const consumer = kafka.consumer({ groupId: `bench-${randomUUID()}`, maxWaitTimeInMs: 100 })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: false })
  const joined = new Promise<void>((r) => consumer.on(consumer.events.GROUP_JOIN, () => r()))
  await consumer.run({
    eachMessage: ({ message }) => {
      onMessage(message.headers?.['ce_id']?.toString() ?? message.key?.toString() ?? '', performance.now())
      return Promise.resolve()
    },
  })
  await joined
  await sleep(1_000) // let the fetch loop start on every partition
  return { stop: () => consumer.disconnect() }
}

const waitUntil = async (done: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> => {
  const deadline = Date.now() + ms
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`)
    await sleep(20)
  }
}

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  for (const e of [orderCreated(0), statusObserved(0, 0)]) {
    const decoded = decodeDomainEvent(e.type, e.schemaVersion, e.data)
    if (E.isLeft(decoded)) throw new Error(`bench: the ${e.type} payload does not decode`)
  }
  const backlog = ctx.quick ? QUICK_BACKLOG : BACKLOG
  const broker = await brokerFor()
  const dbName = `satang_bench_relay_${randomUUID().replaceAll('-', '').slice(0, 10)}`
  const admin = await connectAdmin(ctx.databaseUrl, ctx.log, 'relay')
  await admin.query(`create database "${dbName}"`)
  const url = new URL(ctx.databaseUrl)
  url.pathname = `/${dbName}`
  const pool = makePostgresPool({ url: url.toString(), poolMax: WRITERS + 2 }, ctx.log)
  const store = makePostgresEventStore({ pool, log: ctx.log }, { schema: 'eventstore' })
  const kafka = new Kafka({ clientId: 'satang-bench', brokers: broker.brokers, logLevel: logLevel.NOTHING })
  const kafkaAdmin = kafka.admin()
  const suffix = randomUUID().slice(0, 8)
  const relayTopic = `satang.bench.relay.${suffix}`
  const bareTopic = `satang.bench.bare.${suffix}`
  const oldTopic = `satang.bench.kafkajs.${suffix}`
  const stops: Array<() => Promise<void>> = []
  try {
    const knex = makeKnex(pool)
    const migrated = await migrateEventStore({ db: knex, log: ctx.log }, { schema: 'eventstore' })()
    await knex.destroy()
    if (E.isLeft(migrated)) throw new Error('bench: event store migration failed')
    await migrateReadModels({ pool, log: ctx.log }, { schema: 'satang', projections: PROJECTIONS })
    await kafkaAdmin.connect()
    await kafkaAdmin.createTopics({ topics: [relayTopic, bareTopic, oldTopic].map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })), waitForLeaders: true })

    process.stderr.write(`  relay: writing ${backlog.toLocaleString('en-US')} events (${String(EVENTS_PER_STREAM)} per stream, ${String(WRITERS)} writers)…\n`)
    const streams = backlog / EVENTS_PER_STREAM
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let s = w; s < streams; s += WRITERS) await mustAppend(store, `order-140000000000000001-BENCH-${String(s)}`, streamEvents(s))
      }),
    )

    // Baseline: the same messages, built beforehand, sent by a bare idempotent producer in batches of BATCH.
    const stored: RecordedEvent[] = []
    let from: Position | undefined
    while (stored.length < backlog) {
      const page = await store.readAll({ ...(from === undefined ? {} : { from }), maxCount: 10_000 })()
      if (E.isLeft(page)) throw new Error('bench: readAll failed')
      for (const item of page.right) if (E.isRight(item)) stored.push(item.right)
      const last = page.right.at(-1)
      if (last === undefined) break
      from = E.isRight(last) ? last.right.position : last.left.position
    }
    const messages = stored.map((e) => toKafkaMessage(e, '/satang'))
    // The relay's client: an idempotent @platformatic/kafka producer, acks=all, the same records the relay sends.
    const bare = new Producer({ clientId: 'satang-bench-bare', bootstrapBrokers: broker.brokers, idempotent: true, acks: ProduceAcks.ALL, partitioner: compatibilityPartitioner, autocreateTopics: false })
    await bare.initIdempotentProducer({})
    stops.push(() => bare.close())
    /** One bare pass over every message: its rate, and this process's CPU seconds per 1,000 events. */
    const barePass = async (count = messages.length): Promise<{ rate: number; cpuPer1000: number }> => {
      const started = performance.now()
      const cpu = ownCpuSeconds()
      for (let i = 0; i < count; i += BATCH) {
        for (const request of requestsOf(messages.slice(i, i + BATCH), MAX_REQUEST_BYTES)) {
          await bare.send({ acks: ProduceAcks.ALL, messages: request.map((m) => recordOf(bareTopic, m)) })
        }
      }
      return { rate: count / ((performance.now() - started) / 1000), cpuPer1000: ((ownCpuSeconds() - cpu) * 1000) / count }
    }
    // The bare pass runs before the relay drains and again after it; the baseline is their mean, so a
    // load that changes during the run weighs on both sides alike.
    // One uncounted pass over a fifth of the messages first: this process's client and the broker warm
    // up on it (a counted first pass was 10–50% slower than the one after the relay), as the relay's
    // first batch, left out of its rate, warms up the relay.
    process.stderr.write('  relay: bare baseline: a @platformatic/kafka producer sending the same messages (a warm-up pass first)…\n')
    await barePass(Math.ceil(messages.length / 5 / BATCH) * BATCH)
    const bareBefore = await barePass()
    // The old client, for comparison: kafkajs, the same messages and batches, to a topic of its own.
    const producer = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    stops.push(() => producer.disconnect())
    process.stderr.write('  relay: the old client: a kafkajs producer sending the same messages…\n')
    const oldStarted = performance.now()
    for (let i = 0; i < messages.length; i += BATCH) {
      for (const request of requestsOf(messages.slice(i, i + BATCH), MAX_REQUEST_BYTES)) {
        await producer.send({ topic: oldTopic, acks: -1, messages: request.map((m) => ({ key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp })) })
      }
    }
    const oldRate = messages.length / ((performance.now() - oldStarted) / 1000)

    process.stderr.write('  relay: satang relay (its own process) draining the backlog…\n')
    const relay = await startRelayProcess({
      SATANG_DATABASE_URL: url.toString(),
      SATANG_KAFKA_BROKERS: broker.brokers.join(','),
      SATANG_KAFKA_TOPIC: relayTopic,
      SATANG_KAFKA_BATCH_SIZE: String(BATCH),
      SATANG_KAFKA_BATCH_BYTES: String(MAX_REQUEST_BYTES),
      SATANG_LOG_LEVEL: 'warn',
    })
    stops.push(relay.stop)
    // From the database's clock: when the relay took the lock, and each checkpoint move. The drain rate
    // runs from the first checkpoint (the first batch acknowledged) to the last; start-up is reported apart.
    type Row = { events_published: string; published_ms: number | null; holder_ms: number | null }
    let first: { events: number; at: number } | undefined
    let last: { events: number; at: number } | undefined
    let holderAt = Number.NaN
    // The relay's CPU from its first acknowledged batch to its last (sampled when the bench sees each).
    let cpuFirst: { cpu: number | null; events: number } | undefined
    let cpuLast: number | null = null
    await waitUntil(
      async () => {
        const row = (await pool.query<Row>(`select events_published::text, extract(epoch from published_at) * 1000 as published_ms, extract(epoch from holder_since) * 1000 as holder_ms from satang.relay_checkpoints where topic = $1`, [relayTopic])).rows[0]
        const events = Number(row?.events_published ?? 0)
        if (row === undefined || events === 0 || row.published_ms === null) return false
        holderAt = Number(row.holder_ms)
        last = { events, at: Number(row.published_ms) }
        first ??= last
        cpuFirst ??= { cpu: await cpuSecondsOf(relay.pid), events }
        if (events >= backlog) cpuLast = await cpuSecondsOf(relay.pid)
        return events >= backlog
      },
      600_000,
      'the relay to drain the backlog',
    )
    if (first === undefined || last === undefined || last.at <= first.at) throw new Error('bench: the relay drained the backlog in one batch; raise BACKLOG')
    const relayRate = (last.events - first.events) / ((last.at - first.at) / 1000)
    const startupSeconds = (first.at - holderAt) / 1000
    // The same host's clock: the process spawned (this process's clock) to the first checkpoint (the database's).
    const fromSpawnSeconds = (first.at - relay.startedAt) / 1000
    const relayCpuPer1000 = cpuFirst?.cpu === null || cpuFirst === undefined || cpuLast === null ? null : ((cpuLast - cpuFirst.cpu) * 1000) / (backlog - cpuFirst.events)
    process.stderr.write('  relay: bare baseline again, after the relay…\n')
    const bareAfter = await barePass()
    const bareRate = (bareBefore.rate + bareAfter.rate) / 2
    const bareCpuPer1000 = (bareBefore.cpuPer1000 + bareAfter.cpuPer1000) / 2

    /** Sends LIVE_EVENTS one at a time (`next(i)`: the id the consumer will see, and how to send it) and returns the sorted latencies to the consumer. */
    const liveLatencies = async (topic: string, next: (i: number) => { readonly id: string; readonly send: () => Promise<unknown> }): Promise<number[]> => {
      const sentAt = new Map<string, number>()
      const latencies: number[] = []
      const consumer = await consumeLive(kafka, topic, (id, at) => {
        const t0 = sentAt.get(id)
        if (t0 !== undefined) latencies.push(at - t0)
      })
      stops.push(consumer.stop)
      for (let i = 0; i < LIVE_EVENTS; i++) {
        const { id, send } = next(i)
        sentAt.set(id, performance.now())
        await send()
        await sleep(LIVE_INTERVAL_MS)
      }
      await waitUntil(() => latencies.length >= LIVE_EVENTS, 30_000, `the live messages of ${topic} at the consumer`)
      return latencies.sort((a, b) => a - b)
    }
    // Live: one event at a time; latency from the start of the append to the consumer.
    process.stderr.write('  relay: live latency, append → consumer…\n')
    const latencies = await liveLatencies(relayTopic, (i) => {
      const e = statusObserved(1_000_000 + i, i)
      return { id: e.eventId, send: () => mustAppend(store, `order-140000000000000001-LIVE-${String(i % 50)}`, [e]) }
    })
    // Bare live: a producer sending one message at a time to a consumer set up the same way.
    const bareLatencies = await liveLatencies(bareTopic, (i) => {
      const m = messages[i % messages.length]
      if (m === undefined) throw new Error('bench: no messages')
      const id = randomUUID()
      return { id, send: () => bare.send({ acks: ProduceAcks.ALL, messages: [recordOf(bareTopic, { ...m, headers: { ...m.headers, ce_id: id } })] }) }
    })

    const p50 = percentile(latencies, 50)
    const bareP50 = percentile(bareLatencies, 50)
    return [
      { name: `relay backlog drain, log → broker ack (${backlog.toLocaleString('en-US')} events, batches of ${String(BATCH)}, satang relay process)`, value: round(relayRate), unit: 'events/s', target: { op: '>=', value: 20_000 } },
      { name: 'bare baseline: @platformatic/kafka idempotent producer (the relay’s client), same messages pre-built, same batches', value: round(bareRate), unit: 'events/s' },
      { name: 'relay drain / bare producer', value: round(relayRate / bareRate, 2), unit: 'ratio', target: { op: '>=', value: 0.9 } },
      { name: 'bare baseline, the pass before the relay (the baseline is the mean of both)', value: round(bareBefore.rate), unit: 'events/s' },
      { name: 'bare baseline, the pass after the relay', value: round(bareAfter.rate), unit: 'events/s' },
      ...(relayCpuPer1000 === null
        ? []
        : [
            {
              name: 'CPU of the relay process per 1,000 events drained (reading the log, checking, building, sending)',
              value: round(relayCpuPer1000 * 1000, 1),
              unit: 'ms',
              baseline: { name: 'CPU of the bare producer’s process per 1,000 events (building the records, sending)', value: round(bareCpuPer1000 * 1000, 1) },
              ratio: round(bareCpuPer1000 / relayCpuPer1000, 2),
            },
          ]),
      { name: 'for comparison, the old client: kafkajs idempotent producer, same messages, same batches', value: round(oldRate), unit: 'events/s' },
      { name: 'relay start-up: lock taken → first batch acknowledged (topic metadata, producer id, first read)', value: round(startupSeconds, 2), unit: 's' },
      { name: 'relay start-up: process spawned → first batch acknowledged (Node, satang and the Kafka client loaded, database, lock, then as above)', value: round(fromSpawnSeconds, 2), unit: 's' },
      { name: `relay live latency append → consumer p50 (${String(LIVE_EVENTS)} events, ~${String(Math.round(1000 / LIVE_INTERVAL_MS))}/s)`, value: round(p50, 2), unit: 'ms', target: { op: '<=', value: 50 } },
      { name: 'relay live latency append → consumer p99', value: round(percentile(latencies, 99), 2), unit: 'ms' },
      { name: 'bare baseline: producer send → consumer p50', value: round(bareP50, 2), unit: 'ms' },
      { name: 'bare baseline: producer send → consumer p99', value: round(percentile(bareLatencies, 99), 2), unit: 'ms' },
      { name: 'relay live p50 / bare p50', value: round(p50 / bareP50, 2), unit: 'ratio' },
    ]
  } finally {
    for (const stop of stops.reverse()) await stop().catch((e: unknown) => process.stderr.write(`  relay: cleanup: ${e instanceof Error ? e.message : String(e)}\n`))
    await kafkaAdmin.deleteTopics({ topics: [relayTopic, bareTopic, oldTopic] }).catch((e: unknown) => process.stderr.write(`  relay: could not delete the bench topics: ${e instanceof Error ? e.message : String(e)}\n`))
    await kafkaAdmin.disconnect()
    await store.close()
    await pool.end()
    await sleep(300)
    await admin.query(`drop database if exists "${dbName}" with (force)`)
    await admin.end()
    await broker.stop()
  }
}
