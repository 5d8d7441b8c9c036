import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client } from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../adapters/http/database.ts'
import { runCli } from '../support/cli.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'

/**
 * Process roles (issue 12): `satang up --role api` and `satang up --role projector` as two real
 * processes over one database. The API process runs no projector: a payment created through it
 * reaches the read models only once the projector process runs, and the API then answers from them.
 */

const TOKEN = 'roles-e2e-token-0123456789abcdef'
let db: Awaited<ReturnType<typeof freshDatabase>>
const dirs: string[] = []
const tempDir = (label: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `satang-${label}-`))
  dirs.push(dir)
  return dir
}
const launched: SatangProcess[] = []
const up = (role: string, env: NodeJS.ProcessEnv): SatangProcess => {
  const proc = startSatangProcess(['up', '--role', role], { env, cwd: tempDir(`cwd-${role}`) })
  launched.push(proc)
  return proc
}

beforeAll(async () => {
  db = await freshDatabase('roles')
})
afterEach(async () => {
  for (const proc of launched.splice(0)) if (proc.child.exitCode === null && proc.child.signalCode === null) await proc.stop('SIGKILL')
})
afterAll(async () => {
  await db.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const envFor = (extra: Record<string, string>): NodeJS.ProcessEnv =>
  envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: db.url, SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`, ...extra })

const ordersRow = async (merchantOrderId: string): Promise<{ status_code: string | null } | undefined> => {
  const c = new Client({ connectionString: db.url })
  await c.connect()
  try {
    const r = await c.query<{ status_code: string | null }>('select status_code from satang.orders where merchant_order_id = $1', [merchantOrderId])
    return r.rows[0]
  } finally {
    await c.end()
  }
}

describe('satang up --role', () => {
  it('api and projector run as two processes over one database: a payment made through the first reaches the read models through the second', async () => {
    const apiPort = await freePort()
    const api = up('api', envFor({ SATANG_HTTP_PORT: String(apiPort), SATANG_SANDBOX_PORT: String(await freePort()), SATANG_DATA_DIR: tempDir('api') }))
    await api.waitFor(/up \(role api\)\. Ctrl-C stops\./)
    expect(api.stdout()).toContain('merchant API at')
    expect(api.stdout()).not.toContain('kept current by the projector')

    const created = await fetch(`http://127.0.0.1:${String(apiPort)}/v1/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'svc.thaiqr.pay', merchant_order_id: 'ROLES-1', order_amount: '10.00', order_currency: 'THB', order_desc: 'roles', payment_method: 'THAI_QR', customer: { merchant_user_id: 'u-1' } }),
    })
    expect(created.status).toBe(201)
    // No projector in the API process: the read model stays empty, and the API answers from the log.
    await sleep(1_000)
    expect(await ordersRow('ROLES-1')).toBeUndefined()
    const fromLog = await fetch(`http://127.0.0.1:${String(apiPort)}/v1/payments/ROLES-1`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(await fromLog.json()).toMatchObject({ merchant_order_id: 'ROLES-1', served_from: 'event_log' })

    const projectorPort = await freePort()
    const projector = up('projector', envFor({ SATANG_HTTP_PORT: String(projectorPort), SATANG_DATA_DIR: tempDir('projector') }))
    await projector.waitFor(/up \(role projector\)\. Ctrl-C stops\./)
    expect(projector.stdout()).toContain('kept current by the projector')
    expect(projector.stdout()).not.toContain('merchant API at')
    const health = await fetch(`http://127.0.0.1:${String(projectorPort)}/healthz`)
    expect(health.status).toBe(200)
    // The projector process serves no merchant API.
    expect((await fetch(`http://127.0.0.1:${String(projectorPort)}/v1/payments/ROLES-1`)).status).toBe(404)

    let row: { status_code: string | null } | undefined
    for (let i = 0; i < 300 && row === undefined; i++) {
      row = await ordersRow('ROLES-1')
      if (row === undefined) await sleep(50)
    }
    expect(row).toBeDefined()
    const fromReadModel = await fetch(`http://127.0.0.1:${String(apiPort)}/v1/payments/ROLES-1`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(await fromReadModel.json()).toMatchObject({ merchant_order_id: 'ROLES-1', served_from: 'read_model' })

    expect(await projector.stop()).toBe(0)
    expect(await api.stop()).toBe(0)
    expect(api.stdout()).toContain('satang: stopped.')
  })

  it('refuses an unknown role, and a separate role without a shared database, naming the rule (exit 2)', async () => {
    const bad = await runCli(['up', '--role', 'everything'], { env: envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn' }), cwd: tempDir('bad-role') })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--role must be one of api, projector, relay, scheduler or all')
    const noDb = await runCli(['up', '--role', 'projector'], { env: envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn' }), cwd: tempDir('no-db') })
    expect(noDb.code).toBe(2)
    expect(noDb.stderr).toContain('set SATANG_DATABASE_URL')
  })

  it('--help names every role', async () => {
    const help = await runCli(['up', '--help'])
    expect(help.code).toBe(0)
    for (const role of ['api', 'projector', 'relay', 'scheduler', 'all']) expect(help.stdout).toMatch(new RegExp(`^  ${role} `, 'm'))
  })
})
