// `npm run bench [-- --only NAME[,NAME]] [--out FILE]`: runs every bench module, prints a table and
// writes machine-readable JSON (default bench/results/latest.json). Figures with a target are checked;
// the exit code is 1 when a target is missed, so a regression is visible in a script.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { arch, cpus, platform, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { makeLogger } from '../src/logger.ts'
import type { BenchModule, BenchResult } from './types.ts'

const here = dirname(fileURLToPath(import.meta.url))
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    out: { type: 'string', default: join(here, 'results', 'latest.json') },
    help: { type: 'boolean', short: 'h' },
  },
})
const modules = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'types.ts'].includes(f))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort()
if (values.help === true) {
  process.stdout.write(`usage: npm run bench -- [--only ${modules.join(',')}] [--out FILE]\n` +
    'PostgreSQL: SATANG_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres).\n')
  process.exit(0)
}
const selected = values.only === undefined ? modules : values.only.split(',').map((s) => s.trim())
const unknown = selected.filter((s) => !modules.includes(s))
if (unknown.length > 0) {
  process.stderr.write(`unknown bench ${unknown.join(', ')}; known: ${modules.join(', ')}\n`)
  process.exit(2)
}

const log = makeLogger({ level: process.env['SATANG_LOG_LEVEL'] ?? 'warn' })
const databaseUrl = process.env['SATANG_BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const probe = new pg.Client({ connectionString: databaseUrl })
const pgReachable = await probe.connect().then(
  async () => {
    await probe.end()
    return true
  },
  (e: unknown) => {
    process.stderr.write(`PostgreSQL at ${databaseUrl.replace(/\/\/[^@]*@/, '//')} not reachable (${e instanceof Error ? e.message : 'error'}); benches needing it will fail\n`)
    return false
  },
)

type Row = BenchResult & { bench: string; met: boolean | null }
const rows: Row[] = []
const failures: string[] = []
for (const name of selected) {
  process.stderr.write(`bench ${name}…\n`)
  const started = Date.now()
  try {
    const mod = (await import(join(here, `${name}.ts`))) as BenchModule
    const results = await mod.run({ databaseUrl, log })
    for (const r of results) {
      const met = r.target === undefined ? null : r.target.op === '>=' ? r.value >= r.target.value : r.value <= r.target.value
      rows.push({ ...r, bench: name, met })
    }
    process.stderr.write(`bench ${name} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  } catch (e) {
    failures.push(`${name}: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
  }
}

const fmt = (n: number): string => (Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 2 }))
const table = [['bench', 'figure', 'value', 'unit', 'target', 'met'], ...rows.map((r) => [r.bench, r.name, fmt(r.value), r.unit, r.target === undefined ? '' : `${r.target.op} ${fmt(r.target.value)}`, r.met === null ? '' : r.met ? 'yes' : 'NO'])]
const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? []
for (const row of table) process.stdout.write(`${row.map((cell, i) => (i === 2 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join('  ')}\n`)

const report = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), platform: platform(), arch: arch(), node: process.version, postgres: pgReachable },
  results: rows,
  failures,
}
mkdirSync(dirname(values.out), { recursive: true })
writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)
process.stdout.write(`\nJSON: ${values.out}\n`)
for (const f of failures) process.stderr.write(`bench failed: ${f}\n`)
process.exitCode = failures.length > 0 || rows.some((r) => r.met === false) ? 1 : 0
