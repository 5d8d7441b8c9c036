import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { Sandbox } from '../../src/adapters/sandbox/sandbox.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { decodeConfig, type Config } from '../../src/config.ts'
import type { ReconcileDeps } from '../../src/jobs/reconcile/context.ts'
import { reconcile, type ReconcileRequest } from '../../src/jobs/reconcile/reconcile.ts'
import { silentLogger } from '../../src/logger.ts'
import { startSatang, statusTables, type Running } from '../../src/main.ts'
import { makeReconcileDeps, reconcilePolicyOf } from '../../src/roles/reconciliation.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { clientFor, control, GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, startSandbox } from '../adapters/sandbox/support.ts'

/**
 * The sweeps of the scheduler (the job with scope `sweep`): a payment whose notification never arrived
 * is healed by the next sweep, without anyone running a command; a sweep with nothing open records
 * nothing; a dry run records nothing at all.
 */

const TOKEN = 'sweep-int-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'satang-sweep-'))
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox
let satang: Running
let pool: Pool
let store: EventStore
let config: Config
let deps: ReconcileDeps


const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${satang.httpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

/** A checkout paid at the gateway whose every notification delivery is lost: satang still says PI. */
const paidUnnoticed = async (id: string): Promise<void> => {
  const r = await api('POST', '/v1/checkouts', { merchant_order_id: id, order_amount: '80', order_currency: 'THB', order_desc: 'Noodles', customer: { merchant_user_id: 'u-2' } })
  expect(r.status).toBe(201)
  sandbox.notifier.setFaults({ drop: 5 })
  expect((await control(sandbox, 'POST', `/orders/${String(r.json['gateway_order_id'])}/pay`)).status).toBe(200)
  await sandbox.notifier.idle()
  expect((await api('GET', `/v1/payments/${id}`)).json).toMatchObject({ status: { code: 'PI' } })
}

const sweep = (over: Partial<ReconcileRequest> = {}): ReturnType<typeof reconcile> =>
  reconcile(deps, { scope: { kind: 'sweep', minAgeMs: 0 }, concurrency: 4, dryRun: false, trigger: 'scheduler', actor: null, policy: reconcilePolicyOf(config), ...over })

const runStreams = async (): Promise<number> => Number((await pool.query<{ n: string }>(`select count(distinct stream_name)::text as n from eventstore.events where stream_name like 'reconciliation-%'`)).rows[0]?.n ?? '0')

beforeAll(async () => {
  db = await freshDatabase('sweep')
  sandbox = await startSandbox()
  writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
  writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
  const decoded = decodeConfig({
    SATANG_DATABASE_URL: db.url,
    SATANG_GATEWAY_BASE_URL: sandbox.url,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
    SATANG_HTTP_PORT: '0',
    SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`,
    SATANG_DATA_DIR: dir,
    SATANG_LOG_LEVEL: 'silent',
    SATANG_RECONCILE_SCHEDULER: 'off',
  })
  if (E.isLeft(decoded)) throw new Error(JSON.stringify(decoded.left))
  config = decoded.right
  satang = await startSatang(config, silentLogger())
  pool = new Pool({ connectionString: db.url, max: 4 })
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
  deps = makeReconcileDeps({ config, store, db: { pool }, gateway: clientFor(sandbox), merchantId: MERCHANT_ID, statusTables: statusTables(config), log: silentLogger(), newId: randomUUID })
}, 120_000)

afterAll(async () => {
  await satang.stop()
  await store.close()
  await pool.end()
  await sandbox.close()
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('sweeps of pending items', () => {
  it('a dry run classifies and records nothing', async () => {
    await paidUnnoticed('SW-DRY')
    const r = await sweep({ dryRun: true })
    expect(r).toMatchObject({ _tag: 'Right', right: { recorded: false, verdict: 'reconciled', report: { dry_run: true, counts: { healed: 1 } } } })
    expect((await api('GET', '/v1/payments/SW-DRY')).json).toMatchObject({ status: { code: 'PI' } })
    expect(await runStreams()).toBe(0)
  })
  it('heals a missed notification; the next sweep finds nothing open and records nothing', async () => {
    await paidUnnoticed('SW-1')
    const healed = await sweep()
    expect(healed).toMatchObject({ _tag: 'Right', right: { recorded: true, verdict: 'reconciled', report: { counts: { checked: 2, healed: 2 } } } })
    expect((await api('GET', '/v1/payments/SW-1')).json).toMatchObject({ paid: true, status: { code: 'PS', source: 'query' } })
    expect(await runStreams()).toBe(1)
    expect(await sweep()).toMatchObject({ _tag: 'Right', right: { recorded: false, report: { counts: { checked: 0 } } } })
    expect(await runStreams()).toBe(1)
  })
})
