// The event log the store, projection and scale figures share in one run: one database, loaded once
// and grown (100k, then 1M events) by two loader processes side by side (bench/support/load-log.ts),
// the bare table filled with the same rows. Dropped when the run ends (`cleanUp`).
import type { BenchContext } from '../types.ts'
import { countEvents, createBenchDatabase, type BenchDatabase } from './databases.ts'
import { runJson } from './processes.ts'

type SharedLog = { readonly db: BenchDatabase; nextChunk: number }

const KEY = 'shared-log'
const CLEANUPS = 'cleanups'

/** Registers work for the end of the run (the runner calls `cleanUp`). */
export const atEnd = (ctx: BenchContext, f: () => Promise<void>): void => {
  const list = (ctx.shared.get(CLEANUPS) as Array<() => Promise<void>> | undefined) ?? []
  list.push(f)
  ctx.shared.set(CLEANUPS, list)
}

export const cleanUp = async (shared: Map<string, unknown>): Promise<void> => {
  const list = (shared.get(CLEANUPS) as Array<() => Promise<void>> | undefined) ?? []
  for (const f of list.reverse()) await f().catch((e: unknown) => process.stderr.write(`bench: clean-up failed: ${e instanceof Error ? e.message : String(e)}\n`))
  shared.delete(CLEANUPS)
}

/** The shared log with at least `events` events (a valid, interleaved mix; see event-log.ts). */
export const sharedLog = async (ctx: BenchContext, events: number): Promise<BenchDatabase> => {
  let log = ctx.shared.get(KEY) as SharedLog | undefined
  if (log === undefined) {
    const db = await createBenchDatabase(ctx.databaseUrl, 'log', ctx.log, { bare: true })
    log = { db, nextChunk: 0 }
    ctx.shared.set(KEY, log)
    atEnd(ctx, db.drop)
  }
  const have = await countEvents(log.db.pool)
  if (have >= events) return log.db
  const missing = events - have
  ctx.progress(`loading ${missing.toLocaleString('en-US')} events into the shared log (${have.toLocaleString('en-US')} there; two loader processes, chained by the event table's trigger, the same rows into the bare table)…`)
  const started = performance.now()
  const loaded = [0, 0]
  let lastReport = 0
  const first = log.nextChunk
  const results = await Promise.all(
    [0, 1].map((w) =>
      runJson<{ events: number; lastChunk: number }>('load-log.ts', [log.db.url, String(first + w), '2', String(Math.ceil(missing / 2)), 'yes'], (line) => {
        const m = /^loaded (\d+)/.exec(line)
        if (m === null) return
        loaded[w] = Number(m[1])
        const total = (loaded[0] ?? 0) + (loaded[1] ?? 0)
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now()
          const s = (performance.now() - started) / 1000
          ctx.progress(`  ${total.toLocaleString('en-US')} of ${missing.toLocaleString('en-US')} loaded, ${Math.round(total / s).toLocaleString('en-US')} events/s`)
        }
      }),
    ),
  )
  log.nextChunk = Math.max(...results.map((r) => r.lastChunk)) + 1
  const seconds = (performance.now() - started) / 1000
  const now = await countEvents(log.db.pool)
  ctx.progress(`  loaded: the log holds ${now.toLocaleString('en-US')} events (${Math.round((now - have) / seconds).toLocaleString('en-US')} events/s, ${seconds.toFixed(0)} s); analysing`)
  await log.db.pool.query('analyze eventstore.events; analyze bare.events')
  return log.db
}
