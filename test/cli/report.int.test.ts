import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { silentLogger } from '../../src/logger.ts'
import { READ_MODEL_SCHEMA } from '../../src/main.ts'
import { ledgerProjection } from '../../src/projections/ledger/projection.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { ledgerScenario } from '../domain/ledger/scenario.ts'
import { applyInTransaction, createProjectionTables } from '../projections/support.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/** `satang report ledger` run as a real process against a fresh database. */

let database: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
const cwd = mkdtempSync(join(tmpdir(), 'satang-report-'))
const report = (...args: string[]) => runCli(['report', 'ledger', ...args], { env: envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url }), cwd })

beforeAll(async () => {
  database = await freshDatabase('report')
  pool = makePostgresPool({ url: database.url }, silentLogger())
})

afterAll(async () => {
  await pool.end()
  await database.drop()
})

describe('satang report ledger: usage', () => {
  it('--help describes the options and exit codes', async () => {
    const r = await report('--help')
    expect(r.code).toBe(0)
    for (const option of ['--date', '--currency', '--channel', '--json', '--csv']) expect(r.stdout).toContain(option)
    expect(r.stdout).toMatch(/Exit codes: 0 printed and balanced; 1 the ledger does not exist yet/)
  })

  it('exit 2 naming each bad option and its rule', async () => {
    const r = await report('--date', '2026-13-01', '--currency', 'baht')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--date month must be 01 to 12')
    expect(r.stderr).toContain('--currency must be a three-letter currency code such as THB')
    const both = await report('--json', '--csv')
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--json and --csv exclude each other/)
    expect((await report('--bogus')).code).toBe(2)
  })
})

describe('satang report ledger: data', () => {
  it('exit 1 with what to do when the read model does not exist yet', async () => {
    const r = await report()
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/the ledger read model does not exist yet .*run satang migrate \/ satang up first/)
  })

  it('prints the trial balance with a totals line: debits = credits', async () => {
    await createProjectionTables(pool, READ_MODEL_SCHEMA, ledgerProjection)
    for (const batch of ledgerScenario()) await applyInTransaction(pool, READ_MODEL_SCHEMA, ledgerProjection, batch)

    const r = await report()
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^Trial balance, all entries\n/)
    expect(r.stdout).toMatch(/^ACCOUNT\s+CHANNEL\s+CURRENCY\s+DEBIT\s+CREDIT\s+BALANCE$/m)
    expect(r.stdout).toMatch(/^gateway_receivable\s+svc\.thaiqr\.pay\s+THB\s+250\.00\s+40\.00\s+210\.00$/m)
    expect(r.stdout).toMatch(/^subscription_sales\s+subscription\s+THB\s+0\.00\s+199\.00\s+-199\.00$/m)
    expect(r.stdout).toMatch(/^TOTAL\s+THB\s+590\.00\s+590\.00\s+0\.00$/m)
    expect(r.stdout).toMatch(/^THB: debits = credits \(590\.00\)$/m)
  })

  it('--json gives the body of GET /v1/ledger/balances; --date the end of a Bangkok day', async () => {
    const r = await report('--json', '--date', '2026-01-05')
    expect(r.code).toBe(0)
    const json = JSON.parse(r.stdout) as Record<string, unknown>
    expect(json['as_of']).toEqual({ date_bangkok: '2026-01-05', until_utc: '2026-01-05T17:00:00.000Z' })
    expect(json['balanced']).toBe(true)
    expect((json['balances'] as ReadonlyArray<Record<string, unknown>>).map((b) => [b['account'], b['channel'], b['balance_satang']])).toEqual([
      ['gateway_receivable', 'svc.thaiqr.pay', 25000],
      ['sales', 'svc.thaiqr.pay', -25000],
    ])
  })

  it('--csv prints a header and one row per account, channel and currency', async () => {
    const r = await report('--csv', '--channel', 'unknown')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(
      [
        'account,normal_balance,channel,currency,debit_satang,credit_satang,balance_satang,debit,credit,balance',
        'gateway_receivable,debit,unknown,THB,0,100,-100,0.00,1.00,-1.00',
        'refunds,debit,unknown,THB,100,0,100,1.00,0.00,1.00',
        '',
      ].join('\n'),
    )
  })
})
