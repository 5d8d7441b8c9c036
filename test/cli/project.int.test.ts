import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { startProjector } from '../../src/projections/projector.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { appendEvent, orderEventsOf } from '../projections/scenarios.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/** `satang project` on the real CLI: usage errors, --status (text and JSON) with a projection stopped on an unknown event, --rebuild, --verify. */
const log = silentLogger()
let db: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
let store: EventStore
const env = (): NodeJS.ProcessEnv => envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: db.url })

beforeAll(async () => {
  db = await freshDatabase('projcli')
  const migrated = await runCli(['migrate'], { env: env() })
  expect(migrated.code, migrated.stderr).toBe(0)
  expect(migrated.stdout).toContain('read models 0001_projection_checkpoints, projection_orders_v1, projection_ledger_v1')
  pool = makePostgresPool({ url: db.url, poolMax: 8 }, log)
  store = makePostgresEventStore({ pool, log }, { schema: 'eventstore' })
})
afterAll(async () => {
  await store.close()
  await pool.end()
  await db.drop()
})

describe('satang project (the real CLI)', () => {
  it('refuses bad usage, naming the problem (exit 2)', async () => {
    const unknown = await runCli(['project', '--rebuild', 'nope'], { env: env() })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('--rebuild: no projection named "nope"; the projections are orders, ledger, refunds, subscriptions, audit_log')
    const both = await runCli(['project', '--status', '--rebuild'], { env: env() })
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--status and --rebuild cannot be combined')
    const json = await runCli(['project', '--json'], { env: env() })
    expect(json.code).toBe(2)
    expect(json.stderr).toContain('--json goes with --status, --rebuild or --verify')
    const help = await runCli(['project', '--help'], { env: env() })
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/--rebuild \[name\][\s\S]*--verify \[name\]/)
  })

  it('--status names the projection stopped on an unknown event, its stream and position (exit 1); --rebuild and --verify work on the others', async () => {
    const o = orderEventsOf(1, { amount: 10_000n, service: 'qr_promptpay', observations: [] })
    for (const e of o.events) await appendEvent(store, o.stream, e)
    const bad = await store.append(o.stream, [{ eventId: randomUUID(), type: 'PaymentTeleported', schemaVersion: 1, data: {}, metadata: { correlationId: 'c', causationId: 'c', recordedAt: new Date().toISOString(), source: 'operator' } }], 'any')()
    if (E.isLeft(bad)) throw new Error('append failed')
    const projector = startProjector({ store, pool, log }, { schema: READ_MODEL_SCHEMA, projections: PROJECTIONS, retryFailedOnStart: false })
    try {
      await projector.caughtUp(30_000)
    } finally {
      await projector.stop()
    }

    const text = await runCli(['project', '--status'], { env: env() })
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(/^orders\s+FAILED\s+1 events/m)
    expect(text.stdout).toContain(`${o.stream} revision 3 at position ${bad.right.position}: unknown event type PaymentTeleported`)
    const json = await runCli(['project', '--status', '--json'], { env: env() })
    expect(json.code).toBe(1)
    const statuses = JSON.parse(json.stdout) as ReadonlyArray<{ name: string; state: string; events_behind: number; failure: { stream: string; position: string } | null }>
    // Every projection that reads order streams stopped there; the others are caught up.
    const byName = Object.fromEntries(statuses.map((s) => [s.name, s]))
    for (const name of ['orders', 'ledger', 'audit_log']) expect(byName[name]).toMatchObject({ state: 'failed', events_behind: 1, failure: { stream: o.stream, position: bad.right.position } })
    for (const name of ['refunds', 'subscriptions']) expect(byName[name]).toMatchObject({ state: 'running', events_behind: 0, failure: null })

    // A rebuild of a projection that meets the event stops with the same reason and changes nothing live.
    const rebuild = await runCli(['project', '--rebuild', 'orders'], { env: env() })
    expect(rebuild.code).toBe(3)
    expect(rebuild.stderr).toContain('rebuild of orders stopped')
    expect(rebuild.stderr).toContain('unknown event type PaymentTeleported')
    const refunds = await runCli(['project', '--rebuild', 'refunds', '--json'], { env: env() })
    expect(refunds.code, refunds.stderr).toBe(0)
    expect(JSON.parse(refunds.stdout)).toEqual([expect.objectContaining({ projection: 'refunds', events: 0 })])
    const verify = await runCli(['project', '--verify', 'subscriptions'], { env: env() })
    expect(verify.code, verify.stderr).toBe(0)
    expect(verify.stdout).toContain('subscriptions matches a rebuild')
  })
})
