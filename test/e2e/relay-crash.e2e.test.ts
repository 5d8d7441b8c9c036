import { randomUUID } from 'node:crypto'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { readRelayStatus } from '../../src/jobs/index.ts'
import { readRelayCheckpoint } from '../../src/jobs/relay/relay-checkpoint.ts'
import { READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { runCli } from '../support/cli.ts'
import { consumeTopic, kafkaSkipReason, startTestBroker, type TestBroker } from '../support/kafka.ts'
import type { EventStoreDatabase } from '../adapters/http/database.ts'
import { startSatangProcess, type SatangProcess } from '../support/process.ts'
import { appendOrders, checkDelivery, eventually, migratedLog, readWholeLog, relayEnv } from './relay-support.ts'

/**
 * Acceptance (issue 14): real `satang relay` processes on one database and a real broker.
 * - a relay killed with SIGKILL while it publishes a large backlog, then restarted: every event reaches
 *   the topic, with at most a small, counted number of redeliveries, never a gap or a per-key reorder;
 * - two relays on one database: one publishes, the other stands by and takes over when the first is
 *   killed; no event missing.
 */

const skipReason = await kafkaSkipReason()
if (skipReason !== undefined) console.info(`Kafka relay crash and takeover tests skipped: ${skipReason}`)

const BATCH = 500
let broker: TestBroker
let db: EventStoreDatabase
let pool: Pool
let store: EventStore
const running: SatangProcess[] = []

const env = (topic: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
  relayEnv(db, broker.brokers, topic, {
    SATANG_KAFKA_BATCH_SIZE: String(BATCH),
    SATANG_KAFKA_RETRY_BASE_MS: '100',
    SATANG_KAFKA_RETRY_MAX_MS: '1000',
    ...extra,
  })

const relayProcess = (topic: string): SatangProcess => {
  const p = startSatangProcess(['relay'], { env: env(topic) })
  running.push(p)
  return p
}

const published = async (topic: string): Promise<number> => (await readRelayCheckpoint(pool, READ_MODEL_SCHEMA, topic))?.eventsPublished ?? 0

const caughtUp = async (topic: string): Promise<boolean> => (await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)).eventsBehind === 0

describe.skipIf(skipReason !== undefined)('satang relay processes (real broker, real SIGKILL)', () => {
  beforeAll(async () => {
    broker = await startTestBroker()
    db = await migratedLog('relaycrash')
    pool = db.pool
    store = db.store
    // The backlog: ~30,000 events of ~4,000 order streams.
    await appendOrders(store, 30_000, 'backlog')
  }, 180_000)

  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop('SIGKILL')))
    await db.drop()
    await broker.stop()
  })

  it('SIGKILL while publishing a large backlog, then a restart: every event, a few counted redeliveries, no gap, no per-key reorder', async () => {
    const topic = `satang.test.crash.${randomUUID().slice(0, 8)}`
    const first = relayProcess(topic)
    await first.waitFor(/relay publishing/, 60_000)
    // Kill it in the middle of the backlog: some batches acknowledged and checkpointed, more to go.
    await eventually('the relay has published a few batches', async () => (await published(topic)) >= 3 * BATCH, 60_000)
    first.child.kill('SIGKILL')
    await first.stop('SIGKILL')
    expect(first.child.signalCode).toBe('SIGKILL')
    const log0 = await readWholeLog(store)
    const atKill = await published(topic)
    expect(atKill).toBeLessThan(log0.length)

    const second = relayProcess(topic)
    await second.waitFor(/relay publishing/, 60_000)
    await eventually('the restarted relay caught up', () => caughtUp(topic), 120_000)
    expect(await second.stop('SIGTERM')).toBe(0)

    const messages = await consumeTopic(broker.brokers, topic)
    const check = checkDelivery(log0, messages)
    console.info(`relay crash test: ${String(check.eventsInLog)} events in the log, ${String(check.messages)} messages, ${String(check.redeliveries)} redelivered after the SIGKILL (checkpoint at ${String(atKill)} events when killed)`)
    expect(check.missing).toEqual([])
    expect(check.outOfOrder).toEqual([])
    expect(check.mismatched).toEqual([])
    // At most what was in flight when it died: the batch being published (the checkpoint moves after each ack).
    expect(check.redeliveries).toBeLessThanOrEqual(BATCH)
    expect(check.messages).toBe(check.eventsInLog + check.redeliveries)
  }, 300_000)

  it('two relays on one database: one publishes, the other stands by and takes over when the first is killed; no event missing', async () => {
    const topic = `satang.test.takeover.${randomUUID().slice(0, 8)}`
    const a = relayProcess(topic)
    await a.waitFor(/relay publishing/, 60_000)
    const b = relayProcess(topic)
    await b.waitFor(/relay standing by/, 60_000)
    await eventually('relay A caught up with the backlog', () => caughtUp(topic), 120_000)

    const status = await runCli(['relay', '--status', '--json'], { env: env(topic) })
    expect(status.code, status.stderr).toBe(0)
    const s = JSON.parse(status.stdout) as { state: string; holder: { application: string } | null; standbys: number }
    expect(s.state).toBe('publishing')
    expect(s.holder?.application).toContain(`pid ${String(a.child.pid)}`)
    expect(s.standbys).toBe(1)
    expect(b.stdout()).not.toContain('relay publishing')

    // Live traffic while A dies: B takes over and publishes the rest.
    const live = appendOrders(store, 3_000, 'live')
    a.child.kill('SIGKILL')
    const killedAt = Date.now()
    await a.stop('SIGKILL')
    await b.waitFor(/relay publishing/, 30_000)
    console.info(`relay takeover: the standby published ${String(Date.now() - killedAt)} ms after the holder was killed`)
    await live
    await eventually('relay B caught up', () => caughtUp(topic), 120_000)
    const after = JSON.parse((await runCli(['relay', '--status', '--json'], { env: env(topic) })).stdout) as { holder: { application: string } | null }
    expect(after.holder?.application).toContain(`pid ${String(b.child.pid)}`)
    expect(await b.stop('SIGTERM')).toBe(0)

    const check = checkDelivery(await readWholeLog(store), await consumeTopic(broker.brokers, topic))
    console.info(`relay takeover test: ${String(check.eventsInLog)} events, ${String(check.messages)} messages, ${String(check.redeliveries)} redelivered`)
    expect(check.missing).toEqual([])
    expect(check.outOfOrder).toEqual([])
    expect(check.mismatched).toEqual([])
    expect(check.redeliveries).toBeLessThanOrEqual(BATCH)
  }, 300_000)
})
