import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../support/satang-with-sandbox.ts'

/**
 * Anchors in a running satang: the scheduler role writes one shortly after start and every
 * SATANG_ANCHOR_INTERVAL_MINUTES, `satang reconcile` writes one after its run, the generated anchor key
 * lives in the data directory (never read by the API), SATANG_ANCHOR_FILE gets every anchor, and
 * `satang audit verify` finds the log matching the latest anchor.
 */

let t: SatangWithSandbox
let pool: Pool
const anchorFile = (): string => join(t.dir, 'anchors.jsonl')

type AnchorRow = { seq: string; reason: string; events: string }
const anchors = async (): Promise<ReadonlyArray<AnchorRow>> =>
  (await pool.query<AnchorRow>(`select a.seq::text, a.reason, a.events::text from eventstore.anchors a order by a.seq`)).rows

const until = async <A>(what: string, f: () => Promise<A | undefined>, timeoutMs = 45_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const a = await f()
    if (a !== undefined) return a
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

beforeAll(async () => {
  t = await startSatangWithSandbox('anchorjob', { SATANG_ANCHOR_INTERVAL_MINUTES: '1' })
  pool = new Pool({ connectionString: t.databaseUrl, max: 2 })
}, 120_000)

afterAll(async () => {
  await pool.end()
  await t.stop()
})

describe('anchors written by satang', () => {
  it('the scheduler role anchors the log shortly after start, signed with a key generated into the data directory', async () => {
    const r = await t.api('POST', '/v1/checkouts', { merchant_order_id: 'ANCHOR-1', order_amount: '80', order_currency: 'THB', order_desc: 'Noodles', customer: { merchant_user_id: 'u-2' } })
    expect(r.status).toBe(201)
    // The first tick comes 10 s after start; it finds the payment's events once they are readable (else the next tick, a minute later).
    const first = await until('the first anchor', async () => (await anchors()).find((a) => a.reason === 'scheduled'), 100_000)
    expect(Number(first.events)).toBeGreaterThan(0)
    expect(existsSync(join(t.dir, 'anchor-private.pem'))).toBe(true)
    expect(existsSync(join(t.dir, 'anchor-public.pem'))).toBe(true)
  }, 120_000)

  it('satang reconcile anchors the log after its run; satang audit verify checks the log against it (and the anchor file)', async () => {
    const before = (await anchors()).length
    const run = await runCli(['reconcile', '--json'], { env: t.toolEnv({ SATANG_ANCHOR_FILE: anchorFile() }), cwd: t.dir })
    expect(run.code, run.stderr).toBe(0)
    const all = await anchors()
    expect(all.length).toBe(before + 1)
    expect(all.at(-1)?.reason).toMatch(/^reconciliation run [0-9a-f-]{36}$/)
    const line = JSON.parse(readFileSync(anchorFile(), 'utf8').trim().split('\n').at(-1) ?? '{}') as { seq: string; reason: string }
    expect(line).toMatchObject({ seq: all.at(-1)?.seq, reason: all.at(-1)?.reason })
    const verified = await runCli(['audit', 'verify', '--anchor-file', anchorFile()], { env: t.toolEnv(), cwd: t.dir })
    expect(verified.code, verified.stdout + verified.stderr).toBe(0)
    expect(verified.stdout).toContain(`the log matches anchor #${all.at(-1)?.seq ?? '?'}`)
  }, 120_000)
})
