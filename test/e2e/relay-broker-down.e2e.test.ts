import { randomUUID } from 'node:crypto'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { readRelayStatus } from '../../src/jobs/index.ts'
import { READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { runCli } from '../support/cli.ts'
import { consumeTopic, scriptBroker, scriptBrokerSkipReason, type ScriptBroker } from '../support/kafka.ts'
import type { EventStoreDatabase } from '../adapters/http/database.ts'
import { startSatangProcess, type SatangProcess } from '../support/process.ts'
import { appendOrders, checkDelivery, eventually, migratedLog, readWholeLog, relayEnv } from './relay-support.ts'

/**
 * Acceptance (issue 14): a broker of the test's own (scripts/kafka.sh on a free port) is down when the
 * relay starts, and goes down again while it publishes: the relay says so clearly (log, --status),
 * retries with backoff, and when the broker is back every event reaches the topic.
 */

const skipReason = await scriptBrokerSkipReason()
if (skipReason !== undefined) console.info(`Kafka relay broker-down test skipped: ${skipReason}`)

const topic = `satang.test.down.${randomUUID().slice(0, 8)}`
let broker: ScriptBroker
let db: EventStoreDatabase
let pool: Pool
let store: EventStore
let relay: SatangProcess | undefined

const env = (): NodeJS.ProcessEnv =>
  relayEnv(db, broker.brokers, topic, {
    SATANG_KAFKA_BATCH_SIZE: '200',
    SATANG_KAFKA_TIMEOUT_MS: '3000',
    SATANG_KAFKA_RETRY_BASE_MS: '200',
    SATANG_KAFKA_RETRY_MAX_MS: '2000',
  })

type StatusJson = { state: string; events_behind: number; last_error: { kind: string; message: string; at: string } | null }
const statusJson = async (): Promise<{ code: number | null; status: StatusJson }> => {
  const r = await runCli(['relay', '--status', '--json'], { env: env() })
  return { code: r.code, status: JSON.parse(r.stdout) as StatusJson }
}

describe.skipIf(skipReason !== undefined)('the relay when the broker is down (a broker of our own, stopped and started)', () => {
  beforeAll(async () => {
    broker = await scriptBroker()
    db = await migratedLog('relaydown')
    pool = db.pool
    store = db.store
    await appendOrders(store, 2_000, 'before')
  }, 120_000)

  afterAll(async () => {
    await relay?.stop('SIGKILL')
    await db.drop()
    await broker.remove()
  })

  it('down at start: a clear error and backoff; up: it publishes; down mid-run and back: nothing lost', async () => {
    relay = startSatangProcess(['relay'], { env: env() })
    // Down at start: the error names the brokers and what is wrong, and the relay keeps retrying.
    await eventually('the relay reported the broker down twice', async () => (relay?.stderr().match(/no broker answered/g) ?? []).length >= 2, 60_000)
    expect(relay.stderr()).toContain(`topic ${topic} on ${broker.brokers.join(',')}`)
    expect(relay.stderr()).toMatch(/retrying in \d+\.\d s/)
    const down = await statusJson()
    expect(down.code).toBe(1)
    expect(down.status).toMatchObject({ state: 'failing', last_error: { kind: 'unreachable' } })
    expect(down.status.events_behind).toBeGreaterThanOrEqual(2_000)

    await broker.start()
    await relay.waitFor(/relay publishing/, 60_000)
    await eventually('the relay caught up once the broker answered', async () => (await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)).eventsBehind === 0, 60_000)
    expect((await statusJson()).status.state).toBe('publishing')

    // Down mid-run, while events keep coming.
    const errorsBefore = (relay.stderr().match(/relay stopped publishing/g) ?? []).length
    await broker.stop()
    await appendOrders(store, 1_500, 'while-down')
    await eventually('the relay reported the broker down again', async () => (relay?.stderr().match(/relay stopped publishing/g) ?? []).length > errorsBefore, 60_000)
    expect((await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)).eventsBehind).toBeGreaterThan(0)
    await broker.start()
    await appendOrders(store, 500, 'after')
    await eventually('the relay caught up after the broker came back', async () => (await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)).eventsBehind === 0, 120_000)
    expect(await relay.stop('SIGTERM')).toBe(0)

    const check = checkDelivery(await readWholeLog(store), await consumeTopic(broker.brokers, topic))
    console.info(`relay broker-down test: ${String(check.eventsInLog)} events, ${String(check.messages)} messages, ${String(check.redeliveries)} redelivered`)
    expect(check.missing).toEqual([])
    expect(check.outOfOrder).toEqual([])
    expect(check.mismatched).toEqual([])
  }, 400_000)
})
