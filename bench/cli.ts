// CLI start-up (issue 28, item 4): the whole process, from its start to its exit, of `satang --help`
// and of `satang report reconciliation --json` for one Bangkok day on a migrated database, against the
// bare start of the same Node (`node -e 0`) measured in the same run, in turn (A B A B …) so that a
// drift of the machine's speed touches both. One warm-up run each is not counted (it fills Node's
// compile cache, as any first run after an install does). The median is the figure; min and max are in
// the JSON.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchContext, BenchResult } from './types.ts'
import { createBenchDatabase } from './support/databases.ts'
import { SATANG_BIN } from './support/processes.ts'
import { satangEnv } from './support/satang-process.ts'
import { percentile, round } from './support/stats.ts'

/** Seconds from spawning `node args` to its exit; fails on a non-zero exit. */
const timeRun = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000
      if (code === 0) resolve(seconds)
      else reject(new Error(`node ${args.join(' ')} exited ${String(code)}: ${stderr.slice(0, 500)}`))
    })
  })

type Timed = { readonly median: number; readonly min: number; readonly max: number; readonly runs: ReadonlyArray<number> }
const summary = (runs: ReadonlyArray<number>): Timed => {
  const sorted = [...runs].sort((a, b) => a - b)
  return { median: round(percentile(sorted, 50), 3), min: round(sorted[0] ?? Number.NaN, 3), max: round(sorted.at(-1) ?? Number.NaN, 3), runs: runs.map((r) => round(r, 3)) }
}

/** `rounds` pairs of (command, bare Node), after one uncounted warm-up of each. */
const paired = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, rounds: number): Promise<{ readonly satang: Timed; readonly bare: Timed }> => {
  const bareArgs = ['-e', '0']
  await timeRun(args, env)
  await timeRun(bareArgs, env)
  const a: number[] = []
  const b: number[] = []
  for (let i = 0; i < rounds; i++) {
    a.push(await timeRun(args, env))
    b.push(await timeRun(bareArgs, env))
  }
  return { satang: summary(a), bare: summary(b) }
}

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const rounds = ctx.quick ? 3 : 7
  const dir = mkdtempSync(join(tmpdir(), 'satang-bench-cli-'))
  const db = await createBenchDatabase(ctx.databaseUrl, 'cli', ctx.log)
  try {
    const env = satangEnv({ SATANG_DATABASE_URL: db.url, SATANG_DATA_DIR: dir, SATANG_LOG_LEVEL: 'warn' })
    ctx.progress(`satang --help, ${String(rounds)} runs against node -e 0…`)
    const help = await paired([SATANG_BIN, '--help'], env, rounds)
    ctx.progress(`satang report reconciliation --json --date 2026-11-20, ${String(rounds)} runs against node -e 0…`)
    const report = await paired([SATANG_BIN, 'report', 'reconciliation', '--json', '--date', '2026-11-20'], env, rounds)
    const bareName = 'bare Node start (node -e 0), same run'
    return [
      {
        name: 'satang --help, whole process (median)',
        value: help.satang.median,
        unit: 's',
        baseline: { name: bareName, value: help.bare.median },
        ratio: round(help.bare.median / help.satang.median, 2),
        targets: [{ on: 'value', op: '<=', value: 0.3 }],
        detail: help,
      },
      {
        name: 'satang report reconciliation --json, one day, whole process (median)',
        value: report.satang.median,
        unit: 's',
        baseline: { name: bareName, value: report.bare.median },
        ratio: round(report.bare.median / report.satang.median, 2),
        targets: [{ on: 'value', op: '<=', value: 1.5 }],
        detail: report,
      },
    ]
  } finally {
    await db.drop()
    rmSync(dir, { recursive: true, force: true })
  }
}
