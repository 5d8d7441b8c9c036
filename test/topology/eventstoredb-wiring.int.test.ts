import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM } from '../sandbox/support.ts'
import { runCli } from '../support/cli.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'
import { topologyDatabase, type TopologyDatabase } from './database.ts'

/**
 * SATANG_EVENT_STORE=eventstoredb selects EventStoreDB for the whole product, not only in its contract
 * suite (which, like the topology test, runs against a real server when EVENTSTOREDB_URL is set). Shown
 * here without a server, on an address where none listens: every part goes to EventStoreDB for the log
 * and to PostgreSQL only for the read models — migrate creates no event table, the API cannot record
 * (503) and /healthz says why, the projector's status fails on the log, audit verify says it checks the
 * PostgreSQL store only.
 */

let db: TopologyDatabase
let dir: string
let esdbUrl: string
const running: SatangProcess[] = []

beforeAll(async () => {
  db = await topologyDatabase('esdbwiring')
  dir = mkdtempSync(join(tmpdir(), 'satang-esdb-wiring-'))
  writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
  writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
  esdbUrl = `esdb://127.0.0.1:${String(await freePort())}?tls=false`
})
afterAll(async () => {
  for (const p of running) await p.stop('SIGKILL')
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
  envWithoutSatangSettings({
    SATANG_LOG_LEVEL: 'error',
    SATANG_DATABASE_URL: db.urlFor('tool'),
    SATANG_EVENT_STORE: 'eventstoredb',
    SATANG_EVENTSTOREDB_URL: esdbUrl,
    SATANG_DATA_DIR: dir,
    ...extra,
  })

describe('SATANG_EVENT_STORE=eventstoredb wires EventStoreDB into every part', () => {
  it('satang migrate creates the read models in PostgreSQL and no event table there', async () => {
    const migrated = await runCli(['migrate'], { env: env(), cwd: dir })
    expect(migrated.code, migrated.stderr).toBe(0)
    const c = new Client({ connectionString: db.adminUrl })
    await c.connect()
    const schemas = await c.query<{ nspname: string }>(`select nspname from pg_namespace where nspname in ('satang', 'eventstore') order by 1`).finally(() => c.end())
    expect(schemas.rows.map((r) => r.nspname)).toEqual(['satang'])
  })

  it('satang project --status reads the log from EventStoreDB (and fails when it is out of reach); audit verify names what it checks', async () => {
    const status = await runCli(['project', '--status'], { env: env(), cwd: dir })
    expect(status.code).toBe(3)
    expect(status.stderr).toContain('reading the event log failed')
    const audit = await runCli(['audit', 'verify'], { env: env(), cwd: dir })
    expect(audit.code).toBe(2)
    expect(audit.stderr).toContain('audit verify checks the PostgreSQL event store only; SATANG_EVENT_STORE is eventstoredb')
  })

  it('the api role records into EventStoreDB: with it out of reach a payment is 503 and /healthz names the event store', async () => {
    const port = await freePort()
    const api = startSatangProcess(['up', '--role', 'api'], {
      cwd: dir,
      env: env({
        SATANG_HTTP_PORT: String(port),
        SATANG_API_TOKENS: 'wiring:wiring-token-0123456789abcdef:payments:write+read',
        SATANG_GATEWAY_BASE_URL: `http://127.0.0.1:${String(await freePort())}`,
        SATANG_MERCHANT_ID: MERCHANT_ID,
        SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
        SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
      }),
    })
    running.push(api)
    await api.waitFor(/up \(role api\)\. Ctrl-C stops\./)
    const created = await fetch(`http://127.0.0.1:${String(port)}/v1/payments`, {
      method: 'POST',
      headers: { authorization: 'Bearer wiring-token-0123456789abcdef', 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'svc.thaiqr.pay', merchant_order_id: 'ESDB-1', order_amount: '10.00', order_currency: 'THB', order_desc: 'wiring', payment_method: 'THAI_QR', customer: { merchant_user_id: 'u-1' } }),
    })
    expect(created.status).toBe(503)
    expect(await created.json()).toMatchObject({ error: 'unavailable' })
    const health = await fetch(`http://127.0.0.1:${String(port)}/healthz`)
    expect(health.status).toBe(503)
    const body = (await health.json()) as { checks: Record<string, string> }
    expect(body.checks['database']).toBe('ok')
    expect(body.checks['event_store']).toMatch(/^the event store failed|did not answer/)
    expect(await api.stop()).toBe(0)
  })
})
