// `npm run bench [-- options]`: the hot-path figures of issues 16 and 28 (groups notifications, memory,
// projections, store, scale, cli, reconcile), each against a bare baseline measured in the same run,
// with the issues' targets; the older benches (signing, sandbox, relay, console) by name with --only.
// Prints a table and writes JSON (default bench/results/latest.json). Exit code 1 when a target is
// missed or a group failed.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { arch, cpus, loadavg, platform, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { makeLogger } from '../src/logger.ts'
import type { BenchContext, BenchModule, BenchResult, BenchSizes, Target } from './types.ts'
import { cleanUp } from './support/shared-log.ts'

const here = dirname(fileURLToPath(import.meta.url))
/** The default run, in this order (projections needs the shared log before the store figures append to it). */
const DEFAULT_GROUPS = ['notifications', 'memory', 'projections', 'store', 'scale', 'cli', 'reconcile']
const DEFAULTS: BenchSizes = { events: 100_000, largeEvents: 1_000_000, notifications: 20_000, appendSeconds: 3, rounds: 2, liveSeconds: 8, liveRate: 400, soakMinutes: 0, orders: 0, reconcileOrders: 100_000 }
const QUICK: BenchSizes = { events: 4_000, largeEvents: 12_000, notifications: 300, appendSeconds: 0.5, rounds: 1, liveSeconds: 1, liveRate: 200, soakMinutes: 0, orders: 0, reconcileOrders: 2_000 }

const modules = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'types.ts'].includes(f))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort()

const usage = `usage: npm run bench -- [options]

Runs the hot-path benchmarks of satang (issue 16), each figure against a bare baseline measured in
the same run, prints a table (figure, baseline, ratio, target, met) and writes JSON.

Options:
  --only GROUP[,GROUP]    run only these groups (default: ${DEFAULT_GROUPS.join(', ')});
                          known: ${modules.join(', ')}
  --quick                 small sizes for a smoke run (about a minute or two)
  --events N              events in the store for the store figures and projection catch-up (default ${DEFAULTS.events.toLocaleString('en-US')})
  --large-events N        events in the store for the "flat as the log grows" column and the rebuild (default ${DEFAULTS.largeEvents.toLocaleString('en-US')})
  --notifications N       new notifications per satang process setup, each then redelivered (default ${DEFAULTS.notifications.toLocaleString('en-US')})
  --append-seconds S      seconds per append figure and round (default ${String(DEFAULTS.appendSeconds)})
  --rounds N              rounds of each store figure, bare and satang alternating (default ${String(DEFAULTS.rounds)})
  --live-seconds S        seconds of live traffic for live delivery (default ${String(DEFAULTS.liveSeconds)})
  --live-rate N           events/s the 8 live writers append together (default ${String(DEFAULTS.liveRate)})
  --soak-minutes M        keep redelivering to satang up for M minutes while its RSS is sampled (default 0: one pass)
  --orders N              the memory group also measures with N checkouts in the log (the issue's larger size:
                          200,000; default none: only --notifications of them)
  --reconcile-orders N    paid orders the reconcile group reconciles against satang sandbox (default
                          ${DEFAULTS.reconcileOrders.toLocaleString('en-US')}; SATANG_BENCH_RECONCILE_ORDERS also sets it)
  --rebuild-command       the Memory step (group scale) runs satang project --rebuild, one pass per read
                          model, instead of satang project from empty read models (one pass for all)
  --out FILE              where the JSON goes (default bench/results/latest.json)
  -h, --help              this text

PostgreSQL: SATANG_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); every
group works in databases of its own, created and dropped. Progress goes to stderr.
`

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean' },
    events: { type: 'string' },
    'large-events': { type: 'string' },
    notifications: { type: 'string' },
    'append-seconds': { type: 'string' },
    rounds: { type: 'string' },
    'live-seconds': { type: 'string' },
    'live-rate': { type: 'string' },
    'soak-minutes': { type: 'string' },
    orders: { type: 'string' },
    'reconcile-orders': { type: 'string' },
    'rebuild-command': { type: 'boolean' },
    out: { type: 'string', default: join(here, 'results', 'latest.json') },
    help: { type: 'boolean', short: 'h' },
  },
})
if (values.help === true) {
  process.stdout.write(usage)
  process.exit(0)
}
const fail = (message: string): never => {
  process.stderr.write(`bench: ${message}\n`)
  process.exit(2)
}
const base = values.quick === true ? QUICK : DEFAULTS
const number = (flag: string, text: string | undefined, fallback: number, min: number): number => {
  if (text === undefined) return fallback
  const n = Number(text.replaceAll('_', ''))
  return Number.isFinite(n) && n >= min ? n : fail(`--${flag} must be a number ≥ ${String(min)}, got ${JSON.stringify(text)}`)
}
const sizes: BenchSizes = {
  events: number('events', values.events, base.events, 1_000),
  largeEvents: number('large-events', values['large-events'], base.largeEvents, 1_000),
  notifications: number('notifications', values.notifications, base.notifications, 10),
  appendSeconds: number('append-seconds', values['append-seconds'], base.appendSeconds, 0.1),
  rounds: number('rounds', values.rounds, base.rounds, 1),
  liveSeconds: number('live-seconds', values['live-seconds'], base.liveSeconds, 0.5),
  liveRate: number('live-rate', values['live-rate'], base.liveRate, 8),
  soakMinutes: number('soak-minutes', values['soak-minutes'], base.soakMinutes, 0),
  orders: number('orders', values.orders, base.orders, 0),
  reconcileOrders: number('reconcile-orders', values['reconcile-orders'] ?? process.env['SATANG_BENCH_RECONCILE_ORDERS'], base.reconcileOrders, 16),
}
if (sizes.largeEvents <= sizes.events) fail(`--large-events (${String(sizes.largeEvents)}) must be larger than --events (${String(sizes.events)})`)
const selected = values.only === undefined ? DEFAULT_GROUPS : values.only.split(',').map((s) => s.trim())
const unknown = selected.filter((s) => !modules.includes(s))
if (unknown.length > 0) fail(`unknown group ${unknown.join(', ')}; known: ${modules.join(', ')}`)
// The default order matters (see DEFAULT_GROUPS); keep it for any selection of those groups.
const ordered = [...selected].sort((a, b) => (DEFAULT_GROUPS.indexOf(a) + 1 || 99) - (DEFAULT_GROUPS.indexOf(b) + 1 || 99))

const log = makeLogger({ level: process.env['SATANG_LOG_LEVEL'] ?? 'warn' })
const databaseUrl = process.env['SATANG_BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const probe = new pg.Client({ connectionString: databaseUrl })
const postgres = await probe.connect().then(
  async () => {
    const { rows } = await probe.query<{ v: string }>("select current_setting('server_version') as v")
    await probe.end()
    return rows[0]?.v ?? 'unknown'
  },
  (e: unknown) => {
    process.stderr.write(`PostgreSQL at ${databaseUrl.replace(/\/\/[^@]*@/, '//')} not reachable (${e instanceof Error ? e.message : 'error'}); groups needing it will fail\n`)
    return null
  },
)

const load = (): { readonly one: number; readonly five: number; readonly fifteen: number } => {
  const [one = 0, five = 0, fifteen = 0] = loadavg()
  return { one: Number(one.toFixed(2)), five: Number(five.toFixed(2)), fifteen: Number(fifteen.toFixed(2)) }
}
const runStarted = Date.now()
const loadAtStart = load()
const elapsed = (): string => `${((Date.now() - runStarted) / 1000).toFixed(0)} s`
process.stderr.write(`bench: ${String(cpus().length)} cores, load average ${String(loadAtStart.one)} ${String(loadAtStart.five)} ${String(loadAtStart.fifteen)}; groups ${ordered.join(', ')}${values.quick === true ? ' (quick sizes)' : ''}\n`)

type Row = BenchResult & { readonly group: string; readonly met: boolean | null }
const isMet = (r: BenchResult, t: Target): boolean => {
  const x = t.on === 'value' ? r.value : r.ratio
  if (x === undefined || !Number.isFinite(x)) return false
  return t.op === '>=' ? x >= t.value : t.op === '<=' ? x <= t.value : x < t.value
}
const targetsOf = (r: BenchResult): ReadonlyArray<Target> => r.targets ?? (r.target === undefined ? [] : [{ on: 'value', ...r.target }])

const rows: Row[] = []
const failures: string[] = []
const shared = new Map<string, unknown>()
const ctx: BenchContext = { databaseUrl, log, sizes, quick: values.quick === true, rebuildCommand: values['rebuild-command'] === true, shared, progress: (line) => process.stderr.write(`  [${elapsed()}] ${line}\n`) }
// An error no group caught (an event handler that threw, a promise nobody awaited) would end the run
// without its JSON: record it as a failure, clean up, and still write what ran.
let dying = false
let running = 'start-up'
const die = (kind: string) => (e: unknown): void => {
  const text = `${running}: ${kind}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`
  failures.push(text)
  process.stderr.write(`bench ${text}\n`)
  if (dying) return
  dying = true
  void Promise.race([cleanUp(shared), new Promise((r) => setTimeout(r, 10_000))])
    .catch(() => undefined)
    .then(finish)
    .finally(() => process.exit(1))
}
process.on('uncaughtException', die('uncaught exception'))
process.on('unhandledRejection', die('unhandled rejection'))
try {
  for (const name of ordered) {
    process.stderr.write(`bench ${name}… [${elapsed()}]\n`)
    running = name
    const started = Date.now()
    try {
      const mod = (await import(join(here, `${name}.ts`))) as BenchModule
      for (const r of await mod.run(ctx)) {
        const ts = targetsOf(r)
        rows.push({ ...r, group: name, met: ts.length === 0 ? null : ts.every((t) => isMet(r, t)) })
      }
      process.stderr.write(`bench ${name} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
    } catch (e) {
      failures.push(`${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
      process.stderr.write(`bench ${name} FAILED: ${e instanceof Error ? e.message : String(e)}\n`)
    }
  }
} finally {
  await cleanUp(shared)
}
finish()

/** Prints the table and writes the JSON of what ran; exit code 1 when a target was missed or a group failed. */
function finish(): void {
  const loadAtEnd = load()

  const fmt = (n: number): string => (Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 2 }))
  const targetText = (t: Target): string => `${t.on === 'ratio' ? 'ratio ' : ''}${t.op === '>=' ? '≥' : t.op === '<=' ? '≤' : '<'} ${fmt(t.value)}`
  const table = [
    ['group', 'figure', 'value', 'unit', 'baseline', 'ratio', 'target', 'met'],
    ...rows.map((r) => [r.group, r.name, fmt(r.value), r.unit, r.baseline === undefined ? '' : fmt(r.baseline.value), r.ratio === undefined ? '' : fmt(r.ratio), targetsOf(r).map(targetText).join(', '), r.met === null ? '' : r.met ? 'yes' : 'NO']),
  ]
  const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? []
  const right = new Set([2, 4, 5])
  process.stdout.write(`\nsatang bench, ${new Date().toISOString()}: ${String(cpus().length)} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, PostgreSQL ${postgres ?? 'unreachable'}\n`)
  process.stdout.write(`load average at start ${String(loadAtStart.one)} / ${String(loadAtStart.five)} / ${String(loadAtStart.fifteen)}, at end ${String(loadAtEnd.one)} / ${String(loadAtEnd.five)} / ${String(loadAtEnd.fifteen)} (1/5/15 min); run took ${elapsed()}\n\n`)
  for (const row of table) process.stdout.write(`${row.map((cell, i) => (right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd()}\n`)
  const baselines = [...new Set(rows.flatMap((r) => (r.baseline === undefined ? [] : [`${r.group}: ${r.baseline.name}`])))]
  if (baselines.length > 0) process.stdout.write(`\nbaselines:\n${baselines.map((b) => `  ${b}`).join('\n')}\n`)
  process.stdout.write('ratio: satang ÷ baseline for rates, baseline ÷ satang for latencies (1 = as good as bare; higher is better)\n')

  const report = {
    at: new Date().toISOString(),
    seconds: Math.round((Date.now() - runStarted) / 1000),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), platform: platform(), arch: arch(), node: process.version, postgres },
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    groups: ordered,
    sizes,
    results: rows,
    failures,
  }
  mkdirSync(dirname(values.out), { recursive: true })
  writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)
  process.stdout.write(`\nJSON: ${values.out}\n`)
  for (const f of failures) process.stderr.write(`bench failed: ${f}\n`)
  process.exitCode = failures.length > 0 || rows.some((r) => r.met === false) ? 1 : 0
}
