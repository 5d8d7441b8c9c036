// Notification figures (issue 16): signed PAYMENT notifications (status PS) for checkouts satang holds,
// sent by a load process of its own (bench/support/notify-load.ts, 32 in flight over keep-alive, as a
// gateway delivering a backlog) to satang started from the CLI on a fresh database of the machine's
// PostgreSQL: `satang up` (every role in one process, the projector running), then `satang up --role
// api` and `--role projector` as two processes. Each new notification is verified, recorded and
// answered; then every one is delivered again (redelivered: verified, answered, nothing appended). The
// bare baseline of the same run (bench/support/bare-receiver.ts): a node:http server that verifies the
// same signature and INSERTs the notification into one table, idempotently. The RSS of `satang up` is
// sampled over its whole load (and over --soak-minutes of redeliveries after it). Where the time goes:
// the CPU each side's process(es) and its database's backends spent on the new notifications.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BenchContext, BenchResult, Target } from './types.ts'
import { backendCpuDuring, cpuSecondsOf } from './support/cpu.ts'
import { countEvents, createBenchDatabase } from './support/databases.ts'
import { MERCHANT_ID } from './support/seeded.ts'
import { runJson, sampleMemory, startNode, supportScript } from './support/processes.ts'
import { startSatang, waitForProjections, type SatangProcess } from './support/satang-process.ts'
import { startBenchSandbox, writeKeyFiles } from './support/sandbox-process.ts'
import { fmt, latencyRatio, rateRatio, round } from './support/stats.ts'

const CONCURRENCY = 32
/** Issue 28: the p99 of new notifications within 1.5× the bare receiver's (latency ratio bare ÷ satang). */
const P99_RATIO = 1 / 1.5
const CACHE = fileURLToPath(new URL('./results/cache/', import.meta.url))

type Load = { sent: number; failures: number; firstFailure: string | null; seconds: number; p50_ms: number; p99_ms: number; max_ms: number }

const rate = (l: Load): number => l.sent / l.seconds

const mustSucceed = (what: string, l: Load): Load => {
  if (l.failures > 0) throw new Error(`${what}: ${String(l.failures)} of ${String(l.sent)} notifications were not answered SUCCESS (first: ${l.firstFailure ?? ''})`)
  return l
}

/**
 * The signed bodies for checkouts 0 … n-1, cached in bench/results/cache (RSA PKCS#1 v1.5 signatures
 * are deterministic: the same key and fields sign the same); signed by two processes when missing.
 */
export const signedBodies = async (ctx: BenchContext, gatewayPrivate: string, n: number): Promise<string> => {
  const key = createHash('sha256').update(readFileSync(gatewayPrivate)).digest('hex').slice(0, 12)
  const file = join(CACHE, `notifications-${key}-${String(n)}.jsonl`)
  if (existsSync(file)) return file
  mkdirSync(CACHE, { recursive: true })
  // A larger set signed before holds these as its first lines.
  const larger = readdirSync(CACHE).map((f) => new RegExp(`^notifications-${key}-(\\d+)\\.jsonl$`).exec(f)).find((m) => m !== null && Number(m[1]) > n)
  if (larger != null) {
    writeFileSync(file, `${readFileSync(join(CACHE, larger[0]), 'utf8').split('\n').slice(0, n).join('\n')}\n`)
    return file
  }
  ctx.progress(`signing ${fmt(n)} notifications as the gateway (two processes; cached in ${file} for the next runs)…`)
  const half = Math.ceil(n / 2)
  const parts = [0, 1].map((w) => `${file}.${String(w)}.part`)
  await Promise.all([0, 1].map((w) => runJson<{ signed: number }>('sign-notifications.ts', [gatewayPrivate, String(w * half), String(Math.max(0, Math.min(half, n - w * half))), parts[w] ?? ''])))
  writeFileSync(`${file}.tmp`, parts.map((p) => readFileSync(p, 'utf8')).join(''))
  renameSync(`${file}.tmp`, file)
  for (const p of parts) rmSync(p, { force: true })
  return file
}

/** CPU seconds one side spent on a load: its own process(es), and the backends of its database. */
type CpuSpent = { readonly processes: number | null; readonly backends: number | null }

/** Runs `load` while measuring the CPU of `pids` and of `dbName`'s backends (null where /proc cannot tell). */
const cpuDuring = async <T>(pids: ReadonlyArray<number | undefined>, dbName: string, load: () => Promise<T>): Promise<{ readonly result: T; readonly cpu: CpuSpent }> => {
  const total = async (): Promise<number | null> => {
    const each = await Promise.all(pids.map((pid) => cpuSecondsOf(pid)))
    return each.some((c) => c === null) ? null : each.reduce<number>((a, c) => a + (c ?? 0), 0)
  }
  const before = await total()
  const { result, seconds } = await backendCpuDuring(dbName, load())
  const after = await total()
  return { result, cpu: { processes: before === null || after === null ? null : after - before, backends: seconds } }
}

/** Milliseconds of CPU per notification, or NaN when not measured. */
const perNotification = (seconds: number | null, count: number): number => (seconds === null ? Number.NaN : round((seconds * 1000) / count, 2))

/** A CPU row: satang's milliseconds per notification against the bare receiver's, with bare ÷ satang when both were measured. */
const cpuRow = (name: string, satangMs: number, bare: { readonly name: string; readonly value: number }): BenchResult => ({
  name,
  value: satangMs,
  unit: 'CPU ms',
  baseline: bare,
  ...(satangMs > 0 && bare.value > 0 ? { ratio: round(bare.value / satangMs, 2) } : {}),
})

type Setup = { readonly label: string; readonly processes: ReadonlyArray<SatangProcess>; readonly apiUrl: string; readonly measured: SatangProcess | undefined }

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const n = ctx.sizes.notifications
  const dir = mkdtempSync(join(tmpdir(), 'satang-bench-notify-'))
  const files = writeKeyFiles(dir)
  const out: BenchResult[] = []
  // The sandbox is satang's configured gateway (nothing in these figures calls it).
  const sandbox = await startBenchSandbox(files)
  try {
    const bodies = await signedBodies(ctx, files.gatewayPrivate, n)

    // The bare baseline.
    ctx.progress(`notifications: bare receiver, ${fmt(n)} new then ${fmt(n)} redelivered…`)
    const bareDb = await createBenchDatabase(ctx.databaseUrl, 'notifybare', ctx.log, { readModels: false })
    let bareNew: Load
    let bareAgain: Load
    let bareCpu: CpuSpent
    const receiver = startNode([supportScript('bare-receiver.ts'), bareDb.url, files.gatewayPublic], process.env)
    try {
      const m = await receiver.waitFor(/"url":"(http:\/\/[^"]+)"/, 60_000)
      const url = m[1] ?? ''
      const measured = await cpuDuring([receiver.pid], bareDb.name, () => runJson<Load>('notify-load.ts', [url, bodies, String(CONCURRENCY)]))
      bareNew = mustSucceed('bare, new', measured.result)
      bareCpu = measured.cpu
      bareAgain = mustSucceed('bare, redelivered', await runJson<Load>('notify-load.ts', [url, bodies, String(CONCURRENCY)]))
    } finally {
      await receiver.stop()
      await bareDb.drop()
    }
    ctx.progress(`  bare: new ${fmt(Math.round(rate(bareNew)))}/s (p99 ${bareNew.p99_ms.toFixed(1)} ms), redelivered ${fmt(Math.round(rate(bareAgain)))}/s`)

    // The satang up setup's ratio of new notifications to the bare receiver's, the two-process setup's target.
    let upNewRatio: number | undefined
    for (const label of ['satang up', 'api + projector'] as const) {
      const db = await createBenchDatabase(ctx.databaseUrl, label === 'satang up' ? 'notifyup' : 'notifyroles', ctx.log)
      const processes: SatangProcess[] = []
      try {
        ctx.progress(`notifications, ${label}: ${fmt(n)} checkouts into the log…`)
        await runJson('load-log.ts', [db.url, 'checkouts', '0', String(n)])
        const settings = {
          SATANG_DATABASE_URL: db.url,
          SATANG_GATEWAY_BASE_URL: sandbox.url,
          SATANG_MERCHANT_ID: MERCHANT_ID,
          SATANG_MERCHANT_PRIVATE_KEY_FILE: files.merchantPrivate,
          SATANG_GATEWAY_PUBLIC_KEY_FILE: files.gatewayPublic,
          SATANG_API_TOKENS: 'bench:bench-notifications-token-0123456789:payments:write+read+audit',
          // No daily run or sweep starts in the middle of a measurement.
          SATANG_RECONCILE_SCHEDULER: 'off',
        }
        if (label === 'satang up') processes.push(await startSatang('all', settings))
        else {
          processes.push(await startSatang('api', settings))
          processes.push(await startSatang('projector', settings))
        }
        const setup: Setup = { label, processes, apiUrl: processes[0]?.url ?? '', measured: label === 'satang up' ? processes[0] : undefined }
        await waitForProjections(db.pool, ctx.log, 600_000, ctx.progress)
        const before = await countEvents(db.pool)
        const sampler = sampleMemory(setup.measured?.running.pid, 500)
        ctx.progress(`notifications, ${label}: ${fmt(n)} new…`)
        // The CPU of every satang process of the setup (the projector's too: it applies what the api records).
        const measured = await cpuDuring(processes.map((p) => p.running.pid), db.name, () => runJson<Load>('notify-load.ts', [setup.apiUrl, bodies, String(CONCURRENCY)]))
        const fresh = mustSucceed(`${label}, new`, measured.result)
        const afterNew = await countEvents(db.pool)
        const soak = label === 'satang up' ? ctx.sizes.soakMinutes * 60 : 0
        ctx.progress(`  new ${fmt(Math.round(rate(fresh)))}/s, p99 ${fresh.p99_ms.toFixed(1)} ms; ${fmt(n)} redelivered${soak > 0 ? `, again and again for ${String(ctx.sizes.soakMinutes)} min` : ''}…`)
        const again = mustSucceed(`${label}, redelivered`, await runJson<Load>('notify-load.ts', [setup.apiUrl, bodies, String(CONCURRENCY), String(soak)]))
        const samples = await sampler.stop()
        const afterAgain = await countEvents(db.pool)
        ctx.progress(`  redelivered ${fmt(Math.round(rate(again)))}/s; projector catching up…`)
        await waitForProjections(db.pool, ctx.log, 600_000, ctx.progress)
        const tag = label === 'satang up' ? 'satang up' : 'api + projector processes'
        const newRatio = rateRatio(rate(fresh), rate(bareNew))
        // Issue 16's figures on the values; issue 28's on the ratios: satang up at 0.8 of the bare
        // receiver and its p99 within 1.5× of the bare p99; the two-process setup at least at the
        // ratio satang up had in this run (splitting the roles must not cost throughput).
        const newRateTargets: Target[] =
          label === 'satang up' ? [{ on: 'ratio', op: '>=', value: 0.8 }] : upNewRatio === undefined ? [] : [{ on: 'ratio', op: '>=', value: upNewRatio }]
        if (label === 'satang up') upNewRatio = newRatio
        out.push(
          { name: `new notifications/s (verify + record + respond), ${tag}, projector running`, value: round(rate(fresh)), unit: 'notifications/s', baseline: { name: 'bare receiver: verify + one INSERT + respond', value: round(rate(bareNew)) }, ratio: newRatio, targets: [{ on: 'value', op: '>=', value: 2_000 }, ...newRateTargets] },
          // Where the time goes (the figures to read when other work shares the machine: on 2 busy cores the
          // rates follow the CPU each side needs).
          cpuRow(
            `where the time goes, new notifications, ${tag}: CPU of satang's process${label === 'satang up' ? '' : 'es'} per notification (verify, read the order, decide, append${label === 'satang up' ? ', project' : '; the projector process projecting'})`,
            perNotification(measured.cpu.processes, fresh.sent),
            { name: 'CPU of the bare receiver process per notification (verify, INSERT, respond)', value: perNotification(bareCpu.processes, bareNew.sent) },
          ),
          cpuRow(
            `where the time goes, new notifications, ${tag}: CPU of its database's PostgreSQL backends per notification (sampled from /proc)`,
            perNotification(measured.cpu.backends, fresh.sent),
            { name: 'CPU of the bare receiver database\'s backends per notification', value: perNotification(bareCpu.backends, bareNew.sent) },
          ),
          { name: `new notifications p50, ${tag}`, value: round(fresh.p50_ms, 1), unit: 'ms', baseline: { name: 'bare receiver p50', value: round(bareNew.p50_ms, 1) }, ratio: latencyRatio(fresh.p50_ms, bareNew.p50_ms) },
          { name: `new notifications p99, ${tag}`, value: round(fresh.p99_ms, 1), unit: 'ms', baseline: { name: 'bare receiver p99', value: round(bareNew.p99_ms, 1) }, ratio: latencyRatio(fresh.p99_ms, bareNew.p99_ms), targets: [{ on: 'value', op: '<', value: 50 }, ...(label === 'satang up' ? [{ on: 'ratio' as const, op: '>=' as const, value: P99_RATIO }] : [])] },
          { name: `redelivered notifications/s, ${tag}`, value: round(rate(again)), unit: 'notifications/s', baseline: { name: 'bare receiver: verify + INSERT … ON CONFLICT DO NOTHING', value: round(rate(bareAgain)) }, ratio: rateRatio(rate(again), rate(bareAgain)), targets: [{ on: 'value', op: '>=', value: 6_000 }] },
          { name: `redelivered notifications p99, ${tag}`, value: round(again.p99_ms, 1), unit: 'ms', baseline: { name: 'bare receiver p99', value: round(bareAgain.p99_ms, 1) }, ratio: latencyRatio(again.p99_ms, bareAgain.p99_ms) },
          { name: `events appended per new notification, ${tag}`, value: round((afterNew - before) / n, 2), unit: 'events' },
          { name: `events appended by ${fmt(again.sent)} redeliveries, ${tag}`, value: afterAgain - afterNew, unit: 'events', targets: [{ on: 'value', op: '<=', value: 0 }] },
        )
        if (setup.measured !== undefined && samples.length > 0) {
          const rss = samples.map((s) => s.rss)
          const quarter = (q: number): number => {
            const part = rss.slice(Math.floor((rss.length * q) / 4), Math.max(Math.floor((rss.length * q) / 4) + 1, Math.floor((rss.length * (q + 1)) / 4)))
            return part.reduce((a, b) => a + b, 0) / part.length
          }
          const peak = Math.max(...samples.map((s) => s.peak))
          const seconds = samples.at(-1)?.at ?? 0
          const step = Math.max(1, Math.floor(samples.length / 120))
          out.push(
            { name: `RSS of satang up under the notification load: peak (${String(samples.length)} samples over ${seconds.toFixed(0)} s)`, value: round(peak), unit: 'MB', targets: [{ on: 'value', op: '<', value: 300 }], detail: { samples: samples.filter((_, i) => i % step === 0).map((s) => [round(s.at, 1), round(s.rss, 1)]) } },
            { name: 'RSS of satang up: at the start of the load', value: round(rss[0] ?? Number.NaN), unit: 'MB', targets: [{ on: 'value', op: '<=', value: 256 }] },
            { name: 'RSS of satang up: at the end of the load', value: round(rss.at(-1) ?? Number.NaN), unit: 'MB' },
            { name: 'RSS of satang up, flat? mean of the last quarter of the run ÷ mean of the second quarter', value: round(quarter(3) / quarter(1), 2), unit: 'ratio', targets: [{ on: 'value', op: '<=', value: 1.1 }] },
          )
        }
      } finally {
        for (const p of [...processes].reverse()) await p.running.stop()
        await db.drop()
      }
    }
    return out
  } finally {
    await sandbox.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
