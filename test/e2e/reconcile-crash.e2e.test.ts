import { spawn } from 'node:child_process'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bangkokDateOf, formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { control } from '../sandbox/support.ts'
import { runCli, SATANG_BIN } from '../support/cli.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../support/satang-with-sandbox.ts'

/**
 * Acceptance (issue 13): the reconcile job, a real process, is killed with SIGKILL in the middle of a
 * run (after its second batch of checked items reached the run stream: the test-only
 * SATANG_FAULT_CRASH_AFTER=ReconcileBatch); the next run resumes it, checks what was left, and
 * completes: every item is counted once, every break appears once, every heal is counted.
 */

let t: SatangWithSandbox
let pool: Pool

const ORDERS = 30
const MISMATCHED = ['C-03', 'C-09', 'C-14', 'C-22', 'C-27']
const DROPPED = ['C-05', 'C-16', 'C-25']

/** Runs `satang` to its end; resolves with the exit code and the signal that ended it. */
const runToEnd = (args: ReadonlyArray<string>, e: NodeJS.ProcessEnv): Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SATANG_BIN, ...args], { env: e, cwd: t.dir, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }))
  })

let today: string

beforeAll(async () => {
  t = await startSatangWithSandbox('rcrash')
  pool = new Pool({ connectionString: t.databaseUrl, max: 2 })
  today = formatCalendarDate(bangkokDateOf(new Date()))
  for (let i = 1; i <= ORDERS; i++) {
    const id = `C-${String(i).padStart(2, '0')}`
    const created = await t.api('POST', '/v1/checkouts', { merchant_order_id: id, order_amount: '100', order_currency: 'THB', order_desc: 'Tea', customer: { merchant_user_id: 'u-1' } })
    expect(created.status).toBe(201)
    const orderId = String(created.json['gateway_order_id'])
    if (DROPPED.includes(id)) t.sandbox.notifier.setFaults({ drop: 5 })
    expect((await control(t.sandbox, 'POST', `/orders/${orderId}/pay`)).status).toBe(200)
    await t.sandbox.notifier.idle()
    if (MISMATCHED.includes(id)) expect((await control(t.sandbox, 'POST', `/orders/${orderId}/force`, { order_amount: '101.00' })).status).toBe(200)
  }
}, 240_000)

afterAll(async () => {
  await pool.end()
  await t.stop()
})

describe('the reconcile job killed with SIGKILL mid-run', () => {
  it('is resumed by the next run: every item counted once, each break once, every heal counted', async () => {
    const killed = await runToEnd(['reconcile', '--date', today, '--no-progress'], t.toolEnv({ SATANG_FAULT_CRASH_AFTER: 'ReconcileBatch' }))
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

    const resumed = await runCli(['reconcile', '--date', today, '--json', '--no-progress'], { env: t.toolEnv(), cwd: t.dir })
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
    for (const id of DROPPED) expect((await t.api('GET', `/v1/payments/${id}`)).json).toMatchObject({ paid: true, status: { code: 'PS' } })
  })
})
