// Projection catch-up (issue 16): the shared log of `--events` (default 100,000) valid, interleaved
// events (orders with notifications, queries, redirects and discrepancies; refunds; subscriptions with
// charges; reconciliation runs) and empty read models; `satang project` (the projector, a process of
// its own) applies it to every read model. Timed from the projector's "following the event log" line
// to the last checkpoint reaching the head of the log (the checkpoint rows' own commit times), against
// the bare baseline measured in the same run: a bare SELECT scan of the same events.
import { PROJECTIONS } from '../src/projections/index.ts'
import type { BenchContext, BenchResult } from './types.ts'
import { countEvents } from './support/databases.ts'
import { runJson, SATANG_BIN, startNode } from './support/processes.ts'
import { satangEnv, waitForProjections } from './support/satang-process.ts'
import { sharedLog } from './support/shared-log.ts'
import { compact, fmt, rateRatio, round } from './support/stats.ts'

/** Shared with the scale group: the catch-up rate at the small size. */
export const CATCH_UP_RATE = 'projection-catch-up-rate'

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const db = await sharedLog(ctx, ctx.sizes.events)
  const events = await countEvents(db.pool)
  const { rows: before } = await db.pool.query<{ n: string }>('select count(*)::text as n from satang.projection_checkpoints where position is not null')
  if (Number(before[0]?.n ?? '0') > 0) throw new Error('the read models of the shared log are not empty: run the projections group before the store group')
  ctx.progress(`projection catch-up: satang project over ${fmt(events)} events into ${String(PROJECTIONS.length)} read models (${PROJECTIONS.map((p) => p.name).join(', ')})…`)
  const projector = startNode([SATANG_BIN, 'project'], satangEnv({ SATANG_DATABASE_URL: db.url, SATANG_LOG_LEVEL: 'info' }))
  let seconds: number
  try {
    await projector.waitFor(/projector following the event log/, 120_000)
    const t0 = Date.now()
    await waitForProjections(db.pool, ctx.log, 900_000, ctx.progress)
    const { rows } = await db.pool.query<{ done: string }>('select (extract(epoch from max(updated_at)) * 1000)::text as done from satang.projection_checkpoints')
    seconds = (Number(rows[0]?.done ?? Date.now()) - t0) / 1000
  } finally {
    await projector.stop()
  }
  const rate = events / seconds
  ctx.shared.set(CATCH_UP_RATE, { events, rate })
  ctx.progress(`  caught up in ${seconds.toFixed(1)} s (${fmt(Math.round(rate))} events/s); bare scan of the same events…`)
  // The bare scan: a warm-up, then the better of two (the projector left the pages warm too).
  const scans = (await runJson<{ results: Array<{ events: number; seconds: number }> }>('store-load.ts', ['read', db.url, 'bare', '3'])).results.slice(1)
  const bare = Math.max(...scans.map((s) => s.events / s.seconds))
  return [
    { name: `projection catch-up into every read model (${String(PROJECTIONS.length)}; ${compact(events)} events)`, value: round(rate), unit: 'events/s', baseline: { name: 'bare SELECT scan of the same events', value: round(bare) }, ratio: rateRatio(rate, bare), targets: [{ on: 'value', op: '>=', value: 40_000 }, { on: 'ratio', op: '>=', value: 0.5 }] },
    { name: 'projection catch-up, wall time', value: round(seconds, 2), unit: 's' },
  ]
}
