// Memory (issue 31): the RSS of satang at its start and at its peak, for `satang up` and for each role
// alone, with --notifications checkouts in the log (default 20,000) and, with --orders N, again with N
// (the issue's larger size: 200,000), against the container targets. Each process is started from the
// CLI on its own copy of one loaded database (CREATE DATABASE … TEMPLATE), with empty read models:
//   satang up                  catches up the log, then N new notifications (verified, recorded, answered);
//                              with --soak-minutes M, then redeliveries for M minutes (at the largest size
//                              only), its RSS sampled every second: "flat?" = mean of the last quarter of
//                              the soak ÷ mean of the second quarter
//   satang up --role api       N new notifications, nothing projected
//   satang up --role projector catches up the log
//   satang up --role scheduler until its first anchor of the log is written (10 s after its start), the daily run off
//   satang up --role relay     publishes the whole log to Kafka, only when a broker is given
//                              (SATANG_BENCH_KAFKA_BROKERS or SATANG_TEST_KAFKA_BROKERS); else left out
// "Start" is the RSS once the process is up and (for up and projector) caught up; "peak" is its VmHWM
// over catch-up and load. The probe (bench/support/memory-probe.ts, loaded with --import) logs the
// JavaScript heap, external and array-buffer memory of the same moments, kept in the JSON's detail, to
// tell native memory from JavaScript objects. The floor: a bare node with the same heap flags that
// imports satang's modules and does nothing (the baseline; ratio = floor ÷ satang, 1 = no more than Node
// with satang's code loaded).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { HEAP_FLAGS } from '../bin/heap.js'
import { makePostgresPool } from '../src/platform/postgres/pool.ts'
import type { BenchContext, BenchResult, Target } from './types.ts'
import { connectAdmin, copyDatabase, countEvents, createBenchDatabase, EVENT_SCHEMA } from './support/databases.ts'
import { MERCHANT_ID } from './support/seeded.ts'
import { memoryOf, runJson, runNode, sampleMemory, supportScript } from './support/processes.ts'
import { startSatang, waitForProjections, type SatangProcess } from './support/satang-process.ts'
import { startBenchSandbox, writeKeyFiles } from './support/sandbox-process.ts'
import { compact, fmt, latencyRatio, round } from './support/stats.ts'
import { signedBodies } from './notifications.ts'

const CONCURRENCY = 32
const PROBE = supportScript('memory-probe.ts')
const MAIN = new URL('../src/main.ts', import.meta.url).href
const CLI = new URL('../src/cli.ts', import.meta.url).href

/** One line of the probe: MiB. */
type ProbeLine = { readonly at: number; readonly rss: number; readonly heapTotal: number; readonly heapUsed: number; readonly external: number; readonly arrayBuffers: number }

const probeLines = (file: string): ProbeLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ProbeLine)

const breakdown = (l: ProbeLine | undefined): Record<string, number> | null =>
  l === undefined ? null : { rss: l.rss, heapTotal: l.heapTotal, heapUsed: l.heapUsed, external: l.external, arrayBuffers: l.arrayBuffers, nativeOutsideHeap: round(l.rss - l.heapTotal - l.external, 1) }

/** Node with the heap flags and satang's modules imported, idle: its RSS in MiB and the probe's view of it. */
const measureFloor = async (): Promise<{ rss: number; line: ProbeLine }> => {
  const code = `await import(${JSON.stringify(MAIN)}); await import(${JSON.stringify(CLI)}); await new Promise((r) => setTimeout(r, 3000));
const m = process.memoryUsage(); const mib = (n) => Math.round(n / 2 ** 17) / 8;
process.stdout.write(JSON.stringify({ at: 0, rss: mib(m.rss), heapTotal: mib(m.heapTotal), heapUsed: mib(m.heapUsed), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers) }))`
  const r = await runNode([...HEAP_FLAGS, '--input-type=module', '-e', code])
  if (r.code !== 0) throw new Error(`the floor process exited ${String(r.code)}: ${r.stderr.slice(-1000)}`)
  const line = JSON.parse(r.stdout) as ProbeLine
  return { rss: line.rss, line }
}

type Role = 'all' | 'api' | 'projector' | 'scheduler' | 'relay'
const LABEL: Record<Role, string> = { all: 'satang up', api: 'satang up --role api', projector: 'satang up --role projector', scheduler: 'satang up --role scheduler', relay: 'satang up --role relay' }
/** The targets (MiB): at start, at peak. satang up and api are the issue's; the other roles do less than api and are held to its figure. */
const TARGETS: Record<Role, { start: number; peak: number }> = { all: { start: 256, peak: 300 }, api: { start: 200, peak: 200 }, projector: { start: 200, peak: 200 }, scheduler: { start: 200, peak: 200 }, relay: { start: 200, peak: 200 } }
/** What each role does while it is measured. */
const WORK: Record<Role, (n: number) => string> = {
  all: (n) => `catching up the log, then ${fmt(n)} new notifications`,
  api: (n) => `${fmt(n)} new notifications`,
  projector: () => 'catching up the log',
  scheduler: () => 'its first anchor of the log',
  relay: () => 'publishing the whole log to Kafka',
}
const KAFKA = process.env['SATANG_BENCH_KAFKA_BROKERS'] ?? process.env['SATANG_TEST_KAFKA_BROKERS']

/** Mean of the `q`th quarter (0–3) of `xs`. */
const quarterMean = (xs: ReadonlyArray<number>, q: number): number => {
  const from = Math.floor((xs.length * q) / 4)
  const part = xs.slice(from, Math.max(from + 1, Math.floor((xs.length * (q + 1)) / 4)))
  return part.reduce((a, b) => a + b, 0) / part.length
}

/** Resolves once the relay's checkpoint for `topic` has published every event of the log. */
const waitForRelay = async (pool: pg.Pool, topic: string, progress: (line: string) => void): Promise<void> => {
  const total = await countEvents(pool)
  const started = Date.now()
  let reported = Date.now()
  for (;;) {
    const { rows } = await pool.query<{ n: string }>('select events_published::text as n from satang.relay_checkpoints where topic = $1', [topic])
    const published = Number(rows[0]?.n ?? 0)
    if (published >= total) return
    if (Date.now() - started > 3_600_000) throw new Error(`the relay published ${String(published)} of ${String(total)} events within an hour`)
    if (Date.now() - reported > 10_000) {
      reported = Date.now()
      progress(`  relay: ${fmt(published)} of ${fmt(total)} events published`)
    }
    await new Promise((r) => setTimeout(r, 500))
  }
}

/** Resolves once the scheduler has written its first anchor of the log (10 s after its start; it digests every stream's head, in pages), and 2 s more. */
const waitForAnchor = async (pool: pg.Pool): Promise<void> => {
  const deadline = Date.now() + 300_000
  for (;;) {
    const { rows } = await pool.query<{ n: string }>(`select count(*)::text as n from "${EVENT_SCHEMA}".anchors`)
    if (Number(rows[0]?.n ?? 0) > 0) break
    if (Date.now() > deadline) throw new Error('the scheduler wrote no anchor of the log within 300 s')
    await new Promise((r) => setTimeout(r, 500))
  }
  await new Promise((r) => setTimeout(r, 2_000))
}

type Measured = { start: number; peak: number; startLine: ProbeLine | undefined; peakLine: ProbeLine | undefined; seconds: number }

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const n = ctx.sizes.notifications
  const sizes = [n, ...(ctx.sizes.orders > n ? [ctx.sizes.orders] : [])]
  const dir = mkdtempSync(join(tmpdir(), 'satang-bench-memory-'))
  const files = writeKeyFiles(dir)
  const out: BenchResult[] = []
  const sandbox = await startBenchSandbox(files)
  const admin = await connectAdmin(ctx.databaseUrl, ctx.log, 'memory')
  const dropped: string[] = []
  try {
    const bodies = await signedBodies(ctx, files.gatewayPrivate, n)
    const floor = await measureFloor()
    ctx.progress(`memory: the floor (node ${HEAP_FLAGS.join(' ')}, satang's modules imported, idle) ${String(floor.rss)} MiB`)
    out.push({ name: `Node's floor: bare node with the heap flags and satang's modules imported (baseline of the memory rows)`, value: round(floor.rss), unit: 'MB', detail: breakdown(floor.line) })

    for (const orders of sizes) {
      const at = `${compact(orders)} orders in the log`
      ctx.progress(`memory, ${at}: loading ${fmt(orders)} checkouts…`)
      const base = await createBenchDatabase(ctx.databaseUrl, 'memory', ctx.log)
      dropped.push(base.name)
      await base.pool.end()
      // Two loaders side by side for the larger sizes.
      const half = Math.ceil(orders / 2)
      await Promise.all([0, 1].map((w) => runJson('load-log.ts', [base.url, 'checkouts', String(w * half), String(Math.max(0, Math.min(half, orders - w * half)))])))

      const roles: ReadonlyArray<Role> = ['all', 'api', 'projector', 'scheduler', ...(KAFKA === undefined ? [] : (['relay'] as const))]
      if (KAFKA === undefined) ctx.progress(`memory, ${at}: satang up --role relay left out (no broker: set SATANG_BENCH_KAFKA_BROKERS)`)
      const soakHere = ctx.sizes.soakMinutes > 0 && orders === sizes.at(-1)
      for (const role of roles) {
        const name = `satang_bench_memory_${role}_${randomUUID().replaceAll('-', '').slice(0, 8)}`
        await copyDatabase(admin, name, base.name)
        dropped.push(name)
        const url = new URL(ctx.databaseUrl)
        url.pathname = `/${name}`
        const pool = makePostgresPool({ url: url.toString(), poolMax: 2, applicationName: 'satang-bench' }, ctx.log)
        const probe = join(dir, `probe-${role}-${String(orders)}.jsonl`)
        writeFileSync(probe, '')
        let satang: SatangProcess | undefined
        const topic = `satang-bench-memory-${randomUUID().slice(0, 8)}`
        const env = { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${PROBE}`.trim(), MEMORY_PROBE_FILE: probe, MEMORY_PROBE_MS: '500' }
        const saved = { NODE_OPTIONS: process.env['NODE_OPTIONS'], MEMORY_PROBE_FILE: process.env['MEMORY_PROBE_FILE'], MEMORY_PROBE_MS: process.env['MEMORY_PROBE_MS'] }
        try {
          ctx.progress(`memory, ${at}: ${LABEL[role]}…`)
          const t0 = performance.now()
          // startSatang passes the bench's environment on (without SATANG_*): the probe goes in through it.
          Object.assign(process.env, env)
          try {
            satang = await startSatang(role, {
              SATANG_DATABASE_URL: url.toString(),
              SATANG_GATEWAY_BASE_URL: sandbox.url,
              SATANG_MERCHANT_ID: MERCHANT_ID,
              SATANG_MERCHANT_PRIVATE_KEY_FILE: files.merchantPrivate,
              SATANG_GATEWAY_PUBLIC_KEY_FILE: files.gatewayPublic,
              SATANG_API_TOKENS: 'bench:bench-notifications-token-0123456789:payments:write+read+audit',
              SATANG_RECONCILE_SCHEDULER: 'off',
              ...(role === 'relay' && KAFKA !== undefined ? { SATANG_KAFKA_BROKERS: KAFKA, SATANG_KAFKA_TOPIC: topic } : {}),
            })
          } finally {
            for (const [k, v] of Object.entries(saved)) {
              if (v === undefined) delete process.env[k]
              else process.env[k] = v
            }
          }
          if (role === 'all' || role === 'projector') await waitForProjections(pool, ctx.log, 3_600_000, ctx.progress)
          await new Promise((r) => setTimeout(r, 2_000))
          const start = (await memoryOf(satang.running.pid))?.rss ?? Number.NaN
          const startLine = probeLines(probe).at(-1)
          if (role === 'all' || role === 'api') {
            const load = await runJson<{ sent: number; failures: number; firstFailure: string | null }>('notify-load.ts', [satang.url, bodies, String(CONCURRENCY)])
            if (load.failures > 0) throw new Error(`${LABEL[role]}: ${String(load.failures)} notifications not answered SUCCESS (first: ${load.firstFailure ?? ''})`)
          }
          if (role === 'scheduler') await waitForAnchor(pool)
          if (role === 'relay') await waitForRelay(pool, topic, ctx.progress)
          let soak: BenchResult[] = []
          if (role === 'all' && soakHere) {
            ctx.progress(`memory, ${at}: satang up, redeliveries for ${String(ctx.sizes.soakMinutes)} min (the soak)…`)
            const sampler = sampleMemory(satang.running.pid, 1_000)
            const load = await runJson<{ sent: number; failures: number; firstFailure: string | null }>('notify-load.ts', [satang.url, bodies, String(CONCURRENCY), String(ctx.sizes.soakMinutes * 60)])
            const samples = await sampler.stop()
            if (load.failures > 0) throw new Error(`${LABEL[role]}, soak: ${String(load.failures)} redeliveries not answered SUCCESS (first: ${load.firstFailure ?? ''})`)
            const rss = samples.map((x) => x.rss)
            const flat = quarterMean(rss, 3) / quarterMean(rss, 1)
            const step = Math.max(1, Math.floor(samples.length / 120))
            ctx.progress(`  soak: ${fmt(load.sent)} redeliveries, RSS ${String(round(rss[0] ?? Number.NaN))} → ${String(round(rss.at(-1) ?? Number.NaN))} MiB, flat? ${String(round(flat, 2))}`)
            soak = [
              { name: `RSS of satang up over ${String(ctx.sizes.soakMinutes)} min of redeliveries (${fmt(load.sent)}), flat? mean of the last quarter ÷ mean of the second quarter, ${at}`, value: round(flat, 2), unit: 'ratio', targets: [{ on: 'value', op: '<=', value: 1.1 }], detail: { samples: samples.filter((_, i) => i % step === 0).map((x) => [round(x.at, 1), round(x.rss, 1)]) } },
              { name: `RSS of satang up at the end of the soak, ${at}`, value: round(rss.at(-1) ?? Number.NaN), unit: 'MB', baseline: { name: 'the floor', value: round(floor.rss) }, ratio: latencyRatio(rss.at(-1) ?? Number.NaN, floor.rss), targets: [{ on: 'value', op: '<=', value: TARGETS.all.peak }] },
            ]
          }
          const peak = (await memoryOf(satang.running.pid))?.peak ?? Number.NaN
          const lines = probeLines(probe)
          const peakLine = lines.reduce<ProbeLine | undefined>((a, b) => (a === undefined || b.rss > a.rss ? b : a), undefined)
          const m: Measured = { start, peak, startLine, peakLine, seconds: (performance.now() - t0) / 1000 }
          ctx.progress(`  start ${String(round(m.start))} MiB (heap used ${String(startLine?.heapUsed ?? '?')}), peak ${String(round(m.peak))} MiB`)
          const what = `${WORK[role](n)}${soak.length > 0 ? `, then the ${String(ctx.sizes.soakMinutes)}-minute soak` : ''}`
          const target = (value: number): Target[] => [{ on: 'value', op: '<=', value }]
          out.push(
            { name: `RSS of ${LABEL[role]} at start (${role === 'all' || role === 'projector' ? 'up and caught up' : 'up'}), ${at}`, value: round(m.start), unit: 'MB', baseline: { name: 'the floor', value: round(floor.rss) }, ratio: latencyRatio(m.start, floor.rss), targets: target(TARGETS[role].start), detail: { start: breakdown(startLine) } },
            { name: `RSS of ${LABEL[role]} at peak (${what}), ${at}`, value: round(m.peak), unit: 'MB', baseline: { name: 'the floor', value: round(floor.rss) }, ratio: latencyRatio(m.peak, floor.rss), targets: target(TARGETS[role].peak), detail: { highestSample: breakdown(peakLine), seconds: round(m.seconds) } },
            ...soak,
          )
        } finally {
          await satang?.running.stop()
          await pool.end()
        }
      }
    }
    return out
  } finally {
    for (const name of dropped.reverse()) await admin.query(`drop database if exists "${name}" with (force)`).catch(() => undefined)
    await admin.end()
    await sandbox.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
