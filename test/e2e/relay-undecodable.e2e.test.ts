import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { RELAY_CHECKPOINTS_TABLE, readRelayStatus } from '../../src/jobs/index.ts'
import { READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { runCli } from '../support/cli.ts'
import { consumeTopic, kafkaSkipReason, startTestBroker, type TestBroker } from '../support/kafka.ts'
import type { EventStoreDatabase } from '../adapters/http/database.ts'
import { startSatangProcess, type SatangProcess } from '../support/process.ts'
import { appendOrders, eventually, migratedLog, readWholeLog, relayEnv } from './relay-support.ts'

/**
 * The relay never passes over an event it cannot vouch for: an event in the log whose data does not
 * decode with its type's codec (written by a newer satang, or edited by hand) stops the relay before
 * it. The check runs on the relay's producer thread (checked-records.ts), request by request, so this
 * runs the `satang relay` process against a real broker, with the bad event in the middle of a batch
 * and of a publish of several requests: everything before it arrives once, in order; nothing after it;
 * the checkpoint stays just before it; the error names it, in the log and in `relay --status`.
 */

const skipReason = await kafkaSkipReason()
if (skipReason !== undefined) console.info(`Kafka relay undecodable-event test skipped: ${skipReason}`)

const topic = `satang.test.undecodable.${randomUUID().slice(0, 8)}`
let broker: TestBroker
let db: EventStoreDatabase
let pool: Pool
let store: EventStore
let relay: SatangProcess | undefined

const env = (): NodeJS.ProcessEnv =>
  relayEnv(db, broker.brokers, topic, {
    SATANG_KAFKA_TOPIC_PARTITIONS: '3',
    // A batch of 1,000 events sent as requests of at most 16 KiB: the bad event is in the middle of both.
    SATANG_KAFKA_BATCH_SIZE: '1000',
    SATANG_KAFKA_BATCH_BYTES: '16384',
    SATANG_KAFKA_RETRY_BASE_MS: '200',
    SATANG_KAFKA_RETRY_MAX_MS: '1000',
  })

describe.skipIf(skipReason !== undefined)('the relay before an event whose data does not decode (satang relay, a real broker)', () => {
  beforeAll(async () => {
    broker = await startTestBroker()
    db = await migratedLog('relaybad')
    pool = db.pool
    store = db.store
  }, 120_000)

  afterAll(async () => {
    await relay?.stop('SIGKILL')
    await db.drop()
    await broker.stop()
  })

  it('publishes every event before it once, in order, and none after it; the checkpoint stays before it; the error names it', async () => {
    await appendOrders(store, 420, 'before')
    // An OrderCreated whose amount is not satang: the store takes any JSON, the codec does not.
    const appended = await store.append('order-140000000000000001-BAD-1', [{ eventId: randomUUID(), type: 'OrderCreated', schemaVersion: 1, data: { amount: '4.20' }, metadata: { correlationId: 'test-bad', causationId: 'test-bad', recordedAt: new Date().toISOString(), source: 'api_request' } }], 'no_stream')()
    expect(E.isRight(appended)).toBe(true)
    await appendOrders(store, 300, 'after')
    const events = await readWholeLog(store)
    const badAt = events.findIndex((e) => e.streamName === 'order-140000000000000001-BAD-1')
    const bad = events[badAt]
    const lastGood = events[badAt - 1]
    if (bad === undefined || lastGood === undefined) throw new Error('the bad event is not in the log after others')
    const before = events.slice(0, badAt)

    // Every change of the checkpoint row's failing flag, as it happens (a trigger of the test's own):
    // once stopped before the bad event, the relay must stay failing through its retries, not read
    // "publishing" for a moment at each one.
    await pool.query(`create table "${READ_MODEL_SCHEMA}".failing_seen (seq bigserial primary key, failing boolean not null)`)
    await pool.query(`create function "${READ_MODEL_SCHEMA}".note_failing() returns trigger language plpgsql as $$
      begin insert into "${READ_MODEL_SCHEMA}".failing_seen (failing) values (new.failing); return new; end $$`)
    await pool.query(`create trigger note_failing after insert or update of failing on "${READ_MODEL_SCHEMA}".${RELAY_CHECKPOINTS_TABLE} for each row execute function "${READ_MODEL_SCHEMA}".note_failing()`)

    relay = startSatangProcess(['relay'], { env: env() })
    await eventually('the relay stopped before the bad event', async () => (await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)).lastError?.kind === 'undecodable_event', 60_000)
    // It retries from its checkpoint and stops there again, each time.
    await eventually('the relay stopped before it twice', async () => (relay?.stderr().match(/stopped before an event it cannot publish/g) ?? []).length >= 2, 30_000)

    const status = await readRelayStatus({ store, pool }, READ_MODEL_SCHEMA, topic)
    expect(status.position).toBe(lastGood.position)
    expect(status.eventsBehind).toBe(events.length - badAt)
    const named = `order-140000000000000001-BAD-1 revision 0 at position ${bad.position}: OrderCreated v1: invalid data`
    expect(status.lastError?.message).toContain(named)
    expect(status.lastError?.message).toMatch(/amount/)
    expect(relay.stderr()).toContain(named)
    const cli = await runCli(['relay', '--status', '--json'], { env: env() })
    expect(JSON.parse(cli.stdout)).toMatchObject({ state: 'failing', last_error: { kind: 'undecodable_event' } })
    const seen = (await pool.query<{ failing: boolean }>(`select failing from "${READ_MODEL_SCHEMA}".failing_seen order by seq`)).rows.map((r) => r.failing)
    const firstFailing = seen.indexOf(true)
    expect(firstFailing).toBeGreaterThanOrEqual(0)
    expect(seen.slice(firstFailing)).not.toContain(false)

    const messages = await consumeTopic(broker.brokers, topic)
    const ids = messages.map((m) => m.headers['ce_id'])
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(ids)).toEqual(new Set(before.map((e) => e.eventId)))
    // Each partition in log order.
    const order = new Map(before.map((e, i) => [e.eventId, i]))
    const byPartition = new Map<number, number[]>()
    for (const m of messages) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), order.get(m.headers['ce_id'] ?? '') ?? -1])
    for (const indexes of byPartition.values()) expect(indexes).toEqual([...indexes].sort((a, b) => a - b))
  }, 180_000)
})
