// "Flat as the log grows" (issue 16): the store figures with `--large-events` (default 1,000,000)
// events in the store beside the same figures with `--events` (100,000), and the ratio large ÷ small
// (for latencies small ÷ large: 1 = no worse). Then "Memory": every read model rebuilt from the large
// log by a process of its own with its RSS sampled — by default `satang project` from empty read
// models (the projector builds them all in one pass over the log; its rate is compared with the
// catch-up at the small size too), with --rebuild-command `satang project --rebuild` (one pass per
// read model, swapped in; several times longer).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PROJECTIONS } from '../src/projections/index.ts'
import { migrateReadModels } from '../src/projections/migrations.ts'
import type { BenchContext, BenchResult } from './types.ts'
import { countEvents } from './support/databases.ts'
import { runNode, sampleMemory, SATANG_BIN, startNode, supportScript } from './support/processes.ts'
import { satangEnv, waitForProjections } from './support/satang-process.ts'
import { sharedLog } from './support/shared-log.ts'
import { measureStore, type Pair, type StoreFigures } from './support/store-figures.ts'
import { compact, fmt, round } from './support/stats.ts'
import { CATCH_UP_RATE } from './projections.ts'
import { SMALL_FIGURES, storeRows } from './store.ts'

const compare = (name: string, unit: string, small: Pair, large: Pair, smallEvents: number, kind: 'rate' | 'latency'): BenchResult => ({
  name,
  value: round(large.satang, kind === 'rate' ? 0 : 2),
  unit,
  baseline: { name: `the same with ${compact(smallEvents)} in store`, value: round(small.satang, kind === 'rate' ? 0 : 2) },
  ratio: round(kind === 'rate' ? large.satang / small.satang : small.satang / Math.max(large.satang, 0.001), 2),
  targets: [{ on: 'ratio', op: '>=', value: 0.9 }],
})

const memoryRows = (what: string, samples: ReadonlyArray<{ peak: number }>, probe?: string): BenchResult => ({
  name: `${what}: peak RSS of the process`,
  value: round(Math.max(...samples.map((s) => s.peak))),
  unit: 'MB',
  // Issue 28 item 3 / issue 31: a rebuild of 1M events within 200 MB.
  targets: [{ on: 'value', op: '<=', value: 200 }],
  ...(probe === undefined ? {} : { detail: { highestSample: highestSample(probe) } }),
})

/** The probe's line (MiB: rss, heap total and used, external, array buffers) at the highest RSS it saw: JavaScript objects vs native memory. */
const highestSample = (file: string): unknown => {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number })
  const top = lines.reduce<(typeof lines)[number] | undefined>((a, b) => (a === undefined || b.rss > a.rss ? b : a), undefined)
  return top === undefined ? null : { rss: top.rss, heapTotal: top.heapTotal, heapUsed: top.heapUsed, external: top.external, arrayBuffers: top.arrayBuffers }
}

/** The memory probe (bench/support/memory-probe.ts) for a satang process: its environment, writing to `file`. */
const probeEnv = (file: string): Record<string, string> => {
  writeFileSync(file, '')
  return { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${supportScript('memory-probe.ts')}`.trim(), MEMORY_PROBE_FILE: file, MEMORY_PROBE_MS: '1000' }
}

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  let small = ctx.shared.get(SMALL_FIGURES) as StoreFigures | undefined
  const out: BenchResult[] = []
  if (small === undefined) {
    const db = await sharedLog(ctx, ctx.sizes.events)
    small = await measureStore(ctx, db, await countEvents(db.pool), 'small')
    out.push(...storeRows(small))
  }
  const db = await sharedLog(ctx, ctx.sizes.largeEvents)
  const large = await measureStore(ctx, db, await countEvents(db.pool), 'large')
  const at = `${compact(large.events)} in store`
  out.push(
    compare(`appends, 1 writer, 1 event (${at})`, 'events/s', small.append1, large.append1, small.events, 'rate'),
    compare(`appends, 8 writers, 1 event (${at})`, 'events/s', small.append8, large.append8, small.events, 'rate'),
    compare(`appends, 8 writers, batches of 100 (${at})`, 'events/s', small.batch8, large.batch8, small.events, 'rate'),
    compare(`read-all catch-up, per event (${at})`, 'events/s', small.readAll, large.readAll, small.events, 'rate'),
    compare(`live delivery p99, 8 writers (${at})`, 'ms', small.liveP99, large.liveP99, small.events, 'latency'),
    { name: `live delivery: events missed (${at})`, value: large.liveMissed.satang, unit: 'events', targets: [{ on: 'value', op: '<=', value: 0 }] },
  )
  // The bare ratios at the large size, for the record (the targets are on the small size's rows).
  for (const r of storeRows(large).slice(0, 5)) out.push({ ...r, name: `${r.name}, ÷ bare`, targets: [] })

  // Memory: the read models rebuilt from the large log.
  const total = await countEvents(db.pool)
  if (ctx.rebuildCommand) {
    ctx.progress(`rebuilding every read model from ${fmt(total)} events (satang project --rebuild, its own process, one read model after another)…`)
    let sampler: ReturnType<typeof sampleMemory> | undefined
    const rebuilt = await runNode([SATANG_BIN, 'project', '--rebuild', '--json'], satangEnv({ SATANG_DATABASE_URL: db.url, SATANG_LOG_LEVEL: 'warn' }), (line) => {
      if (/: (swapping|done)/.test(line)) ctx.progress(`  ${line.replace(/^satang: /, '')}`)
    }, (pid) => {
      sampler = sampleMemory(pid, 250)
    })
    const samples = (await sampler?.stop()) ?? []
    if (rebuilt.code !== 0) throw new Error(`satang project --rebuild exited ${String(rebuilt.code)}: ${rebuilt.stderr.slice(-2000)}`)
    const results = JSON.parse(rebuilt.stdout) as Array<{ projection: string; events: number; seconds: number }>
    out.push(
      memoryRows(`satang project --rebuild of every read model from ${compact(total)} events`, samples),
      { name: `satang project --rebuild from ${compact(total)} events: wall time`, value: round(rebuilt.seconds, 1), unit: 's', detail: results },
    )
    return out
  }
  ctx.progress(`rebuilding every read model from ${fmt(total)} events: empty read models, satang project (its own process) catches up…`)
  await db.pool.query('drop schema satang cascade')
  await migrateReadModels({ pool: db.pool, log: ctx.log }, { schema: 'satang', projections: PROJECTIONS })
  const dir = mkdtempSync(join(tmpdir(), 'satang-bench-scale-'))
  const probe = join(dir, 'probe.jsonl')
  const projector = startNode([SATANG_BIN, 'project'], satangEnv({ SATANG_DATABASE_URL: db.url, SATANG_LOG_LEVEL: 'info', ...probeEnv(probe) }))
  const sampler = sampleMemory(projector.pid, 250)
  let seconds: number
  try {
    await projector.waitFor(/projector following the event log/, 120_000)
    const t0 = Date.now()
    await waitForProjections(db.pool, ctx.log, 3_600_000, ctx.progress)
    const { rows } = await db.pool.query<{ done: string }>('select (extract(epoch from max(updated_at)) * 1000)::text as done from satang.projection_checkpoints')
    seconds = (Number(rows[0]?.done ?? Date.now()) - t0) / 1000
  } finally {
    await projector.stop()
  }
  const samples = await sampler.stop()
  const memory = memoryRows(`read models rebuilt from ${compact(total)} events by satang project`, samples, probe)
  rmSync(dir, { recursive: true, force: true })
  const rate = total / seconds
  const smallRate = ctx.shared.get(CATCH_UP_RATE) as { events: number; rate: number } | undefined
  out.push(
    memory,
    {
      name: `projection catch-up into every read model (${compact(total)} events)`,
      value: round(rate),
      unit: 'events/s',
      ...(smallRate === undefined ? {} : { baseline: { name: `the same over ${compact(smallRate.events)} events`, value: round(smallRate.rate) }, ratio: round(rate / smallRate.rate, 2), targets: [{ on: 'ratio', op: '>=', value: 0.9 }] }),
    },
  )
  return out
}
