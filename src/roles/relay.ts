import * as E from 'fp-ts/lib/Either.js'
import { registerRelayMetrics } from '../adapters/http/relay-metrics.ts'
import type { Registry } from 'prom-client'
import { makeKafkaEventPublisher } from '../adapters/kafka/publisher.ts'
import { observedPublisher } from '../adapters/telemetry/observed-publisher.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import { READ_MODEL_SCHEMA, type Database } from '../composition/database.ts'
import type { Config } from '../config.ts'
import { startRelay, type Relay } from '../jobs/index.ts'
import type { Logger } from '../logger.ts'
import type { HealthCheck } from '../adapters/http/server.ts'
import { kafkaSecurityOf } from '../composition/kafka-security.ts'
import type { ProcessContext, StartedRole } from './role.ts'

/** The Kafka relay as `satang relay` and the relay role run it; undefined when SATANG_KAFKA_BROKERS is unset. */
export const runRelay = (config: Config, store: EventStore, db: Database, log: Logger, metrics?: Registry): Relay | undefined => {
  const brokers = config.SATANG_KAFKA_BROKERS
  if (brokers === undefined) return undefined
  const kafka = makeKafkaEventPublisher(
    { log },
    {
      brokers,
      topic: config.SATANG_KAFKA_TOPIC,
      clientId: config.SATANG_KAFKA_CLIENT_ID,
      partitions: config.SATANG_KAFKA_TOPIC_PARTITIONS,
      replicationFactor: config.SATANG_KAFKA_TOPIC_REPLICATION,
      source: config.SATANG_KAFKA_SOURCE,
      maxRequestBytes: config.SATANG_KAFKA_BATCH_BYTES,
      timeoutMs: config.SATANG_KAFKA_TIMEOUT_MS,
      security: kafkaSecurityOf(config, log),
    },
  )
  // Each publish measured and, while tracing is on, a span linked to the requests of its events.
  const publisher = metrics === undefined ? kafka : observedPublisher(kafka, metrics, config.SATANG_KAFKA_TOPIC)
  return startRelay(
    { store, publisher, pool: db.pool, log },
    { schema: READ_MODEL_SCHEMA, topic: config.SATANG_KAFKA_TOPIC, batchSize: config.SATANG_KAFKA_BATCH_SIZE, retryBaseMs: config.SATANG_KAFKA_RETRY_BASE_MS, retryMaxMs: config.SATANG_KAFKA_RETRY_MAX_MS },
  )
}

/** How long the leader may go without progress while events wait before `/readyz` says it is stuck. */
export const RELAY_READY_STALL_MS = 60_000

/**
 * `/readyz` of the relay role, from the relay loop's own state: a standby is ready (it takes over when
 * the publisher dies); the publisher is ready once it reached the broker, while its last attempt did not
 * fail, and while its checkpoint moved within the last minute whenever events wait to be published.
 */
export const relayReadiness = (relay: Pick<Relay, 'runtime'>, store: EventStore, now: () => number = Date.now): HealthCheck => ({
  name: 'relay',
  check: async () => {
    const r = relay.runtime()
    if (r.role === 'stopped') return 'the relay is stopped'
    if (r.role === 'starting') return r.lastError === null ? 'the relay is starting (taking or waiting for the relay lock)' : `the relay cannot start: ${r.lastError.message}`
    if (r.role === 'standby') return null
    if (r.failing) return `the relay cannot publish to ${r.topic}: [${r.lastError?.kind ?? 'unknown'}] ${r.lastError?.message ?? 'failing'}`
    if (!r.connected) return `the relay has not reached the broker yet (topic ${r.topic})`
    const head = await store.headPosition()()
    if (E.isLeft(head)) return `the relay cannot read the event log's head (${head.left.operation})`
    const headAt = head.right ?? null
    const waiting = headAt !== null && (r.position === null || r.position < headAt)
    const idleMs = now() - (r.progressAt ?? 0)
    return waiting && idleMs > RELAY_READY_STALL_MS ? `events wait to be published to ${r.topic} but the checkpoint has not moved for ${(idleMs / 1000).toFixed(0)} s` : null
  },
})

/**
 * The relay role: publishes every event of the log to Kafka when SATANG_KAFKA_BROKERS is set (off
 * otherwise, so the embedded quick start needs no broker). Several relay processes may run: one
 * publishes, the others stand by and take over when it dies.
 */
export const startRelayRole = (ctx: ProcessContext): StartedRole => {
  const { config } = ctx
  const relay = runRelay(config, ctx.store, ctx.db, ctx.log, ctx.metrics)
  if (relay !== undefined) registerRelayMetrics(ctx.metrics, relay, ctx.log)
  return {
    role: 'relay',
    routes: [],
    checks: [],
    readiness: relay === undefined ? [] : [relayReadiness(relay, ctx.store)],
    listening: () => undefined,
    summary: () => [
      config.SATANG_KAFKA_BROKERS === undefined
        ? 'Kafka relay off (set SATANG_KAFKA_BROKERS to publish every event to Kafka)'
        : `Kafka relay: every event to topic ${config.SATANG_KAFKA_TOPIC} on ${config.SATANG_KAFKA_BROKERS.join(',')} (lag: satang relay --status)`,
    ],
    stop: async () => relay?.stop(),
  }
}
