import { registerRelayMetrics } from '../adapters/http/relay-metrics.ts'
import type { Registry } from 'prom-client'
import { makeKafkaEventPublisher } from '../adapters/kafka/publisher.ts'
import { observedPublisher } from '../adapters/telemetry/observed-publisher.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import { READ_MODEL_SCHEMA, type Database } from '../composition/database.ts'
import type { Config } from '../config.ts'
import { startRelay, type Relay } from '../jobs/index.ts'
import type { Logger } from '../logger.ts'
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
    },
  )
  // Each publish measured and, while tracing is on, a span linked to the requests of its events.
  const publisher = metrics === undefined ? kafka : observedPublisher(kafka, metrics, config.SATANG_KAFKA_TOPIC)
  return startRelay(
    { store, publisher, pool: db.pool, log },
    { schema: READ_MODEL_SCHEMA, topic: config.SATANG_KAFKA_TOPIC, batchSize: config.SATANG_KAFKA_BATCH_SIZE, retryBaseMs: config.SATANG_KAFKA_RETRY_BASE_MS, retryMaxMs: config.SATANG_KAFKA_RETRY_MAX_MS },
  )
}

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
    listening: () => undefined,
    summary: () => [
      config.SATANG_KAFKA_BROKERS === undefined
        ? 'Kafka relay off (set SATANG_KAFKA_BROKERS to publish every event to Kafka)'
        : `Kafka relay: every event to topic ${config.SATANG_KAFKA_TOPIC} on ${config.SATANG_KAFKA_BROKERS.join(',')} (lag: satang relay --status)`,
    ],
    stop: async () => relay?.stop(),
  }
}
