import { generateKeyPairSync, randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import type { ReconcileDeps } from '../../src/jobs/reconcile/context.ts'
import { reconcile, type ReconcileRequest } from '../../src/jobs/reconcile/reconcile.ts'
import { silentLogger } from '../../src/logger.ts'
import { statusTables } from '../../src/main.ts'
import { makeReconcileDeps, reconcilePolicyOf } from '../../src/composition/reconciliation.ts'
import { anchorKeyIdOf, writeAnchor } from '../../src/adapters/eventstore/anchors.ts'
import type { AnchorWriter } from '../../src/application/ports/anchors.ts'
import { capturingLogger } from '../support/log-lines.ts'
import { clientFor, control, MERCHANT_ID } from '../sandbox/support.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../support/satang-with-sandbox.ts'

/**
 * The sweeps of the scheduler (the job with scope `sweep`): a payment whose notification never arrived
 * is healed by the next sweep, without anyone running a command; a sweep that changes nothing (nothing
 * open, or only items still pending) records no run; a dry run records nothing at all.
 */

let t: SatangWithSandbox
let pool: Pool
let store: EventStore
let deps: ReconcileDeps

/** A checkout paid at the gateway whose every notification delivery is lost: satang still says PI. */
const paidUnnoticed = async (id: string): Promise<void> => {
  const r = await t.api('POST', '/v1/checkouts', { merchant_order_id: id, order_amount: '80', order_currency: 'THB', order_desc: 'Noodles', customer: { merchant_user_id: 'u-2' } })
  expect(r.status).toBe(201)
  t.sandbox.notifier.setFaults({ drop: 5 })
  expect((await control(t.sandbox, 'POST', `/orders/${String(r.json['gateway_order_id'])}/pay`)).status).toBe(200)
  await t.sandbox.notifier.idle()
  expect((await t.api('GET', `/v1/payments/${id}`)).json).toMatchObject({ status: { code: 'PI' } })
}

const sweep = (over: Partial<ReconcileRequest> = {}): ReturnType<typeof reconcile> =>
  reconcile(deps, { scope: { kind: 'sweep', minAgeMs: 0 }, concurrency: 4, dryRun: false, trigger: 'scheduler', actor: null, policy: reconcilePolicyOf(t.config), ...over })

const runStreams = async (): Promise<number> => Number((await pool.query<{ n: string }>(`select count(distinct stream_name)::text as n from eventstore.events where stream_name like 'reconciliation-%'`)).rows[0]?.n ?? '0')

beforeAll(async () => {
  t = await startSatangWithSandbox('sweep')
  pool = new Pool({ connectionString: t.databaseUrl, max: 4 })
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
  deps = makeReconcileDeps({ config: t.config, store, db: { pool }, gateway: clientFor(t.sandbox), merchantId: MERCHANT_ID, statusTables: statusTables(t.config), log: silentLogger(), newId: randomUUID })
}, 120_000)

afterAll(async () => {
  await store.close()
  await pool.end()
  await t.stop()
})

describe('sweeps of pending items', () => {
  it('a dry run classifies and records nothing', async () => {
    await paidUnnoticed('SW-DRY')
    const r = await sweep({ dryRun: true })
    expect(r).toMatchObject({ _tag: 'Right', right: { recorded: false, verdict: 'reconciled', report: { dry_run: true, counts: { healed: 1 } } } })
    expect((await t.api('GET', '/v1/payments/SW-DRY')).json).toMatchObject({ status: { code: 'PI' } })
    expect(await runStreams()).toBe(0)
  })
  it('heals a missed notification; the next sweep finds nothing open and records nothing', async () => {
    await paidUnnoticed('SW-1')
    const healed = await sweep()
    expect(healed).toMatchObject({ _tag: 'Right', right: { recorded: true, verdict: 'reconciled', report: { counts: { checked: 2, healed: 2 } } } })
    expect((await t.api('GET', '/v1/payments/SW-1')).json).toMatchObject({ paid: true, status: { code: 'PS', source: 'query' } })
    expect(await runStreams()).toBe(1)
    expect(await sweep()).toMatchObject({ _tag: 'Right', right: { recorded: false, report: { counts: { checked: 0 } } } })
    expect(await runStreams()).toBe(1)
  })
  it('anchors the log after a sweep that recorded a run, and not after one that changed nothing (no wait for an anchor that cannot come, no warning)', async () => {
    // The writer of `satang up`'s scheduler, counted: a sweep that records nothing has nothing new to
    // anchor, and waiting for an anchor that can never come cost 10 s and warned that the run's events
    // "did not become readable" on every idle sweep.
    const { privateKey } = generateKeyPairSync('ed25519')
    const key = { privateKey, keyId: anchorKeyIdOf(privateKey) }
    const reasons: string[] = []
    const anchors: AnchorWriter = {
      write: (reason, options) => {
        reasons.push(reason)
        return writeAnchor(pool, 'eventstore', key, reason, undefined, options)
      },
    }
    const { log, lines } = capturingLogger('warn')
    const anchored = makeReconcileDeps({ config: t.config, store, db: { pool }, gateway: clientFor(t.sandbox), merchantId: MERCHANT_ID, statusTables: statusTables(t.config), log, newId: randomUUID, anchors })
    const sweepAnchored = (): ReturnType<typeof reconcile> => reconcile(anchored, { scope: { kind: 'sweep', minAgeMs: 0 }, concurrency: 4, dryRun: false, trigger: 'scheduler', actor: null, policy: reconcilePolicyOf(t.config) })
    const anchorCount = async (): Promise<number> => Number((await pool.query<{ n: string }>('select count(*)::text as n from eventstore.anchors')).rows[0]?.n ?? '0')

    await paidUnnoticed('SW-ANCHOR')
    const before = await anchorCount()
    const healed = await sweepAnchored()
    expect(healed).toMatchObject({ _tag: 'Right', right: { recorded: true } })
    const runId = E.isRight(healed) ? healed.right.runId : ''
    expect(reasons).toEqual([`reconciliation run ${runId}`])
    expect(await anchorCount()).toBe(before + 1)
    // That anchor covers the run's events: its position is at or past the run stream's last event.
    const covered = await pool.query<{ covers: boolean }>(
      `select (a.tx_id, a.position) >= (e.tx_id, e.position) as covers
         from eventstore.anchors a, (select tx_id, position from eventstore.events where stream_name like $1 order by tx_id desc, position desc limit 1) e
        order by a.seq desc limit 1`,
      [`reconciliation-%-${runId}`],
    )
    expect(covered.rows).toEqual([{ covers: true }])

    expect(await sweepAnchored()).toMatchObject({ _tag: 'Right', right: { recorded: false } })
    expect(reasons).toHaveLength(1)
    expect(await anchorCount()).toBe(before + 1)
    expect(lines.join('')).not.toContain('did not become readable')
  })
  it('a sweep that only finds items still legitimately pending records no run', async () => {
    const runsBefore = await runStreams()
    const r = await t.api('POST', '/v1/checkouts', { merchant_order_id: 'SW-WAIT', order_amount: '80', order_currency: 'THB', order_desc: 'Noodles', customer: { merchant_user_id: 'u-2' } })
    expect(r.status).toBe(201)
    expect(await sweep()).toMatchObject({ _tag: 'Right', right: { recorded: false, verdict: 'reconciled_with_pending', report: { counts: { checked: 1, pending: 1 } } } })
    expect(await runStreams()).toBe(runsBefore)
  })
})
