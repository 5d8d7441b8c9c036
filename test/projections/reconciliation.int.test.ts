import { afterAll, describe, expect, it } from 'vitest'
import type { BreakClass } from '../../src/domain/reconciliation/break-class.ts'
import { decideAcknowledge, initialBreakState } from '../../src/domain/reconciliation/acknowledge.ts'
import type { CheckedItem, ItemRef, ReconciliationBreakDetectedData, RunEvent } from '../../src/domain/reconciliation/events/index.ts'
import { decideRun, evolveRunState, initialRunState, type ItemRecord, type RunCommand } from '../../src/domain/reconciliation/run.ts'
import { breakStreamName, runStreamName } from '../../src/domain/reconciliation/stream.ts'
import { reconciliationProjection } from '../../src/projections/reconciliation/projection.ts'
import type { ProjectedEvent } from '../../src/projections/types.ts'
import { runEventsOf } from '../domain/reconciliation/run-events.ts'
import { at, MERCHANT_ID } from '../domain/support/values.ts'
import { applyInTransaction, canonicalRows, makeEventFactory, projectionSchemas } from './support.ts'

/** The reconciliation read models on real PostgreSQL: given the events of runs and acknowledgements, then the rows. */

const schemas = projectionSchemas(reconciliationProjection)
afterAll(async () => {
  await schemas.drop()
})

const ref = (id: string): ItemRef => ({ kind: 'payment', id, merchantOrderId: id, merchantRefundId: null, merchantSubscribeId: null, stream: `order-${MERCHANT_ID}-${id}` })
const evidence = { traceId: 't', observationKey: null }

/** The events of one run: it checks `items` (each with its outcome) and completes. */
const aRun = (
  runId: string,
  minute: number,
  items: ReadonlyArray<{ readonly id: string; readonly outcome: CheckedItem['outcome']; readonly cls?: BreakClass; readonly breakId?: string; readonly detect?: 'new' | 'persisting'; readonly firstSeen?: { readonly at: number; readonly run: string }; readonly resolve?: ReadonlyArray<{ readonly breakId: string; readonly cls: BreakClass }> }>,
): ReadonlyArray<RunEvent> => {
  const records: ItemRecord[] = items.map((i) => {
    const detect: ReconciliationBreakDetectedData | null =
      i.detect === undefined || i.cls === undefined || i.breakId === undefined
        ? null
        : { runId, breakId: i.breakId, class: i.cls, status: i.detect, item: ref(i.id), day: '2026-01-01', satangView: { amount_satang: '10000' }, gatewayView: { amount_satang: '12000' }, amountAtStake: 2000n, detail: 'x', firstSeenAt: at(i.firstSeen?.at ?? minute), firstSeenRunId: i.firstSeen?.run ?? runId, detectedAt: at(minute), evidence }
    return {
      checked: { kind: 'payment', id: i.id, day: '2026-01-01', outcome: i.outcome, breakClass: i.cls ?? null, breakId: i.breakId ?? null, amount: 10000n, atStake: i.outcome === 'break' ? 2000n : 0n },
      detect,
      resolve: (i.resolve ?? []).map((r) => ({ runId, breakId: r.breakId, class: r.cls, item: ref(i.id), resolution: 'consistent', resolvedAt: at(minute), evidence })),
      healed: i.outcome === 'healed' ? { runId, item: ref(i.id), day: '2026-01-01', from: 'PI', to: 'PS', amount: 10000n, healedAt: at(minute), evidence } : null,
    }
  })
  const commands: RunCommand[] = [
    {
      type: 'StartRun',
      started: {
        runId,
        merchantId: MERCHANT_ID,
        scope: { kind: 'days', from: '2026-01-01', to: '2026-01-01' },
        parameters: { concurrency: 16, asOf: at(minute), notFoundGraceMs: 0, stalePendingMs: 0, chargeGraceMs: 0 },
        startedBy: { trigger: 'cli', actor: 'ops' },
        itemsInScope: items.length,
        startedAt: at(minute),
      },
    },
    { type: 'RecordItems', items: records, at: at(minute) },
    { type: 'CompleteRun', days: ['2026-01-01'], at: at(minute + 1) },
  ]
  return runEventsOf(commands)
}

const history = (): ReadonlyArray<ProjectedEvent> => {
  const pe = makeEventFactory()
  const run1 = aRun('run-1', 0, [
    { id: 'A', outcome: 'matched' },
    { id: 'B', outcome: 'break', cls: 'amount_mismatch', breakId: 'b-B', detect: 'new' },
    { id: 'C', outcome: 'healed' },
  ])
  const run2 = aRun('run-2', 60, [
    { id: 'B', outcome: 'break', cls: 'amount_mismatch', breakId: 'b-B', detect: 'persisting', firstSeen: { at: 0, run: 'run-1' } },
    { id: 'D', outcome: 'break', cls: 'stale_pending', breakId: 'b-D', detect: 'new' },
  ])
  const ack = decideAcknowledge({ type: 'AcknowledgeBreak', breakId: 'b-D', current: { class: 'stale_pending', status: 'new' }, actor: 'finance', reason: 'payer abandoned it', at: at(90) }, initialBreakState)
  if (ack._tag === 'Left') throw new Error('ack')
  const run3 = aRun('run-3', 120, [
    { id: 'B', outcome: 'matched', resolve: [{ breakId: 'b-B', cls: 'amount_mismatch' }] },
    { id: 'D', outcome: 'acknowledged', cls: 'stale_pending', breakId: 'b-D' },
  ])
  const dead = aRun('run-0', 30, [{ id: 'A', outcome: 'matched' }]).slice(0, 1)
  const superseded = decideRun({ type: 'SupersedeRun', by: 'run-2', reason: 'died', at: at(60) }, dead.reduce(evolveRunState, initialRunState))
  if (superseded._tag === 'Left') throw new Error('supersede')
  return [
    ...run1.map((e) => pe(runStreamName(MERCHANT_ID, 'run-1'), e)),
    ...dead.map((e) => pe(runStreamName(MERCHANT_ID, 'run-0'), e)),
    ...superseded.right.map((e) => pe(runStreamName(MERCHANT_ID, 'run-0'), e)),
    ...run2.map((e) => pe(runStreamName(MERCHANT_ID, 'run-2'), e)),
    ...ack.right.map((e) => pe(breakStreamName(MERCHANT_ID, 'b-D'), e)),
    ...run3.map((e) => pe(runStreamName(MERCHANT_ID, 'run-3'), e)),
  ]
}

describe('the reconciliation projection', () => {
  it('keeps runs, the lifecycle of each break, the verdict of each day and the items healed', async () => {
    const schema = await schemas.fresh('recon')
    const pool = schemas.pool()
    await applyInTransaction(pool, schema, reconciliationProjection, history())
    const runs = await pool.query(`select run_id, status, verdict, checked, matched, healed, breaks, acknowledged, superseded_by, at_stake_satang::text from "${schema}".reconciliation_runs order by run_id`)
    expect(runs.rows).toEqual([
      { run_id: 'run-0', status: 'superseded', verdict: null, checked: 0, matched: 0, healed: 0, breaks: 0, acknowledged: 0, superseded_by: 'run-2', at_stake_satang: '0' },
      { run_id: 'run-1', status: 'completed', verdict: 'breaks', checked: 3, matched: 1, healed: 1, breaks: 1, acknowledged: 0, superseded_by: null, at_stake_satang: '2000' },
      { run_id: 'run-2', status: 'completed', verdict: 'breaks', checked: 2, matched: 0, healed: 0, breaks: 2, acknowledged: 0, superseded_by: null, at_stake_satang: '4000' },
      { run_id: 'run-3', status: 'completed', verdict: 'reconciled', checked: 2, matched: 1, healed: 0, breaks: 0, acknowledged: 1, superseded_by: null, at_stake_satang: '0' },
    ])
    const breaks = await pool.query(
      `select break_id, status, times_seen, first_seen_run_id, last_seen_run_id, resolved_run_id, resolution, acknowledged_by, acknowledgement_reason from "${schema}".reconciliation_breaks order by break_id`,
    )
    expect(breaks.rows).toEqual([
      { break_id: 'b-B', status: 'resolved', times_seen: 2, first_seen_run_id: 'run-1', last_seen_run_id: 'run-2', resolved_run_id: 'run-3', resolution: 'consistent', acknowledged_by: null, acknowledgement_reason: null },
      { break_id: 'b-D', status: 'acknowledged', times_seen: 2, first_seen_run_id: 'run-2', last_seen_run_id: 'run-3', resolved_run_id: null, resolution: null, acknowledged_by: 'finance', acknowledgement_reason: 'payer abandoned it' },
    ])
    const days = await pool.query(`select to_char(day, 'YYYY-MM-DD') as day, verdict, run_id from "${schema}".reconciliation_days`)
    expect(days.rows).toEqual([{ day: '2026-01-01', verdict: 'reconciled', run_id: 'run-3' }])
    const healed = await pool.query(`select run_id, item_id, from_status, to_status from "${schema}".reconciliation_healed`)
    expect(healed.rows).toEqual([{ run_id: 'run-1', item_id: 'C', from_status: 'PI', to_status: 'PS' }])
    const open = await pool.query(`select count(*)::int as n from "${schema}".reconciliation_open_breaks`)
    expect(open.rows).toEqual([{ n: 0 }])
  })

  it('the rows do not depend on how the events were split into batches', async () => {
    const events = history()
    const pool = schemas.pool()
    const whole = await schemas.fresh('recon_whole')
    const single = await schemas.fresh('recon_single')
    await applyInTransaction(pool, whole, reconciliationProjection, events)
    for (const e of events) await applyInTransaction(pool, single, reconciliationProjection, [e])
    for (const [table, order] of [['reconciliation_runs', 'run_id'], ['reconciliation_breaks', 'break_id'], ['reconciliation_days', 'day'], ['reconciliation_healed', 'item_id']] as const) {
      expect(await canonicalRows(pool, single, table, order)).toEqual(await canonicalRows(pool, whole, table, order))
    }
  })
})
