// Store figures (issue 16): appends with 1 and 8 writers and in batches of 100, read-all catch-up and
// live delivery, with `--events` (default 100,000) events already in the store, each against its bare
// baseline (bench/support/store-load.ts says what each bare side does), from load processes of their
// own. The figures are kept for the 1M comparison of the `scale` group.
import type { BenchContext, BenchResult } from './types.ts'
import { countEvents } from './support/databases.ts'
import { sharedLog } from './support/shared-log.ts'
import { measureStore, type StoreFigures } from './support/store-figures.ts'
import { compact, latencyRatio, rateRatio, round } from './support/stats.ts'

export const SMALL_FIGURES = 'store-figures-small'

/** The rows of one set of store figures, each with its bare baseline and ratio. */
export const storeRows = (f: StoreFigures): BenchResult[] => {
  const at = `${compact(f.events)} in store`
  return [
    { name: `appends, 1 writer, 1 event (${at})`, value: round(f.append1.satang), unit: 'events/s', baseline: { name: 'bare single-row INSERT, autocommit', value: round(f.append1.bare) }, ratio: rateRatio(f.append1.satang, f.append1.bare), targets: [{ on: 'ratio', op: '>=', value: 0.9 }] },
    { name: `appends, 8 writers, 1 event (${at})`, value: round(f.append8.satang), unit: 'events/s', baseline: { name: 'bare single-row INSERT, 8 connections', value: round(f.append8.bare) }, ratio: rateRatio(f.append8.satang, f.append8.bare), targets: [{ on: 'ratio', op: '>=', value: 0.9 }] },
    { name: `appends, 8 writers, batches of 100 (${at})`, value: round(f.batch8.satang), unit: 'events/s', baseline: { name: 'bare 100-row INSERT in a transaction, 8 connections', value: round(f.batch8.bare) }, ratio: rateRatio(f.batch8.satang, f.batch8.bare), targets: [{ on: 'ratio', op: '>=', value: 0.9 }] },
    { name: `read-all catch-up (${at})`, value: round(f.readAll.satang), unit: 'events/s', baseline: { name: 'bare keyset SELECT scan, same pages', value: round(f.readAll.bare) }, ratio: rateRatio(f.readAll.satang, f.readAll.bare), targets: [{ on: 'ratio', op: '>=', value: 0.8 }, { on: 'value', op: '>=', value: 150_000 }] },
    { name: `live delivery p99, 8 writers (${at})`, value: f.liveP99.satang, unit: 'ms', baseline: { name: 'bare INSERT + NOTIFY → LISTEN p99', value: f.liveP99.bare }, detail: { events: f.liveEvents, latency: 'commit acknowledged to the writer → handler of a subscriber in another process', satangByPath: f.livePaths, satangSlowestPercent: f.liveTail }, ratio: latencyRatio(f.liveP99.satang, f.liveP99.bare), targets: [{ on: 'value', op: '<', value: 5 }, { on: 'ratio', op: '>=', value: 0.33 }] },
    { name: `live delivery: CPU per event, subscriber + writer + PostgreSQL (${at})`, value: f.liveCpu.satang.total, unit: 'µs', baseline: { name: 'bare writer, listener and their backends, per event', value: f.liveCpu.bare.total }, detail: { satang: f.liveCpu.satang, bare: f.liveCpu.bare, read: '/proc: each process over its run, the database backends sampled every 250 ms while the writer runs' }, ratio: latencyRatio(f.liveCpu.satang.total, f.liveCpu.bare.total) },
    { name: `live delivery p50, 8 writers (${at})`, value: f.liveP50.satang, unit: 'ms', baseline: { name: 'bare INSERT + NOTIFY → LISTEN p50', value: f.liveP50.bare }, ratio: latencyRatio(f.liveP50.satang, f.liveP50.bare) },
    { name: `live delivery: events missed (${at})`, value: f.liveMissed.satang, unit: 'events', baseline: { name: 'bare notifications missed', value: f.liveMissed.bare }, targets: [{ on: 'value', op: '<=', value: 0 }] },
    { name: `live delivery: events delivered twice (${at})`, value: f.liveDuplicated.satang, unit: 'events', baseline: { name: 'bare notifications twice', value: f.liveDuplicated.bare }, targets: [{ on: 'value', op: '<=', value: 0 }] },
  ]
}

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const db = await sharedLog(ctx, ctx.sizes.events)
  const figures = await measureStore(ctx, db, await countEvents(db.pool), 'small')
  ctx.shared.set(SMALL_FIGURES, figures)
  return storeRows(figures)
}
