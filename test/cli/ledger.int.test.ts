import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { silentLogger } from '../../src/logger.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { startProjector } from '../../src/projections/projector.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/** `satang ledger close` and the periods `satang report ledger` states, run as real processes against a fresh database. */

let database: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
const cwd = mkdtempSync(join(tmpdir(), 'satang-ledger-'))
const satang = (...args: string[]) => runCli(args, { env: envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url }), cwd })

beforeAll(async () => {
  database = await freshDatabase('ledgercli')
  pool = makePostgresPool({ url: database.url }, silentLogger())
})

afterAll(async () => {
  await pool.end()
  await database.drop()
})

describe('satang ledger close', () => {
  it('--help says what a close does and its exit codes', async () => {
    const r = await satang('ledger', 'close', '--help')
    expect(r.code).toBe(0)
    for (const option of ['--date', '--by', '--reason', '--json']) expect(r.stdout).toContain(option)
    expect(r.stdout).toMatch(/Exit codes: 0 closed; 1 refused/)
  })

  it('exit 2 naming each bad option and its rule', async () => {
    const r = await satang('ledger', 'close', '--date', '2026-02-30', '--by', ' ')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--date ')
    expect(r.stderr).toContain('--by must name who closes the period')
    const missing = await satang('ledger', 'close')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/--date is required/)
  })

  it('closes a day once (exit 0), refuses it again and a day not over (exit 1); the report states the closed period and its rule version', async () => {
    const closed = await satang('ledger', 'close', '--date', '2026-01-01', '--by', 'finance@shop.example', '--reason', 'books signed off', '--json')
    expect(closed.stderr).toBe('')
    expect(closed.code).toBe(0)
    expect(JSON.parse(closed.stdout)).toMatchObject({ from_date_bangkok: null, through_date_bangkok: '2026-01-01', rule_version: 1, closed_by: 'finance@shop.example', reason: 'books signed off' })

    const again = await satang('ledger', 'close', '--date', '2026-01-01', '--by', 'finance@shop.example')
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/closed through 2026-01-01 already/)
    const future = await satang('ledger', 'close', '--date', '2099-01-01', '--by', 'finance@shop.example')
    expect(future.code).toBe(1)
    expect(future.stderr).toMatch(/2099-01-01 is not over in Asia\/Bangkok yet/)

    // The projector applies the close to the ledger read model.
    const store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
    const projector = startProjector({ store, pool, log: silentLogger() }, { schema: READ_MODEL_SCHEMA, projections: PROJECTIONS })
    try {
      await projector.caughtUp(60_000)
    } finally {
      await projector.stop()
      await store.close()
    }

    const text = await satang('report', 'ledger')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^Periods \(Asia\/Bangkok business days\): closed through 2026-01-01$/m)
    expect(text.stdout).toMatch(/^\(first\)\s+2026-01-01\s+v1\s+finance@shop\.example\s+\S+Z\s+books signed off$/m)
    expect(text.stdout).toMatch(/^open from 2026-01-02, posted by posting rules v1$/m)
    const json = await satang('report', 'ledger', '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({
      periods: { closed: [{ from_date_bangkok: null, through_date_bangkok: '2026-01-01', rule_version: 1, closed_by: 'finance@shop.example' }], closed_through_bangkok: '2026-01-01', open_from_bangkok: '2026-01-02', open_rule_version: 1, adjustment_lines: 0 },
    })
  })
})
