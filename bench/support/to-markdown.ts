// The JSON of a bench run as docs/development.md's "Latest figures" table (Markdown), to paste after a run:
//   node bench/support/to-markdown.ts [bench/results/latest.json]
import { readFileSync } from 'node:fs'
import type { BenchResult, Target } from '../types.ts'

type Row = BenchResult & { readonly group: string; readonly met: boolean | null }
type Report = { at: string; seconds: number; machine: { cpus: number; cpuModel?: string; node: string; postgres: string | null }; loadAverage: { start: Record<string, number>; end: Record<string, number> }; sizes: Record<string, number>; results: Row[]; failures: string[] }

const file = process.argv[2] ?? new URL('../results/latest.json', import.meta.url).pathname
const r = JSON.parse(readFileSync(file, 'utf8')) as Report
const n = (x: number): string => (Number.isInteger(x) ? x.toLocaleString('en-US') : x.toLocaleString('en-US', { maximumFractionDigits: 2 }))
const target = (t: Target): string => `${t.on === 'ratio' ? 'ratio ' : ''}${t.op === '>=' ? '≥' : t.op === '<=' ? '≤' : '<'} ${n(t.value)}`
const load = (l: Record<string, number>): string => `${String(l['one'])} / ${String(l['five'])} / ${String(l['fifteen'])}`
const lines = [
  `Run ended ${r.at.slice(0, 16).replace('T', ' ')} UTC: ${String(r.machine.cpus)} cores (${r.machine.cpuModel ?? ''}), Node ${r.machine.node}, PostgreSQL ${r.machine.postgres ?? '?'}; load average (1/5/15 min) ${load(r.loadAverage.start)} at the start, ${load(r.loadAverage.end)} at the end; ${String(Math.round(r.seconds / 60))} minutes. Sizes: ${Object.entries(r.sizes).map(([k, v]) => `${k} ${n(v)}`).join(', ')}.`,
  '',
  '| Group | Figure | Value | Baseline | Ratio | Target | Met |',
  '|---|---|---:|---:|---:|---|---|',
  ...r.results.map((x) => `| ${x.group} | ${x.name} | ${n(x.value)} ${x.unit} | ${x.baseline === undefined ? '' : n(x.baseline.value)} | ${x.ratio === undefined ? '' : n(x.ratio)} | ${(x.targets ?? []).map(target).join(', ')} | ${x.met === null ? '' : x.met ? 'yes' : '**no**'} |`),
  ...(r.failures.length > 0 ? ['', `Failed: ${r.failures.map((f) => f.split('\n')[0] ?? '').join('; ')}`] : []),
]
process.stdout.write(`${lines.join('\n')}\n`)
