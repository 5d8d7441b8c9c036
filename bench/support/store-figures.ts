// The store figures at one size of the log, each against its bare baseline, both measured by load
// processes of their own (bench/support/store-load.ts), alternating bare and satang round by round so
// that the machine's noise falls on both alike.
import type { BenchContext } from '../types.ts'
import { backendCpuDuring } from './cpu.ts'
import type { BenchDatabase } from './databases.ts'
import { runJson, startNode, supportScript } from './processes.ts'
import { percentile, round } from './stats.ts'

export type Pair = { readonly satang: number; readonly bare: number }

export type StoreFigures = {
  readonly events: number
  readonly append1: Pair
  readonly append8: Pair
  readonly batch8: Pair
  readonly readAll: Pair
  /** Latencies in ms, commit acknowledged to the writer → handler in another process. */
  readonly liveP50: Pair
  readonly liveP99: Pair
  readonly liveMissed: Pair
  readonly liveDuplicated: Pair
  readonly liveEvents: Pair
  /** satang's live deliveries by path: events, p50 and p99 of each. */
  readonly livePaths: LivePaths
  /** Where satang's slowest 1% of live deliveries were late. */
  readonly liveTail: LiveTail
  /** CPU per live event (µs), each side's processes: see LiveCpu. */
  readonly liveCpu: { readonly satang: LiveCpu; readonly bare: LiveCpu }
}

/**
 * CPU per event of live delivery (µs), over every run of one side: the subscriber's process (from its
 * "ready" to its stop), the writer's process (its timed writes) and the database's PostgreSQL
 * backends while the writer runs (sampled from /proc every 250 ms: a backend's last 250 ms before it
 * ends are lost; null without /proc). The steadier figure behind the p99 on a shared machine: the more
 * CPU one side needs per event, the more often its processes wait for a core.
 */
export type LiveCpu = { readonly subscriber: number; readonly writer: number; readonly postgres: number | null; readonly total: number }

type Rate = { events: number; seconds: number }

/** `rounds` rounds of bare then satang, each a load process measuring every figure; events ÷ seconds summed over the rounds, per figure. */
const alternate = async (ctx: BenchContext, what: ReadonlyArray<string>, run: (impl: 'satang' | 'bare', round: number) => Promise<ReadonlyArray<Rate>>): Promise<Pair[]> => {
  const sum = what.map(() => ({ satang: { events: 0, seconds: 0 }, bare: { events: 0, seconds: 0 } }))
  for (let r = 0; r < ctx.sizes.rounds; r++) {
    for (const impl of ['bare', 'satang'] as const) {
      const xs = await run(impl, r)
      xs.forEach((x, i) => {
        const s = sum[i]?.[impl]
        if (s === undefined) return
        s.events += x.events
        s.seconds += x.seconds
      })
    }
  }
  return sum.map((s, i) => {
    const pair = { satang: s.satang.events / s.satang.seconds, bare: s.bare.events / s.bare.seconds }
    ctx.progress(`  ${what[i] ?? ''}: satang ${Math.round(pair.satang).toLocaleString('en-US')}/s, bare ${Math.round(pair.bare).toLocaleString('en-US')}/s (${(pair.satang / pair.bare).toFixed(2)})`)
    return pair
  })
}

type LivePaths = Readonly<Record<string, { events: number; p50: number; p99: number }>>
/**
 * Where satang's slowest 1% of live deliveries were late: how many came from an announcement that
 * waited for an older transaction, from a read, or from an announcement at once; and for those, how
 * long after the acknowledgement their notification reached the subscriber's store (mean, ms), and
 * how long it then took to reach the handler (mean, ms).
 */
export type LiveTail = { readonly events: number; readonly waited: number; readonly read: number; readonly atOnce: number; readonly heardAfterAckMs: number; readonly heardToHandlerMs: number }
type Live = { p50: number; p99: number; missed: number; duplicated: number; events: number; paths: LivePaths; tail: LiveTail; cpu: LiveCpu }

/** One acknowledged event: its latency, the path that delivered it, and (announcements) when it was heard, in ms after the acknowledgement. */
type Delivery = { readonly latency: number; readonly path: string; readonly heard: number | undefined }
/** One live run: each acknowledged event's delivery, and the events missed and delivered twice. */
type LiveRun = { latencies: Delivery[]; missed: number; duplicated: number; events: number; cpuMs: { subscriber: number; writer: number; postgres: number | null } }

const liveRun = async (ctx: BenchContext, db: BenchDatabase, impl: 'satang' | 'bare', label: string): Promise<LiveRun> => {
  const sub = startNode([supportScript('store-load.ts'), 'live-sub', db.url, impl], process.env)
  try {
    await sub.waitFor(/^ready$/m, 60_000)
    const { result: written, seconds: postgresSeconds } = await backendCpuDuring(
      db.name,
      runJson<{ acked: Array<[string, number, number]>; cpuMs: number }>('store-load.ts', ['live-write', db.url, impl, '8', String(ctx.sizes.liveRate), String(ctx.sizes.liveSeconds), label]),
    )
    // Give the subscriber until everything acknowledged has arrived, or 10 s.
    const ids = new Set(written.acked.map((a) => a[0]))
    const deadline = Date.now() + 10_000
    const arrived = (): number => Number([...sub.output().matchAll(/^delivered (\d+)$/gm)].at(-1)?.[1] ?? '0')
    while (Date.now() < deadline && arrived() < ids.size) await new Promise((r) => setTimeout(r, 100))
    sub.child.stdin?.end('stop\n')
    await sub.exited
    const lines = sub.output().trim().split('\n')
    const answer = JSON.parse(lines.at(-1) ?? '{}') as { delivered?: Array<[string, number, string, number]>; cpuMs?: number }
    const delivered = new Map<string, number[]>()
    const how = new Map<string, { path: string; heardAt: number }>()
    for (const [id, at, path, heardAt] of answer.delivered ?? []) {
      delivered.set(id, [...(delivered.get(id) ?? []), at])
      if (!how.has(id)) how.set(id, { path, heardAt })
    }
    const latencies: Delivery[] = []
    let missed = 0
    for (const [id, , ackAt] of written.acked) {
      const at = delivered.get(id)?.[0]
      const h = how.get(id)
      if (at === undefined) missed += 1
      else latencies.push({ latency: Math.max(0, at - ackAt), path: h?.path ?? '?', heard: h === undefined || h.heardAt < 0 ? undefined : h.heardAt - ackAt })
    }
    const duplicated = [...delivered.entries()].filter(([id, ats]) => ids.has(id) && ats.length > 1).length
    const cpuMs = { subscriber: answer.cpuMs ?? 0, writer: written.cpuMs, postgres: postgresSeconds === null ? null : postgresSeconds * 1000 }
    return { latencies, missed, duplicated, events: written.acked.length, cpuMs }
  } finally {
    await sub.stop()
  }
}

const PATH_NAMES: Readonly<Record<string, string>> = { a: 'announcement', w: 'announcement after a wait', r: 'read', n: 'notification' }

const mean = (xs: ReadonlyArray<number>): number => (xs.length === 0 ? 0 : xs.reduce((a, x) => a + x, 0) / xs.length)

/** The slowest 1% of `all`, by how they were delivered (see LiveTail). */
const tailOf = (all: ReadonlyArray<Delivery>): LiveTail => {
  const slowest = [...all].sort((a, b) => b.latency - a.latency).slice(0, Math.ceil(all.length / 100))
  const atOnce = slowest.filter((d) => d.path === 'a' && d.heard !== undefined)
  return {
    events: slowest.length,
    waited: slowest.filter((d) => d.path === 'w').length,
    read: slowest.filter((d) => d.path === 'r').length,
    atOnce: atOnce.length,
    heardAfterAckMs: round(mean(atOnce.map((d) => Math.max(0, d.heard ?? 0))), 2),
    heardToHandlerMs: round(mean(atOnce.map((d) => d.latency - Math.max(0, d.heard ?? 0))), 2),
  }
}

/**
 * Live delivery, `rounds` runs of each, bare and satang alternating (the bare listener's p99 moves by
 * 2-5x between runs on a shared machine); percentiles over every event of every run of each.
 */
const live = async (ctx: BenchContext, db: BenchDatabase, label: string): Promise<{ bare: Live; satang: Live }> => {
  const runs = { bare: [] as LiveRun[], satang: [] as LiveRun[] }
  for (let r = 0; r < ctx.sizes.rounds; r++) {
    for (const impl of ['bare', 'satang'] as const) {
      const run = await liveRun(ctx, db, impl, `${label}l${impl === 'bare' ? 'b' : 's'}${String(r)}`)
      const p99 = percentile(run.latencies.map((d) => d.latency).sort((a, b) => a - b), 99)
      const c = run.cpuMs
      ctx.progress(
        `  live delivery, round ${String(r + 1)}, ${impl}: p99 ${String(round(p99, 2))} ms (${String(run.events)} events, missed ${String(run.missed)}; CPU ms: subscriber ${String(round(c.subscriber))}, writer ${String(round(c.writer))}, PostgreSQL ${c.postgres === null ? 'not read' : String(round(c.postgres))})`,
      )
      runs[impl].push(run)
    }
  }
  const summary = (xs: ReadonlyArray<LiveRun>): Live => {
    const all = xs.flatMap((x) => x.latencies)
    const latencies = all.map((d) => d.latency).sort((a, b) => a - b)
    // satang's: latencies by the path that delivered the event (an announcement, or a read).
    const byPath = new Map<string, number[]>()
    for (const d of all) byPath.set(d.path, [...(byPath.get(d.path) ?? []), d.latency])
    const paths = Object.fromEntries(
      [...byPath.entries()].map(([path, l]) => {
        l.sort((a, b) => a - b)
        return [PATH_NAMES[path] ?? 'unknown', { events: l.length, p50: round(percentile(l, 50), 2), p99: round(percentile(l, 99), 2) }]
      }),
    )
    const sum = (f: (x: LiveRun) => number): number => xs.reduce((a, x) => a + f(x), 0)
    const events = Math.max(1, sum((x) => x.events))
    const perEvent = (f: (x: LiveRun) => number): number => round((1000 * sum(f)) / events, 1)
    const postgres = xs.every((x) => x.cpuMs.postgres !== null) ? perEvent((x) => x.cpuMs.postgres ?? 0) : null
    const subscriber = perEvent((x) => x.cpuMs.subscriber)
    const writer = perEvent((x) => x.cpuMs.writer)
    const cpu = { subscriber, writer, postgres, total: round(subscriber + writer + (postgres ?? 0), 1) }
    return { cpu, p50: round(percentile(latencies, 50), 2), p99: round(percentile(latencies, 99), 2), missed: sum((x) => x.missed), duplicated: sum((x) => x.duplicated), events: sum((x) => x.events), paths, tail: tailOf(all) }
  }
  return { bare: summary(runs.bare), satang: summary(runs.satang) }
}

export const measureStore = async (ctx: BenchContext, db: BenchDatabase, events: number, label: string): Promise<StoreFigures> => {
  const s = String(ctx.sizes.appendSeconds)
  ctx.progress(`store figures with ${events.toLocaleString('en-US')} events in the store (${String(ctx.sizes.rounds)} rounds of ${s} s per figure, bare and satang alternating):`)
  const [append1, append8, batch8] = await alternate(ctx, ['appends, 1 writer, 1 event', 'appends, 8 writers, 1 event', 'appends, 8 writers, 100 events'], async (impl, r) =>
    (await runJson<{ results: Rate[] }>('store-load.ts', ['append', db.url, impl, '1x1,8x1,8x100', s, `${label}r${String(r)}`])).results,
  )
  // The first bare read is a warm-up: both then read from a warm buffer cache.
  const [readAll] = await alternate(ctx, ['read-all catch-up'], async (impl, r) => (await runJson<{ results: Rate[] }>('store-load.ts', ['read', db.url, impl, impl === 'bare' && r === 0 ? '2' : '1'])).results.slice(-1))
  if (append1 === undefined || append8 === undefined || batch8 === undefined || readAll === undefined) throw new Error('a store figure is missing')
  const { bare: liveBare, satang: liveSatang } = await live(ctx, db, label)
  ctx.progress(`  live delivery p99 over ${String(ctx.sizes.rounds)} rounds: satang ${String(liveSatang.p99)} ms (missed ${String(liveSatang.missed)}), bare ${String(liveBare.p99)} ms`)
  for (const [path, p] of Object.entries(liveSatang.paths)) ctx.progress(`    satang, delivered from ${path === 'read' ? 'a read' : `an ${path}`}: ${String(p.events)} events, p50 ${String(p.p50)} ms, p99 ${String(p.p99)} ms`)
  const cpuText = (c: LiveCpu): string => `${String(c.total)} µs (subscriber ${String(c.subscriber)}, writer ${String(c.writer)}, PostgreSQL ${c.postgres === null ? 'not read' : String(c.postgres)})`
  ctx.progress(`    CPU per live event: satang ${cpuText(liveSatang.cpu)}, bare ${cpuText(liveBare.cpu)}`)
  const t = liveSatang.tail
  ctx.progress(
    `    satang's slowest 1% (${String(t.events)} events): ${String(t.waited)} waited for an older transaction, ${String(t.read)} read, ${String(t.atOnce)} from an announcement at once (heard ${String(t.heardAfterAckMs)} ms after the acknowledgement, then ${String(t.heardToHandlerMs)} ms to the handler, means)`,
  )
  const pair = (f: (l: Live) => number): Pair => ({ satang: f(liveSatang), bare: f(liveBare) })
  return { events, append1, append8, batch8, readAll, liveP50: pair((l) => l.p50), liveP99: pair((l) => l.p99), liveMissed: pair((l) => l.missed), liveDuplicated: pair((l) => l.duplicated), liveEvents: pair((l) => l.events), livePaths: liveSatang.paths, liveTail: liveSatang.tail, liveCpu: { satang: liveSatang.cpu, bare: liveBare.cpu } }
}
