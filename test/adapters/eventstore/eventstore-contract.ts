import { randomUUID } from 'node:crypto'
import { inspect } from 'node:util'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  Position,
  ReadItem,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  UndecodableEvent,
} from '../../../src/application/ports/event-store.ts'

/** A store under test and how to release it. Each call must open its own connections. */
export type StoreHandle = { readonly store: EventStore; readonly close: () => Promise<void> }

export type ContractOptions = {
  /** Stores, as the next event of `stream`, an event whose envelope cannot be decoded (bypassing the port). */
  readonly writeUndecodable: (stream: string) => Promise<void>
  /** When set, the suite is reported as skipped (the caller prints why). */
  readonly skipReason?: string
  /** Default 8 writers, 20,000 events. */
  readonly concurrency?: { readonly writers: number; readonly events: number }
}

const metadata = { correlationId: 'corr-1', causationId: 'cause-1', recordedAt: '2025-01-02T03:04:05.000Z', source: 'contract-test' }

const anEvent = (overrides: Partial<EventToAppend> = {}): EventToAppend => ({
  eventId: randomUUID(),
  type: 'ThingHappened',
  schemaVersion: 1,
  data: { amount: '100.00' },
  metadata,
  ...overrides,
})
const someEvents = (n: number): EventToAppend[] => Array.from({ length: n }, (_, i) => anEvent({ data: { i } }))

const right = async <L, A>(te: TE.TaskEither<L, A>): Promise<A> => {
  const r = await te()
  if (E.isLeft(r)) throw new Error(`expected success, got ${inspect(r.left, { depth: 4 })}`)
  return r.right
}
const left = async <L, A>(te: TE.TaskEither<L, A>): Promise<L> => {
  const r = await te()
  if (E.isRight(r)) throw new Error(`expected a failure, got ${inspect(r.right, { depth: 4 })}`)
  return r.left
}
const decoded = (items: ReadonlyArray<ReadItem>): RecordedEvent[] =>
  items.map((item) => {
    if (E.isLeft(item)) throw new Error(`undecodable event: ${inspect(item.left)}`)
    return item.right
  })
const positionOf = (item: ReadItem): Position => (E.isRight(item) ? item.right.position : item.left.position)
const streamOf = (item: ReadItem): string => (E.isRight(item) ? item.right.streamName : item.left.stream)

const waitUntil = async (what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

type Collector = { readonly items: ReadItem[]; readonly subscription: Subscription }
const collect = (store: EventStore, options: SubscribeOptions, keep: (item: ReadItem) => boolean = () => true): Collector => {
  const items: ReadItem[] = []
  const subscription = store.subscribeToAll(options, (item) => {
    if (keep(item)) items.push(item)
    return Promise.resolve()
  })
  return { items, subscription }
}

/** The behaviour every `EventStore` adapter must show; each test file calls it with its adapter. */
export const eventStoreContract = (name: string, makeStore: () => Promise<StoreHandle>, opts: ContractOptions): void => {
  const suite = opts.skipReason === undefined ? describe : describe.skip
  suite(`EventStore contract: ${name}`, () => {
    let handle: StoreHandle
    let store: EventStore
    const run = randomUUID().slice(0, 8)
    let streamCount = 0
    const aStream = (category = 'order'): string => `${category}-${run}-${String(++streamCount)}`
    /** A position before anything this test appends next. */
    const mark = async (): Promise<Position> => (await right(store.append(aStream('marker'), [anEvent()], 'any'))).position
    /**
     * Waits until the global log is readable after `from` up to its head as committed now. A store may
     * hold committed events back from readers for a moment (PostgreSQL: behind a transaction of another
     * client of the cluster that is still running); the reads below are about order and content.
     */
    const readable = async (from: Position): Promise<void> => {
      const head = await right(store.headPosition())
      for (let i = 0; head !== undefined && head > from && i < 500; i++) {
        const page = await right(store.readAll({ from, maxCount: 1_000_000 }))
        const last = page.at(-1)
        if (last !== undefined && (E.isRight(last) ? last.right.position : last.left.position) >= head) return
        await new Promise((r) => setTimeout(r, 20))
      }
    }

    beforeAll(async () => {
      handle = await makeStore()
      store = handle.store
    })
    afterAll(async () => {
      await handle.close()
    })

    describe('append and read back', () => {
      it('stores the envelope and numbers revisions from 0', async () => {
        const stream = aStream()
        const batch = [anEvent({ type: 'OrderCreated', schemaVersion: 2, metadata: { ...metadata, extra: { nested: [1, 'two', null] } } }), anEvent()]
        const result = await right(store.append(stream, batch, 'no_stream'))
        expect(result.nextExpectedRevision).toBe(1n)
        const read = decoded(await right(store.readStream(stream)))
        expect(read.map((e) => e.streamRevision)).toEqual([0n, 1n])
        const [first, second] = read
        expect(first).toMatchObject({ eventId: batch[0]?.eventId, type: 'OrderCreated', schemaVersion: 2, data: { amount: '100.00' }, streamName: stream })
        expect(first?.metadata).toEqual({ ...metadata, extra: { nested: [1, 'two', null] } })
        expect(first?.recordedAt).toBeInstanceOf(Date)
        expect(second?.position).toBe(result.position)
        expect(first !== undefined && second !== undefined && first.position < second.position).toBe(true)
      })

      it('reads a missing stream as empty', async () => {
        expect(await right(store.readStream(aStream()))).toEqual([])
      })
    })

    describe('expected revision', () => {
      const seeded = async (n: number): Promise<string> => {
        const stream = aStream()
        await right(store.append(stream, someEvents(n), 'no_stream'))
        return stream
      }
      const conflict = async (stream: string, expected: ExpectedRevision, actual: bigint | 'no_stream'): Promise<void> => {
        const error = await left(store.append(stream, [anEvent()], expected))
        expect(error).toEqual({ _tag: 'WrongExpectedVersion', stream, expected, actual })
      }

      it('no_stream: succeeds on a new stream, conflicts on an existing one', async () => {
        const stream = aStream()
        expect((await right(store.append(stream, [anEvent()], 'no_stream'))).nextExpectedRevision).toBe(0n)
        await conflict(stream, 'no_stream', 0n)
      })
      it('stream_exists: conflicts on a new stream, succeeds on an existing one', async () => {
        const stream = aStream()
        await conflict(stream, 'stream_exists', 'no_stream')
        await right(store.append(stream, [anEvent()], 'any'))
        expect((await right(store.append(stream, [anEvent()], 'stream_exists'))).nextExpectedRevision).toBe(1n)
      })
      it('exact revision: succeeds when it matches, conflicts with the actual revision otherwise', async () => {
        const stream = await seeded(3)
        await conflict(stream, 1n, 2n)
        await conflict(stream, 3n, 2n)
        await conflict(aStream(), 0n, 'no_stream')
        expect((await right(store.append(stream, [anEvent()], 2n))).nextExpectedRevision).toBe(3n)
      })
      it('any: creates a stream and appends to an existing one', async () => {
        const stream = aStream()
        expect((await right(store.append(stream, someEvents(2), 'any'))).nextExpectedRevision).toBe(1n)
        expect((await right(store.append(stream, someEvents(2), 'any'))).nextExpectedRevision).toBe(3n)
      })
      it('any never fails because of contention', async () => {
        const stream = aStream()
        const results = await Promise.all(Array.from({ length: 20 }, () => store.append(stream, someEvents(3), 'any')()))
        expect(results.every(E.isRight)).toBe(true)
        const revisions = decoded(await right(store.readStream(stream))).map((e) => e.streamRevision)
        expect(revisions).toEqual(Array.from({ length: 60 }, (_, i) => BigInt(i)))
      })
    })

    describe('idempotency by event id', () => {
      it('a retried batch returns the original result and stores one copy', async () => {
        const stream = aStream()
        const batch = someEvents(3)
        const original = await right(store.append(stream, batch, 'no_stream'))
        expect(original.alreadyStored).not.toBe(true)
        // The original result, flagged as stored already where the adapter can tell.
        const replayed = (r: AppendResult): void => {
          expect({ nextExpectedRevision: r.nextExpectedRevision, position: r.position }).toEqual(original)
          expect(r.alreadyStored ?? true).toBe(true)
        }
        replayed(await right(store.append(stream, batch, 'no_stream')))
        replayed(await right(store.append(stream, batch, 'any')))
        await right(store.append(stream, someEvents(2), 2n))
        // A reply lost long ago: the stream has moved on, the retry still gets the original answer.
        replayed(await right(store.append(stream, batch, 'no_stream')))
        replayed(await right(store.append(stream, batch, 'any')))
        expect(decoded(await right(store.readStream(stream)))).toHaveLength(5)
      })
      it('the same batch appended twice at once is stored once, and both get the same result', async () => {
        for (const expected of ['no_stream', 'any'] as const) {
          const stream = aStream()
          const batch = someEvents(3)
          const [a, b] = await Promise.all([store.append(stream, batch, expected)(), store.append(stream, batch, expected)()])
          if (E.isLeft(a) || E.isLeft(b)) throw new Error(`both appends succeed: ${JSON.stringify([a._tag, b._tag])}`)
          expect({ nextExpectedRevision: a.right.nextExpectedRevision, position: a.right.position }).toEqual({ nextExpectedRevision: b.right.nextExpectedRevision, position: b.right.position })
          // At most one of them wrote the batch.
          expect(a.right.alreadyStored === true || b.right.alreadyStored === true || (a.right.alreadyStored === undefined && b.right.alreadyStored === undefined)).toBe(true)
          expect(await right(store.readStream(stream))).toHaveLength(3)
        }
      })
      it('a batch that reuses only some stored ids is a conflict and stores nothing', async () => {

        const stream = aStream()
        const [a, b] = someEvents(2)
        if (a === undefined || b === undefined) throw new Error('two events')
        await right(store.append(stream, [a, b], 'no_stream'))
        const c = anEvent()
        const error = await left(store.append(stream, [b, c], 'any'))
        expect(error._tag).toBe('EventIdConflict')
        expect(decoded(await right(store.readStream(stream))).map((e) => e.eventId)).toEqual([a.eventId, b.eventId])
      })
    })

    describe('batch atomicity', () => {
      it('a conflicting batch writes nothing', async () => {
        const stream = aStream()
        await right(store.append(stream, someEvents(2), 'no_stream'))
        await left(store.append(stream, someEvents(5), 0n))
        await left(store.append(stream, someEvents(5), 'no_stream'))
        expect(await right(store.readStream(stream))).toHaveLength(2)
      })
      it('an invalid batch is rejected before anything is written', async () => {
        const stream = aStream()
        const dup = anEvent()
        expect((await left(store.append(stream, [], 'any')))._tag).toBe('InvalidAppend')
        expect((await left(store.append(stream, [anEvent(), dup, dup], 'any')))._tag).toBe('InvalidAppend')
        expect((await left(store.append(stream, [anEvent({ eventId: 'not-a-uuid' })], 'any')))._tag).toBe('InvalidAppend')
        expect((await left(store.append(stream, [anEvent({ metadata: { ...metadata, schemaVersion: 3 } })], 'any')))._tag).toBe('InvalidAppend')
        expect((await left(store.append('$system', [anEvent()], 'any')))._tag).toBe('InvalidAppend')
        expect((await left(store.append(`${stream}\u0000`, [anEvent()], 'any')))._tag).toBe('InvalidAppend')
        expect((await left(store.append(`${stream}\ud800`, [anEvent()], 'any')))._tag).toBe('InvalidAppend')
        expect(await right(store.readStream(stream))).toEqual([])
      })
    })

    describe('reading a stream', () => {
      it('reads forward and backward, from a revision, up to a count', async () => {
        const stream = aStream()
        await right(store.append(stream, someEvents(10), 'no_stream'))
        const revisions = async (o: Parameters<EventStore['readStream']>[1]): Promise<bigint[]> =>
          decoded(await right(store.readStream(stream, o))).map((e) => e.streamRevision)
        expect(await revisions({})).toHaveLength(10)
        expect(await revisions({ fromRevision: 7n })).toEqual([7n, 8n, 9n])
        expect(await revisions({ fromRevision: 2n, maxCount: 3 })).toEqual([2n, 3n, 4n])
        expect(await revisions({ direction: 'backward', maxCount: 3 })).toEqual([9n, 8n, 7n])
        expect(await revisions({ direction: 'backward', fromRevision: 4n })).toEqual([4n, 3n, 2n, 1n, 0n])
        expect(await revisions({ fromRevision: 10n })).toEqual([])
      })
    })

    describe('the global log', () => {
      it('reads forward from an exclusive position, in append order', async () => {
        const from = await mark()
        const streams = [aStream('log'), aStream('log'), aStream('log')]
        const ids: string[] = []
        for (const s of streams) {
          const batch = someEvents(2)
          ids.push(...batch.map((e) => e.eventId))
          await right(store.append(s, batch, 'no_stream'))
        }
        const mine = (items: ReadonlyArray<ReadItem>): RecordedEvent[] => decoded(items.filter((i) => streams.includes(streamOf(i))))
        await readable(from)
        const page = mine(await right(store.readAll({ from, maxCount: 1000 })))
        expect(page.map((e) => e.eventId)).toEqual(ids)
        const positions = page.map((e) => e.position)
        expect([...positions].sort()).toEqual(positions)
        expect(new Set(positions).size).toBe(positions.length)
        const first = page[0]
        if (first === undefined) throw new Error('no events')
        expect(mine(await right(store.readAll({ from: first.position, maxCount: 1000 }))).map((e) => e.eventId)).toEqual(ids.slice(1))
        expect(mine(await right(store.readAll({ from, maxCount: 2 }))).length).toBeLessThanOrEqual(2)
      })

      it('counts the events after a position, up to a cap', async () => {
        const from = await mark()
        const appended = await right(store.append(aStream('count'), someEvents(5), 'no_stream'))
        // An event is counted once readable: a transaction open elsewhere on the server may hold it back a moment.
        for (let i = 0; i < 100 && (await right(store.countAfter(from, 100))) < 5; i++) await new Promise((r) => setTimeout(r, 20))
        expect(await right(store.countAfter(from, 100))).toBe(5)
        expect(await right(store.countAfter(from, 3))).toBe(3)
        expect(await right(store.countAfter(appended.position, 100))).toBe(0)
        expect(await right(store.countAfter(undefined, 2))).toBe(2)
        expect(await left(store.countAfter('garbage' as Position, 10))).toEqual({ _tag: 'InvalidPosition', position: 'garbage' })
      })

      it('rejects a position it did not produce', async () => {
        const error = await left(store.readAll({ from: 'garbage' as Position }))
        expect(error).toEqual({ _tag: 'InvalidPosition', position: 'garbage' })
        const sub = store.subscribeToAll({ from: 'garbage' as Position }, () => Promise.resolve())
        expect(await sub.closed).toEqual(E.left({ _tag: 'InvalidPosition', position: 'garbage' }))
      })

      it('reads a category: streams by name prefix, in global order, paged by position', async () => {
        const from = await mark()
        const category = `cat${run}x-`
        const a1 = `${category}1`
        const a2 = `${category}2`
        const other = `cat${run}y-1`
        const order: string[] = []
        for (const s of [a1, other, a2, a1]) {
          const e = anEvent()
          if (s !== other) order.push(e.eventId)
          await right(store.append(s, [e], 'any'))
        }
        await readable(from)
        const read = decoded(await right(store.readCategory(category, { from })))
        expect(read.map((e) => e.eventId)).toEqual(order)
        expect(read.every((e) => e.streamName.startsWith(category))).toBe(true)
        const second = read[1]
        if (second === undefined) throw new Error('no second event')
        expect(decoded(await right(store.readCategory(category, { from: second.position }))).map((e) => e.eventId)).toEqual(order.slice(2))
        expect(decoded(await right(store.readCategory(category, { from, maxCount: 1 }))).map((e) => e.eventId)).toEqual(order.slice(0, 1))
      })
    })

    describe('undecodable events', () => {
      it('are reported with stream and position by every read, never dropped', async () => {
        const from = await mark()
        const stream = aStream('bad')
        await right(store.append(stream, [anEvent()], 'no_stream'))
        await opts.writeUndecodable(stream)
        await right(store.append(stream, [anEvent()], 1n))

        const items = await right(store.readStream(stream))
        expect(items.map(E.isRight)).toEqual([true, false, true])
        const bad = items[1]
        if (bad === undefined || E.isRight(bad)) throw new Error('expected an undecodable event')
        const report: UndecodableEvent = bad.left
        expect(report).toMatchObject({ _tag: 'UndecodableEvent', stream, streamRevision: 1n })
        expect(report.reason).not.toBe('')
        expect(typeof report.position).toBe('string')

        await readable(from)
        const all = (await right(store.readAll({ from }))).filter((i) => streamOf(i) === stream)
        expect(all.map(E.isRight)).toEqual([true, false, true])
        expect(all.map(positionOf)).toEqual(items.map(positionOf))

        const seen = collect(store, { from }, (i) => streamOf(i) === stream)
        await waitUntil('the subscriber to see the stream', () => seen.items.length === 3)
        await seen.subscription.stop()
        expect(seen.items.map(E.isRight)).toEqual([true, false, true])
      })
    })

    describe('subscriptions', () => {
      it('catch up from a checkpoint, then follow live, one delivery at a time', async () => {
        const from = await mark()
        const stream = aStream('sub')
        await right(store.append(stream, someEvents(5), 'no_stream'))
        let inFlight = 0
        let maxInFlight = 0
        const got: RecordedEvent[] = []
        const subscription = store.subscribeToAll({ from }, async (item) => {
          inFlight++
          maxInFlight = Math.max(maxInFlight, inFlight)
          await new Promise((r) => setTimeout(r, 1))
          if (E.isRight(item) && item.right.streamName === stream) got.push(item.right)
          inFlight--
        })
        await waitUntil('catch-up', () => got.length === 5)
        await right(store.append(stream, someEvents(5), 4n))
        await waitUntil('live events', () => got.length === 10)
        await subscription.stop()
        expect(await subscription.closed).toEqual(E.right(undefined))
        expect(got.map((e) => e.streamRevision)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)))
        expect(maxInFlight).toBe(1)
      })

      it('filter by stream-name prefix', async () => {
        const from = await mark()
        const category = `pre${run}-`
        const seen = collect(store, { from, streamNamePrefix: category })
        await right(store.append(`${category}1`, someEvents(2), 'no_stream'))
        await right(store.append(`other${run}-1`, someEvents(2), 'no_stream'))
        await right(store.append(`${category}2`, someEvents(1), 'no_stream'))
        await waitUntil('three events', () => seen.items.length >= 3)
        await new Promise((r) => setTimeout(r, 50))
        await seen.subscription.stop()
        expect(seen.items.map(streamOf)).toEqual([`${category}1`, `${category}1`, `${category}2`])
      })

      it('stop when the handler fails, reporting where', async () => {
        const from = await mark()
        const stream = aStream('fail')
        await right(store.append(stream, someEvents(3), 'no_stream'))
        let calls = 0
        const subscription = store.subscribeToAll({ from }, (item) => {
          if (streamOf(item) !== stream) return Promise.resolve()
          calls++
          return calls === 2 ? Promise.reject(new Error('projection broke')) : Promise.resolve()
        })
        const closed = await subscription.closed
        if (E.isRight(closed)) throw new Error('expected the subscription to fail')
        expect(closed.left._tag).toBe('SubscriberFailed')
        const revision1 = decoded(await right(store.readStream(stream)))[1]
        expect(closed.left._tag === 'SubscriberFailed' && closed.left.position).toBe(revision1?.position)
        expect(calls).toBe(2)
      })
    })

    describe('concurrency', () => {
      const writers = opts.concurrency?.writers ?? 8
      const total = opts.concurrency?.events ?? 20_000

      it(
        `${String(writers)} writers, ${String(total)} events, distinct and shared streams: a live subscriber gets each event once, in order`,
        async () => {
          const prefix = `conc${run}-`
          const mine = (item: ReadItem): boolean => streamOf(item).startsWith(prefix)
          const from = await mark()
          const stores = await Promise.all(Array.from({ length: writers + 1 }, () => makeStore()))
          const [subscriberStore, ...writerStores] = stores
          if (subscriberStore === undefined) throw new Error('no subscriber store')

          // A: follows live from before the first write, checking the cursor at every delivery.
          const a: ReadItem[] = []
          let previous: Position = from
          let outOfOrder = 0
          const subA = subscriberStore.store.subscribeToAll({ from }, (item) => {
            const p = positionOf(item)
            if (!(p > previous)) outOfOrder++
            previous = p
            if (mine(item)) a.push(item)
            return Promise.resolve()
          })
          // B: stopped mid-run and restarted from its last checkpoint while the writers go on.
          const b: ReadItem[] = []
          let bCheckpoint: Position = from
          let subB2: Subscription | undefined
          const subB1 = subscriberStore.store.subscribeToAll({ from }, (item) => {
            bCheckpoint = positionOf(item)
            if (mine(item)) b.push(item)
            if (b.length === Math.floor(total / 3)) void subB1.stop()
            return Promise.resolve()
          })
          void subB1.closed.then(() => {
            subB2 = subscriberStore.store.subscribeToAll({ from: bCheckpoint }, (item) => {
              if (mine(item)) b.push(item)
              return Promise.resolve()
            })
          })

          const shared = Array.from({ length: 4 }, (_, i) => `${prefix}shared-${String(i)}`)
          const appended = new Set<string>()
          const perWriter = Math.ceil(total / writers)
          let failures = 0
          await Promise.all(
            writerStores.map(async ({ store: w }, wi) => {
              const own = Array.from({ length: 5 }, (_, i) => ({ name: `${prefix}w${String(wi)}-${String(i)}`, revision: -1n }))
              let written = 0
              let n = 0
              while (written < perWriter) {
                n++
                const useShared = n % 3 === 0
                const size = Math.min(perWriter - written, useShared ? 1 + (n % 3) : 1 + (n % 5))
                const batch = someEvents(size)
                if (useShared) {
                  const r = await w.append(shared[n % shared.length] ?? '', batch, 'any')()
                  if (E.isLeft(r)) failures++
                } else {
                  const s = own[n % own.length]
                  if (s === undefined) throw new Error('no stream')
                  const r = await w.append(s.name, batch, s.revision === -1n ? 'no_stream' : s.revision)()
                  if (E.isLeft(r)) failures++
                  else s.revision = r.right.nextExpectedRevision
                }
                for (const e of batch) appended.add(e.eventId)
                written += size
              }
            }),
          )
          expect(failures).toBe(0)
          const n = appended.size
          expect(n).toBeGreaterThanOrEqual(total)

          await waitUntil(`subscriber A to receive ${String(n)} events (has ${String(a.length)})`, () => a.length >= n, 60_000)
          await waitUntil(`subscriber B to receive ${String(n)} events`, () => b.length >= n, 60_000)
          await new Promise((r) => setTimeout(r, 100))
          await subA.stop()
          await subB2?.stop()

          const ids = decoded(a).map((e) => e.eventId)
          expect(ids.length).toBe(n)
          expect(new Set(ids).size).toBe(n)
          expect(ids.every((id) => appended.has(id))).toBe(true)
          expect(outOfOrder).toBe(0)
          const next = new Map<string, bigint>()
          let streamOrderBreaks = 0
          for (const e of decoded(a)) {
            const expected = next.get(e.streamName) ?? 0n
            if (e.streamRevision !== expected) streamOrderBreaks++
            next.set(e.streamName, e.streamRevision + 1n)
          }
          expect(streamOrderBreaks).toBe(0)
          expect(decoded(b).map((e) => e.eventId)).toEqual(ids)

          // A subscriber restarted afterwards from a mid-way checkpoint resumes with no gap or repeat.
          const middle = Math.floor(n / 2)
          const checkpoint = a[middle - 1]
          if (checkpoint === undefined) throw new Error('no mid-way checkpoint')
          const c = collect(subscriberStore.store, { from: positionOf(checkpoint) }, mine)
          await waitUntil('the restarted subscriber', () => c.items.length >= n - middle, 60_000)
          await new Promise((r) => setTimeout(r, 100))
          await c.subscription.stop()
          expect(decoded(c.items).map((e) => e.eventId)).toEqual(ids.slice(middle))

          await Promise.all(stores.map((s) => s.close()))
        },
        120_000,
      )
    })
  })
}
