import { spawn } from 'node:child_process'
import { rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import { Client, Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { decodeConfig } from '../../src/config.ts'
import { silentLogger } from '../../src/logger.ts'
import { startSatang } from '../../src/main.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA, projectionStatus } from '../../src/projections/index.ts'
import { control } from '../sandbox/support.ts'
import { runCli } from '../support/cli.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../support/satang-with-sandbox.ts'

/**
 * Acceptance (issue 18): a restore drill. satang records payments, callbacks and refunds through the
 * sandbox; the whole database (event store and read models) is dumped with pg_dump, dropped, and
 * restored with pg_restore. Then `satang migrate` passes, `satang audit verify` finds the log intact and
 * its heads as kept before the dump, the read models equal a rebuild (`satang project --verify`) and
 * the rows as they were, and satang runs on the restored database: a new payment reaches the read models.
 */

type Run = { readonly code: number | null; readonly out: string }
const run = (command: string, args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.on('error', (e) => resolve({ code: null, out: e.message }))
    child.on('close', (code) => resolve({ code, out }))
  })

const majorOf = (text: string): number | undefined => {
  const m = /(\d+)(?:\.\d+)?/.exec(text)
  return m?.[1] === undefined ? undefined : Number(m[1])
}

/** pg_dump and pg_restore on PATH, at least as new as the server (pg_dump refuses a newer server). */
const toolsProblem = async (databaseUrl: string): Promise<string | undefined> => {
  const dump = await run('pg_dump', ['--version'])
  const restore = await run('pg_restore', ['--version'])
  if (dump.code !== 0 || restore.code !== 0) return `pg_dump/pg_restore are not on PATH (${dump.out.trim()} ${restore.out.trim()})`
  const c = new Client({ connectionString: databaseUrl })
  await c.connect()
  const server = await c.query<{ server_version: string }>('show server_version').finally(() => c.end())
  const serverMajor = majorOf(server.rows[0]?.server_version ?? '')
  const dumpMajor = majorOf(dump.out.replace(/^[^\d]*/, ''))
  console.info(`restore drill: ${dump.out.trim()}, ${restore.out.trim()}, server ${server.rows[0]?.server_version ?? '?'}`)
  if (serverMajor === undefined || dumpMajor === undefined) return 'cannot tell the versions of pg_dump and the server apart'
  return dumpMajor < serverMajor ? `pg_dump ${String(dumpMajor)} cannot dump a PostgreSQL ${String(serverMajor)} server` : undefined
}

let t: SatangWithSandbox
let problem: string | undefined
const adminUrl = (url: string): string => {
  const u = new URL(url)
  u.pathname = '/postgres'
  return u.toString()
}
const databaseName = (url: string): string => decodeURIComponent(new URL(url).pathname.slice(1))
const admin = async (sql: string): Promise<void> => {
  const c = new Client({ connectionString: adminUrl(t.databaseUrl) })
  await c.connect()
  await c.query(sql).finally(() => c.end())
}

beforeAll(async () => {
  t = await startSatangWithSandbox('restore')
  problem = await toolsProblem(t.databaseUrl)
  if (problem !== undefined) console.info(`restore drill skipped: ${problem}`)
}, 120_000)
let satangStopped = false
afterAll(async () => {
  if (!satangStopped) return t.stop()
  // t.stop() would stop satang a second time: close the rest by hand
  await t.sandbox.close()
  await admin(`drop database if exists "${databaseName(t.databaseUrl)}" with (force)`)
  rmSync(t.dir, { recursive: true, force: true })
})

/** Waits until every read model has applied the whole log. */
const caughtUp = async (store: EventStore, pool: Pool): Promise<void> => {
  for (let i = 0; i < 600; i++) {
    if ((await projectionStatus(store, pool, READ_MODEL_SCHEMA, PROJECTIONS)).every((s) => s.eventsBehind === 0)) return
    await sleep(50)
  }
  throw new Error('the read models did not catch up within 30 s')
}

/** What the read models hold, table by table: row count and a digest of the rows in a stable order. */
const readModelDigest = async (pool: Pool): Promise<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const table of ['orders', 'refunds', 'ledger_entries', 'audit_log', 'projection_checkpoints']) {
    const r = await pool.query<{ n: string; digest: string | null }>(`select count(*)::text as n, md5(string_agg(x::text, '|' order by x::text)) as digest from "${READ_MODEL_SCHEMA}"."${table}" x`)
    out[table] = `${r.rows[0]?.n ?? '?'} rows ${r.rows[0]?.digest ?? '-'}`
  }
  return out
}

describe('restore drill: pg_dump of the store and the read models, drop, pg_restore', () => {
  it('the restored database passes satang audit verify (same heads), its read models equal a rebuild, and satang runs on it', async (ctx) => {
    if (problem !== undefined) ctx.skip()
    const log = silentLogger()
    // 1. history: payments, the sandbox's notifications, refunds
    for (let i = 0; i < 24; i++) {
      const r = await t.api('POST', '/v1/payments', { service: 'svc.thaiqr.pay', merchant_order_id: `DRILL-${String(i)}`, order_amount: `${String(100 + i)}.00`, order_currency: 'THB', order_desc: 'drill', payment_method: 'THAI_QR', customer: { merchant_user_id: 'u-1' } })
      expect(r.status, JSON.stringify(r.json)).toBe(201)
      const orderId = String(r.json['gateway_order_id'])
      if (i % 4 === 0) continue
      expect((await control(t.sandbox, 'POST', `/orders/${orderId}/pay`)).status).toBe(200)
      if (i % 3 !== 1) continue
      expect((await t.api('POST', '/v1/refunds', { merchant_refund_id: `DRILL-R-${String(i)}`, merchant_order_id: `DRILL-${String(i)}` })).status).toBe(201)
      expect((await control(t.sandbox, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: `DRILL-R-${String(i)}`, refund_amount: '5.00' })).status).toBe(201)
    }
    await t.sandbox.notifier.idle()
    const pool = new Pool({ connectionString: t.databaseUrl, max: 2 })
    const store = makePostgresEventStore({ pool, log }, { schema: 'eventstore' })
    try {
      await caughtUp(store, pool)
    } finally {
      await store.close()
      await pool.end()
    }
    await t.satang.stop()
    satangStopped = true

    // 2. keep the heads outside the database, and what the read models hold
    const heads = join(t.dir, 'heads.json')
    const before = await runCli(['audit', 'verify', '--json', '--save-heads', heads], { env: t.toolEnv(), cwd: t.dir })
    expect(before.code, before.stderr).toBe(0)
    const verified = JSON.parse(before.stdout) as { intact: boolean; events: number; heads_digest: string }
    expect(verified.intact).toBe(true)
    const beforePool = new Pool({ connectionString: t.databaseUrl, max: 1 })
    const rowsBefore = await readModelDigest(beforePool).finally(() => beforePool.end())

    // 3. dump, drop, restore
    const dumpFile = join(t.dir, 'satang.dump')
    const dumpFrom = Date.now()
    const dumped = await run('pg_dump', ['--format=custom', '--file', dumpFile, '--dbname', t.databaseUrl])
    expect(dumped.code, dumped.out).toBe(0)
    const name = databaseName(t.databaseUrl)
    await admin(`drop database "${name}" with (force)`)
    await admin(`create database "${name}"`)
    const restoreFrom = Date.now()
    const restored = await run('pg_restore', ['--exit-on-error', '--no-owner', '--dbname', t.databaseUrl, dumpFile])
    expect(restored.code, restored.out).toBe(0)
    console.info(`restore drill: ${String(verified.events)} events; dump ${String(statSync(dumpFile).size)} bytes in ${String(restoreFrom - dumpFrom)} ms (with drop), restore ${String(Date.now() - restoreFrom)} ms`)

    // 4. the restored database: migrations pass, the log is intact with the same heads, the read models are the same and equal a rebuild
    const migrated = await runCli(['migrate'], { env: t.toolEnv(), cwd: t.dir })
    expect(migrated.code, migrated.stderr).toBe(0)
    const after = await runCli(['audit', 'verify', '--json', '--against', heads, '--expect-digest', verified.heads_digest], { env: t.toolEnv(), cwd: t.dir })
    expect(after.code, after.stdout + after.stderr).toBe(0)
    expect(JSON.parse(after.stdout)).toMatchObject({ intact: true, events: verified.events, heads_digest: verified.heads_digest })
    const afterPool = new Pool({ connectionString: t.databaseUrl, max: 1 })
    expect(await readModelDigest(afterPool).finally(() => afterPool.end())).toEqual(rowsBefore)
    const rebuilt = await runCli(['project', '--verify', '--json'], { env: t.toolEnv(), cwd: t.dir })
    expect(rebuilt.code, rebuilt.stdout + rebuilt.stderr).toBe(0)

    // 5. satang runs on the restored database: a new payment is recorded and projected
    const config = decodeConfig({ ...t.toolEnv(), SATANG_HTTP_PORT: '0', SATANG_API_TOKENS: 'drill:drill-token-0123456789abcdef:payments:write+read', SATANG_LOG_LEVEL: 'silent', SATANG_RECONCILE_SCHEDULER: 'off' })
    if (E.isLeft(config)) throw new Error(JSON.stringify(config.left))
    const again = await startSatang(config.right, log, { allowSuperuser: true })
    try {
      const created = await fetch(`${again.httpUrl}/v1/payments`, {
        method: 'POST',
        headers: { authorization: 'Bearer drill-token-0123456789abcdef', 'content-type': 'application/json' },
        body: JSON.stringify({ service: 'svc.thaiqr.pay', merchant_order_id: 'DRILL-AFTER', order_amount: '42.00', order_currency: 'THB', order_desc: 'after restore', payment_method: 'THAI_QR', customer: { merchant_user_id: 'u-1' } }),
      })
      expect(created.status).toBe(201)
      let served = ''
      for (let i = 0; i < 200 && served !== 'read_model'; i++) {
        const got = await fetch(`${again.httpUrl}/v1/payments/DRILL-AFTER`, { headers: { authorization: 'Bearer drill-token-0123456789abcdef' } })
        served = String(((await got.json()) as { served_from?: string }).served_from)
        if (served !== 'read_model') await sleep(50)
      }
      expect(served).toBe('read_model')
    } finally {
      await again.stop()
    }
    const final = await runCli(['audit', 'verify', '--json', '--against', heads], { env: t.toolEnv(), cwd: t.dir })
    expect(final.code, final.stdout + final.stderr).toBe(0)
    expect((JSON.parse(final.stdout) as { events: number }).events).toBeGreaterThan(verified.events)
  })
})
