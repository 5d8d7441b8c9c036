import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { readCheckpoints } from '../../src/projections/checkpoints.ts'
import { compareWithRebuild } from '../../src/projections/rebuild.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings, startSatangProcess } from '../support/process.ts'
import { appendEvent, interleave, orderEventsOf, orderPlanArb } from '../projections/scenarios.ts'
import { otherStreamsForProjections } from '../projections/mixed-streams.ts'

/**
 * Acceptance (issue 6): the projector, a real `satang project` process, is killed with SIGKILL in the
 * middle of a batch (the test-only SATANG_FAULT_CRASH_AFTER=ProjectionBatch: one projection has written
 * its part of the third batch and not committed; others may have committed theirs). After a restart
 * every read-model table is identical, row for row, to a full rebuild from the log.
 */

const log = silentLogger()
let db: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
let store: EventStore

const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
  envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: db.url, SATANG_PROJECTOR_BATCH_SIZE: '150', ...extra })

beforeAll(async () => {
  db = await freshDatabase('projcrash')
  const migrated = await runCli(['migrate'], { env: env() })
  expect(migrated.code, migrated.stderr).toBe(0)
  pool = makePostgresPool({ url: db.url, poolMax: 8 }, log)
  store = makePostgresEventStore({ pool, log }, { schema: 'eventstore' })
  // ~2,000 events: orders with random observations, plus refunds and subscriptions, interleaved.
  const plans = fc.sample(orderPlanArb, { numRuns: 250, seed: 20261122 })
  const orders = plans.map((plan, i) => orderEventsOf(i + 1, plan))
  const streams = [...orders.map((o) => o.events.map((event) => ({ stream: o.stream, event }))), ...otherStreamsForProjections(orders)]
  const sequence = interleave(streams, fc.sample(fc.nat(), { numRuns: 500, seed: 7 }))
  for (const a of sequence) await appendEvent(store, a.stream, a.event, randomUUID())
}, 120_000)

afterAll(async () => {
  await store.close()
  await pool.end()
  await db.drop()
})

const head = async (): Promise<string> => {
  const { rows } = await pool.query<{ p: string }>(`select lpad(tx_id::text, 20, '0') || '-' || lpad(position::text, 20, '0') as p from eventstore.events order by tx_id desc, position desc limit 1`)
  const p = rows[0]?.p
  if (p === undefined) throw new Error('empty log')
  return p
}

describe('projector crash (SIGKILL mid-batch) and restart', () => {
  it('leaves every read-model table identical to a full rebuild from the log', async () => {
    const crashing = startSatangProcess(['project'], { env: env({ SATANG_FAULT_CRASH_AFTER: 'ProjectionBatch' }) })
    await crashing.stop('SIGCONT') // resolves when it exits on its own
    expect(crashing.child.signalCode).toBe('SIGKILL')
    expect(crashing.stderr() + crashing.stdout()).toContain('ProjectionBatch')

    // It died part-way: nothing is at the end of the log yet.
    const end = await head()
    const before = await readCheckpoints(pool, READ_MODEL_SCHEMA, PROJECTIONS.map((p) => p.name))
    for (const cp of before.values()) expect(cp.position === null || cp.position < end).toBe(true)
    expect([...before.values()].some((cp) => cp.position !== null)).toBe(true)

    const projector = startSatangProcess(['project'], { env: env() })
    try {
      await projector.waitFor(/projector running/, 30_000)
      const deadline = Date.now() + 60_000
      for (;;) {
        const cps = await readCheckpoints(pool, READ_MODEL_SCHEMA, PROJECTIONS.map((p) => p.name))
        if ([...cps.values()].every((c) => c.position === end)) break
        const failed = [...cps.values()].find((c) => c.failure !== null)
        if (failed !== undefined) throw new Error(`projection ${failed.name} failed: ${failed.failure?.message ?? ''}`)
        if (Date.now() > deadline) throw new Error(`projections did not catch up: ${JSON.stringify([...cps.values()].map((c) => [c.name, c.position]))}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    } finally {
      expect(await projector.stop('SIGTERM')).toBe(0)
    }

    for (const projection of PROJECTIONS) {
      const { result, differences } = await compareWithRebuild({ store, pool, log }, { schema: READ_MODEL_SCHEMA, projection })
      expect(result.position).toBe(end)
      for (const d of differences) expect({ projection: projection.name, ...d }).toEqual({ projection: projection.name, table: d.table, onlyLive: 0, onlyRebuilt: 0 })
      // The tables are not empty: the comparison compared something.
      const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from "${READ_MODEL_SCHEMA}"."${projection.tables[0] ?? ''}"`)
      expect(rows[0]?.n ?? 0).toBeGreaterThan(0)
    }

    // The operator's command agrees.
    const verify = await runCli(['project', '--verify', '--json'], { env: env() })
    expect(verify.code, verify.stderr).toBe(0)
    expect((JSON.parse(verify.stdout) as Array<{ identical: boolean }>).every((r) => r.identical)).toBe(true)
  }, 240_000)
})
