import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { handleCommand, type Current } from '../../src/application/command-handler.ts'
import type { AppendResult, EventStore } from '../../src/application/ports/event-store.ts'
import { makeStreamCache, type StreamStates } from '../../src/application/stream-cache.ts'
import { silentLogger } from '../../src/logger.ts'
import { freshEventStoreSchema, type TestSchema } from '../support/postgres.ts'
import { numberedTally, tallyCodec, type TallyCommand, type TallyEvent, type TallyState } from './numbered-tally.ts'

const WRITER = fileURLToPath(new URL('./stream-cache-writer.ts', import.meta.url))

let db: TestSchema
let store: EventStore

beforeAll(async () => {
  db = await freshEventStoreSchema('stream_cache')
  store = makePostgresEventStore({ pool: db.pool(8), log: silentLogger() }, { schema: db.schema })
})
afterAll(async () => {
  await store.close()
  await db.drop()
})

/** The stream as stored: its events in revision order, each with its revision. */
const storedTally = async (stream: string): Promise<ReadonlyArray<TallyEvent & { readonly revision: number }>> => {
  const read = await store.readStream(stream)()
  if (E.isLeft(read)) throw new Error(`read ${stream}: ${read.left.operation}`)
  return read.right.map((item) => {
    if (E.isLeft(item)) throw new Error(`undecodable event in ${stream}`)
    const decoded = tallyCodec(stream).decode(item.right)
    if (E.isLeft(decoded)) throw new Error(decoded.left)
    return { ...decoded.right, revision: Number(item.right.streamRevision) }
  })
}

/** Each event was decided on the state right before it: its number is its revision, and no key is there twice. */
const expectEveryDecisionOnTheLatestState = (events: ReadonlyArray<TallyEvent & { readonly revision: number }>): void => {
  expect(events.map((e) => e.seq)).toEqual(events.map((e) => e.revision))
  expect(new Set(events.map((e) => e.key)).size).toBe(events.length)
}

type WriterCounts = { appended: number; nothing: number; rejected: number; wrongExpectedVersion: number; reads: number; wrote: number; hits: number; misses: number }

/** Starts the writer processes, lets them go at once, and returns what each counted. */
const runWriters = async (stream: string, cacheSize: number, lists: ReadonlyArray<ReadonlyArray<string>>): Promise<WriterCounts[]> => {
  const writers = lists.map((list) => {
    const child = spawn(process.execPath, [WRITER, db.url, db.schema, stream, String(cacheSize), list.join(',')], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    const ready = new Promise<void>((resolve, reject) => {
      const onData = (): void => {
        if (out.startsWith('ready\n')) resolve()
      }
      child.stdout.on('data', onData)
      child.once('exit', (code) => reject(new Error(`writer exited (${String(code)}) before it was ready: ${err}`)))
    })
    const exited = new Promise<WriterCounts>((resolve, reject) =>
      child.once('exit', (code) => {
        const last = out.trim().split('\n').at(-1) ?? ''
        if (code !== 0) reject(new Error(`writer exited ${String(code)}: ${err}`))
        else resolve(JSON.parse(last) as WriterCounts)
      }),
    )
    return { child, ready, exited }
  })
  await Promise.all(writers.map((w) => w.ready))
  for (const w of writers) w.child.stdin.end('go\n')
  return Promise.all(writers.map((w) => w.exited))
}

const shuffled = <A>(xs: ReadonlyArray<A>, seed: number): A[] => {
  const out = [...xs]
  let s = seed
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31
    const j = s % (i + 1)
    const a = out[i] as A
    out[i] = out[j] as A
    out[j] = a
  }
  return out
}

describe('the stream cache is never wrong', () => {
  it('four writer processes, each with its own cache, racing on one stream end with the same events as four without a cache: none lost, none twice, each decided on the latest state', async () => {
    const shared = Array.from({ length: 50 }, (_, i) => `k${String(i)}`)
    const lists = [0, 1, 2, 3].map((p) => [...shuffled(shared, p + 1), ...Array.from({ length: 10 }, (_, i) => `p${String(p)}-${String(i)}`)])
    const expectedKeys = [...new Set(lists.flat())].sort()

    const cachedStream = `tally-cached-${randomUUID()}`
    const plainStream = `tally-plain-${randomUUID()}`
    const cached = await runWriters(cachedStream, 1_000, lists)
    const plain = await runWriters(plainStream, 0, lists)

    const withCache = await storedTally(cachedStream)
    const without = await storedTally(plainStream)
    expectEveryDecisionOnTheLatestState(withCache)
    expectEveryDecisionOnTheLatestState(without)
    expect(withCache.map((e) => e.key).sort()).toEqual(expectedKeys)
    expect(without.map((e) => e.key).sort()).toEqual(expectedKeys)
    expect(withCache.map((e) => e.seq)).toEqual(without.map((e) => e.seq))

    for (const counts of [cached, plain]) {
      const sum = (k: keyof WriterCounts): number => counts.reduce((n, c) => n + c[k], 0)
      // Every command answered once; each key written by exactly one append, the others found it recorded
      // (or found the identical batch stored, when they decided it on the same state at the same time).
      expect(sum('wrote')).toBe(expectedKeys.length)
      expect(sum('appended')).toBeGreaterThanOrEqual(expectedKeys.length)
      expect(sum('appended') + sum('nothing')).toBe(lists.flat().length)
      expect(sum('rejected')).toBe(0)
    }
    // The cache was used, went stale under the other processes, and the store's guard caught it.
    const total = (k: keyof WriterCounts, cs: ReadonlyArray<WriterCounts>): number => cs.reduce((n, c) => n + c[k], 0)
    expect(total('hits', cached)).toBeGreaterThan(0)
    expect(total('wrongExpectedVersion', cached)).toBeGreaterThan(0)
    expect(total('reads', cached)).toBeLessThan(total('reads', plain))
    expect(total('hits', plain)).toBe(0)
  }, 120_000)

  it('over random interleavings of commands from three cache-holding handlers, every command is decided on the latest state or decided again after WrongExpectedVersion', async () => {
    const command = fc.record({
      handler: fc.integer({ min: 0, max: 2 }),
      key: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      needs: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined, freq: 2 }),
    })
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(command, { minLength: 1, maxLength: 12 }), fc.array(command, { maxLength: 4 }), async (s, commands, warmUp) => {
        const stream = `tally-prop-${randomUUID()}`
        const codec = tallyCodec(stream)
        const caches: ReadonlyArray<StreamStates<TallyState>> = [0, 1, 2].map(() => makeStreamCache(4).scope<TallyState>())
        // What the store has committed, as far as any handler has been told.
        let committed = -1
        const gated = (name: string, appended: (r: AppendResult) => void): EventStore => ({
          ...store,
          readStream: (st, o) => async () => {
            await s.schedule(Promise.resolve(), `${name} reads`)
            return store.readStream(st, o)()
          },
          append: (st, events, expected) => async () => {
            await s.schedule(Promise.resolve(), `${name} appends`)
            const r = await store.append(st, events, expected)()
            if (E.isRight(r)) {
              committed = Math.max(committed, Number(r.right.nextExpectedRevision))
              appended(r.right)
            }
            return r
          },
        })
        const handle = async (c: TallyCommand & { readonly handler: number }, decisions: Array<Current<TallyState>>, appends: AppendResult[]) => {
          const cache = caches[c.handler]
          const r = await handleCommand(gated(`handler ${String(c.handler)}`, (a) => appends.push(a)), stream, numberedTally, codec, (current) => (decisions.push(current), c), { cache, maxAttempts: 100 })()
          return r
        }
        // Warm the caches (in order), then let everything race.
        for (const c of warmUp) await s.waitFor(handle(c, [], []))
        const runs = commands.map(async (c, i) => {
          await s.schedule(Promise.resolve(), `command ${String(i)} starts`)
          const committedAtStart = committed
          const decisions: Array<Current<TallyState>> = []
          const appends: AppendResult[] = []
          const result = await handle(c, decisions, appends)
          return { c, committedAtStart, decisions, appends, result }
        })
        const outcomes = await s.waitFor(Promise.all(runs))

        const events = await storedTally(stream)
        expectEveryDecisionOnTheLatestState(events)
        const finalKeys = new Set(events.map((e) => e.key))
        for (const { c, decisions, appends, result } of outcomes) {
          if (E.isLeft(result) && result.left._tag !== 'Rejected') throw new Error(`command ${c.key} failed: ${result.left._tag}`)
          // Decided again only on a state at least as new as before (a retry reads what is there now).
          const revisions = decisions.map((d) => (d.revision === undefined ? -1 : Number(d.revision)))
          expect(revisions).toEqual([...revisions].sort((x, y) => x - y))
          const last = decisions.at(-1)
          if (last === undefined) throw new Error('a command without a decision')
          const lastRevision = last.revision === undefined ? -1 : Number(last.revision)
          if (E.isRight(result) && result.right.appended.length > 0 && appends.at(-1)?.alreadyStored !== true) {
            // Appended on the latest state: right after the revision it was decided on.
            expect(Number(result.right.revision)).toBe(lastRevision + 1)
          } else if (E.isRight(result) && result.right.appended.length > 0) {
            // Another handler stored the same key (the same event id) first: one event, not two.
            expect(events.filter((e) => e.key === c.key)).toHaveLength(1)
          } else if (E.isRight(result)) {
            // Nothing to do: the key is recorded, and stays recorded (so it is nothing on the latest state too).
            expect(last.state.keys.has(c.key)).toBe(true)
            expect(finalKeys.has(c.key)).toBe(true)
          }
        }
        for (const { c, committedAtStart, decisions, result } of outcomes) {
          if (E.isRight(result) || result.left._tag !== 'Rejected') continue
          // A rejection is answered on a state read during the command, never on an older cached one.
          const lastRevision = Number(decisions.at(-1)?.revision ?? -1n)
          expect(lastRevision).toBeGreaterThanOrEqual(committedAtStart)
          expect(c.needs === undefined ? true : !(decisions.at(-1)?.state.keys.has(c.needs) ?? false)).toBe(true)
        }
        // Every cached entry is the stream's state at its revision.
        for (const cache of caches) {
          const entry = cache.get(stream)
          if (entry === undefined) continue
          const prefix = events.filter((e) => e.revision <= Number(entry.revision))
          expect(entry.state.count).toBe(prefix.length)
          expect([...entry.state.keys].sort()).toEqual(prefix.map((e) => e.key).sort())
        }
      }),
      { numRuns: 100 },
    )
  }, 120_000)
})

describe('the stream cache within its byte budget', () => {
  it('filled past SATANG_STREAM_CACHE_BYTES it evicts the least recently used streams (its byte count never above the budget), and a command on an evicted stream, moved meanwhile by another writer, decides on the latest state', async () => {
    const budget = 4_096
    const cache = makeStreamCache(1_000, budget)
    const states = cache.scope<TallyState>()
    const run = `tally-budget-${randomUUID()}`
    const streams = Array.from({ length: 40 }, (_, i) => `${run}-${String(i)}`)
    const handle = async (stream: string, key: string, decisions: Array<Current<TallyState>> = []) => {
      const r = await handleCommand(store, stream, numberedTally, tallyCodec(stream), (current) => (decisions.push(current), { key }), { cache: states })()
      if (E.isLeft(r)) throw new Error(`${stream} ${key}: ${r.left._tag}`)
      return r.right
    }
    // Each stream gets three keys (each command after the first decided on its cached state).
    const byteCounts: number[] = []
    for (const stream of streams) {
      for (const key of ['a', 'b', 'c']) await handle(stream, key)
      byteCounts.push(cache.stats().bytes)
    }
    const stats = cache.stats()
    // Far fewer streams kept than written (the count cap of 1,000 never bound), and never more bytes than the budget.
    expect(Math.max(...byteCounts)).toBeLessThanOrEqual(budget)
    expect(stats.bytes).toBeGreaterThan(budget / 2)
    expect(stats.size).toBeLessThan(streams.length)
    expect(stats.size).toBeGreaterThan(0)
    expect(stats.evictions).toBeGreaterThanOrEqual(streams.length - stats.size)
    // The oldest streams are the ones gone; the newest are there, at their revision.
    const evicted = streams[0] ?? ''
    const newest = streams.at(-1) ?? ''
    expect(states.get(evicted)).toBeUndefined()
    expect(states.get(newest)?.revision).toBe(2n)

    // Another writer (no cache) moves the evicted stream on; the cache's command reads it and decides on it.
    await handleCommand(store, evicted, numberedTally, tallyCodec(evicted), () => ({ key: 'by-another-writer' }))()
    const misses = cache.stats().misses
    const decisions: Array<Current<TallyState>> = []
    const handled = await handle(evicted, 'd', decisions)
    expect(cache.stats().misses).toBe(misses + 1)
    expect(decisions.map((d) => d.revision)).toEqual([3n])
    expect(decisions[0]?.state.keys.has('by-another-writer')).toBe(true)
    expect(handled.revision).toBe(4n)
    const events = await storedTally(evicted)
    expectEveryDecisionOnTheLatestState(events)
    expect(events.map((e) => e.key)).toEqual(['a', 'b', 'c', 'by-another-writer', 'd'])
    // Cached again, within the budget still.
    expect(states.get(evicted)?.revision).toBe(4n)
    expect(cache.stats().bytes).toBeLessThanOrEqual(budget)
  }, 60_000)

  it('a state larger than the whole budget is not kept, and a budget of 0 keeps nothing', () => {
    const small = makeStreamCache(10, 300).scope<{ readonly text: string }>()
    small.set('s', { state: { text: 'x'.repeat(400) }, revision: 0n })
    expect(small.get('s')).toBeUndefined()
    const none = makeStreamCache(10, 0)
    const scope = none.scope<number>()
    scope.set('s', { state: 1, revision: 0n })
    expect(scope.get('s')).toBeUndefined()
    expect(none.stats()).toMatchObject({ size: 0, bytes: 0 })
  })

  it('without a byte budget any state is kept (up to the count) and no size is estimated; with one, sizes are counted', () => {
    const unbounded = makeStreamCache(2)
    const scope = unbounded.scope<{ readonly text: string }>()
    scope.set('a', { state: { text: 'x'.repeat(100_000) }, revision: 0n })
    scope.set('b', { state: { text: 'y' }, revision: 1n })
    expect(scope.get('a')?.state.text).toHaveLength(100_000)
    expect(unbounded.stats()).toMatchObject({ size: 2, bytes: 0 })
    scope.set('c', { state: { text: 'z' }, revision: 2n })
    expect(scope.get('b')).toBeUndefined()
    expect(unbounded.stats()).toMatchObject({ size: 2, evictions: 1 })
    const bounded = makeStreamCache(2, 1_000_000)
    bounded.scope<{ readonly text: string }>().set('a', { state: { text: 'x'.repeat(1000) }, revision: 0n })
    expect(bounded.stats().bytes).toBeGreaterThan(1000)
  })
})
