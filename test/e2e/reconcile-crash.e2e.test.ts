import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sandbox } from '../../src/adapters/sandbox/sandbox.ts'
import { decodeConfig } from '../../src/config.ts'
import { bangkokDateOf, formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { silentLogger } from '../../src/logger.ts'
import { startSatang, type Running } from '../../src/main.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { control, GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, startSandbox } from '../adapters/sandbox/support.ts'
import { runCli, SATANG_BIN } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/**
 * Acceptance (issue 13): the reconcile job, a real process, is killed with SIGKILL in the middle of a
 * run (after its second batch of checked items reached the run stream: the test-only
 * SATANG_FAULT_CRASH_AFTER=ReconcileBatch); the next run resumes it, checks what was left, and
 * completes: every item is counted once, every break appears once, every heal is counted.
 */

const TOKEN = 'reconcile-crash-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'satang-reconcile-crash-'))
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox
let satang: Running
let pool: Pool

const ORDERS = 30
const MISMATCHED = ['C-03', 'C-09', 'C-14', 'C-22', 'C-27']
const DROPPED = ['C-05', 'C-16', 'C-25']

const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${satang.httpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv =>
  envWithoutSatangSettings({
    SATANG_LOG_LEVEL: 'warn',
    SATANG_DATABASE_URL: db.url,
    SATANG_GATEWAY_BASE_URL: sandbox.url,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
    SATANG_DATA_DIR: dir,
    ...extra,
  })

/** Runs `satang` to its end; resolves with the exit code and the signal that ended it. */
const runToEnd = (args: ReadonlyArray<string>, e: NodeJS.ProcessEnv): Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SATANG_BIN, ...args], { env: e, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }))
  })

let today: string

beforeAll(async () => {
  db = await freshDatabase('rcrash')
  sandbox = await startSandbox()
  writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
  writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
  const config = decodeConfig({
    SATANG_DATABASE_URL: db.url,
    SATANG_GATEWAY_BASE_URL: sandbox.url,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
    SATANG_HTTP_PORT: '0',
    SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read+audit`,
    SATANG_DATA_DIR: dir,
    SATANG_LOG_LEVEL: 'silent',
    SATANG_RECONCILE_SCHEDULER: 'off',
  })
  if (E.isLeft(config)) throw new Error(JSON.stringify(config.left))
  satang = await startSatang(config.right, silentLogger())
  pool = new Pool({ connectionString: db.url, max: 2 })
  today = formatCalendarDate(bangkokDateOf(new Date()))
  for (let i = 1; i <= ORDERS; i++) {
    const id = `C-${String(i).padStart(2, '0')}`
    const created = await api('POST', '/v1/checkouts', { merchant_order_id: id, order_amount: '100', order_currency: 'THB', order_desc: 'Tea', customer: { merchant_user_id: 'u-1' } })
    expect(created.status).toBe(201)
    const orderId = String(created.json['gateway_order_id'])
    if (DROPPED.includes(id)) sandbox.notifier.setFaults({ drop: 5 })
    expect((await control(sandbox, 'POST', `/orders/${orderId}/pay`)).status).toBe(200)
    await sandbox.notifier.idle()
    if (MISMATCHED.includes(id)) expect((await control(sandbox, 'POST', `/orders/${orderId}/force`, { order_amount: '101.00' })).status).toBe(200)
  }
}, 240_000)

afterAll(async () => {
  await satang.stop()
  await pool.end()
  await sandbox.close()
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('the reconcile job killed with SIGKILL mid-run', () => {
  it('is resumed by the next run: every item counted once, each break once, every heal counted', async () => {
    const killed = await runToEnd(['reconcile', '--date', today, '--no-progress'], env({ SATANG_FAULT_CRASH_AFTER: 'ReconcileBatch' }))
    expect(killed.signal, killed.stderr).toBe('SIGKILL')

    // Half a run in the log: started, two batches of five items, not completed.
    const { rows: streams } = await pool.query<{ stream_name: string; types: string[] }>(
      `select stream_name, array_agg(type order by stream_revision) as types from eventstore.events where stream_name like 'reconciliation-%' group by stream_name`,
    )
    expect(streams).toHaveLength(1)
    const types = streams[0]?.types ?? []
    expect(types[0]).toBe('ReconciliationRunStarted')
    expect(types.filter((t) => t === 'ReconciliationItemsChecked')).toHaveLength(2)
    expect(types).not.toContain('ReconciliationRunCompleted')
    const runStream = streams[0]?.stream_name ?? ''

    const resumed = await runCli(['reconcile', '--date', today, '--json', '--no-progress'], { env: env(), cwd: dir })
    expect(resumed.code, resumed.stderr).toBe(1)
    const report = JSON.parse(resumed.stdout) as {
      run_id: string
      resumed: boolean
      verdict: string
      counts: { checked: number; matched: number; healed: number; open_breaks: number; breaks: Record<string, number> }
      breaks: ReadonlyArray<{ class: string; item: { id: string } }>
      healed: ReadonlyArray<{ item: { id: string } }>
    }
    expect(runStream.endsWith(report.run_id)).toBe(true)
    expect(report).toMatchObject({ resumed: true, verdict: 'breaks' })
    expect(report.counts).toMatchObject({ checked: ORDERS, healed: DROPPED.length, open_breaks: MISMATCHED.length, matched: ORDERS - DROPPED.length - MISMATCHED.length, breaks: { amount_mismatch: MISMATCHED.length } })
    expect(report.breaks.map((b) => b.item.id).sort()).toEqual(MISMATCHED)
    expect(report.healed.map((h) => h.item.id).sort()).toEqual(DROPPED)

    // In the log and the read model: each item checked once, each break detected once.
    const { rows: events } = await pool.query<{ type: string; data: { items?: ReadonlyArray<{ id: string }> } }>(`select type, data from eventstore.events where stream_name = $1 order by stream_revision`, [runStream])
    const checkedIds = events.flatMap((e) => (e.type === 'ReconciliationItemsChecked' ? (e.data.items ?? []).map((i) => i.id) : []))
    expect(checkedIds).toHaveLength(ORDERS)
    expect(new Set(checkedIds).size).toBe(ORDERS)
    expect(events.filter((e) => e.type === 'ReconciliationBreakDetected')).toHaveLength(MISMATCHED.length)
    expect(events.filter((e) => e.type === 'ReconciliationItemHealed')).toHaveLength(DROPPED.length)
    const { rows: breaks } = await pool.query<{ item_id: string; n: number }>(`select item_id, count(*)::int as n from satang.reconciliation_breaks group by item_id order by item_id`)
    expect(breaks).toEqual(MISMATCHED.map((id) => ({ item_id: id, n: 1 })))
    const { rows: runs } = await pool.query<{ status: string; checked: number }>(`select status, checked from satang.reconciliation_runs`)
    expect(runs).toEqual([{ status: 'completed', checked: ORDERS }])
    for (const id of DROPPED) expect((await api('GET', `/v1/payments/${id}`)).json).toMatchObject({ paid: true, status: { code: 'PS' } })
  })
})
