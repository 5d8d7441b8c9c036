import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { eventIdOf } from '../../src/application/event-id.ts'
import { handleCommand, loadStream, type Decider, type StreamCodec } from '../../src/application/command-handler.ts'
import type { EventStore, EventToAppend } from '../../src/application/ports/event-store.ts'
import { makeStreamCache } from '../../src/application/stream-cache.ts'
import { makeMemoryEventStore } from './memory-event-store.ts'

// A toy aggregate: a tally that accepts each named observation once.
type Ev = { readonly type: 'Observed'; readonly key: string }
type C = { readonly observe: string } | { readonly refuse: true }
type S = { readonly seen: ReadonlyArray<string> }
const tally: Decider<C, S, Ev, string> = {
  initialState: { seen: [] },
  evolve: (s, e) => ({ seen: [...s.seen, e.key] }),
  decide: (c, s) => ('refuse' in c ? E.left('refused') : s.seen.includes(c.observe) ? E.right([]) : E.right([{ type: 'Observed', key: c.observe }])),
}
const encoded = (key: string): EventToAppend => ({
  eventId: eventIdOf(`tally:${key}`),
  type: 'Observed',
  schemaVersion: 1,
  data: { key },
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'operator' },
})
const codec: StreamCodec<Ev> = {
  decode: (r) => (typeof r.data['key'] === 'string' ? E.right({ type: 'Observed', key: r.data['key'] }) : E.left('no key')),
  encode: (e) => encoded(e.key),
}

describe('handleCommand', () => {
  it('given nothing, when observing, then one event; the same observation again appends nothing', async () => {
    const store = makeMemoryEventStore()
    const first = await handleCommand(store, 't-1', tally, codec, () => ({ observe: 'a' }))()
    expect(E.isRight(first) && first.right.appended).toEqual([{ type: 'Observed', key: 'a' }])
    const again = await handleCommand(store, 't-1', tally, codec, () => ({ observe: 'a' }))()
    expect(E.isRight(again) && again.right.appended).toEqual([])
    expect(store.all()).toHaveLength(1)
  })

  it('a rejection is returned as Rejected and appends nothing', async () => {
    const store = makeMemoryEventStore()
    const r = await handleCommand(store, 't-2', tally, codec, (): C => ({ refuse: true }))()
    expect(r).toEqual(E.left({ _tag: 'Rejected', rejection: 'refused' }))
    expect(store.all()).toHaveLength(0)
  })

  it('on a conflicting append it re-reads and decides again on the new state', async () => {
    const store = makeMemoryEventStore()
    await handleCommand(store, 't-3', tally, codec, () => ({ observe: 'a' }))()
    // another writer records "b" between our read and our append
    store.interfere('t-3', [encoded('b')])
    const calls: number[] = []
    const r = await handleCommand(store, 't-3', tally, codec, (loaded) => {
      calls.push(loaded.state.seen.length)
      return { observe: 'c' }
    })()
    // the first decision was made on [a]; the append found [a, b]; the retry decided on [a, b]
    expect(calls).toEqual([1, 2])
    expect(E.isRight(r) && r.right.state.seen).toEqual(['a', 'b', 'c'])
    expect(store.all().map((e) => e.data['key'])).toEqual(['a', 'b', 'c'])
  })

  it('gives up after the bounded number of attempts', async () => {
    const store = makeMemoryEventStore()
    let n = 0
    const r = await handleCommand(store, 't-4', tally, codec, () => {
      store.interfere('t-4', [encoded(`other-${String(n++)}`)])
      return { observe: 'mine' }
    }, { maxAttempts: 3 })()
    expect(r).toEqual(E.left({ _tag: 'TooMuchContention', stream: 't-4', attempts: 3 }))
  })

  it('a stored event the codec cannot read stops the fold with its revision', async () => {
    const store = makeMemoryEventStore()
    await store.append('t-5', [{ ...encoded('x'), data: {} }], 'no_stream')()
    const r = await loadStream(store, 't-5', tally, codec)()
    expect(r).toEqual(E.left({ _tag: 'StreamUnreadable', stream: 't-5', streamRevision: 0n, reason: 'no key' }))
  })
})

/** The store, counting the stream reads it serves. */
const counted = (store: EventStore): EventStore & { readonly reads: () => number } => {
  let reads = 0
  return {
    ...store,
    readStream: (stream, options) => {
      reads += 1
      return store.readStream(stream, options)
    },
    reads: () => reads,
  }
}

describe('handleCommand with a stream cache', () => {
  it('decides a command on a known stream without reading it; a duplicate appends nothing and reads nothing', async () => {
    const memory = makeMemoryEventStore()
    const store = counted(memory)
    const cache = makeStreamCache(10).scope<S>()
    await handleCommand(store, 'c-1', tally, codec, () => ({ observe: 'a' }), { cache })()
    expect(store.reads()).toBe(1)
    expect(cache.get('c-1')).toEqual({ state: { seen: ['a'] }, revision: 0n })
    const second = await handleCommand(store, 'c-1', tally, codec, () => ({ observe: 'b' }), { cache })()
    expect(E.isRight(second) && second.right.appended).toEqual([{ type: 'Observed', key: 'b' }])
    const dup = await handleCommand(store, 'c-1', tally, codec, () => ({ observe: 'a' }), { cache })()
    expect(E.isRight(dup) && dup.right).toEqual({ state: { seen: ['a', 'b'] }, appended: [], appendedIds: [], revision: 1n })
    expect(store.reads()).toBe(1)
    expect(memory.all().map((e) => e.data['key'])).toEqual(['a', 'b'])
  })

  it('a stale entry loses the append (WrongExpectedVersion), is dropped, and the command is decided again on the stream as read', async () => {
    const memory = makeMemoryEventStore()
    const store = counted(memory)
    const cache = makeStreamCache(10).scope<S>()
    await handleCommand(store, 'c-2', tally, codec, () => ({ observe: 'a' }), { cache })()
    // Another process records "b": this cache still says [a] at revision 0.
    await memory.append('c-2', [encoded('b')], 0n)()
    const seenBy: Array<ReadonlyArray<string>> = []
    const r = await handleCommand(store, 'c-2', tally, codec, (current) => {
      seenBy.push(current.state.seen)
      return { observe: 'c' }
    }, { cache })()
    // Decided first on the cached [a], refused by the store, decided again on [a, b].
    expect(seenBy).toEqual([['a'], ['a', 'b']])
    expect(E.isRight(r) && r.right.appended).toEqual([{ type: 'Observed', key: 'c' }])
    expect(memory.all().map((e) => e.data['key'])).toEqual(['a', 'b', 'c'])
    expect(cache.get('c-2')).toEqual({ state: { seen: ['a', 'b', 'c'] }, revision: 2n })
  })

  it('a rejection decided on a cached state is checked on the stream as read before it is answered', async () => {
    const refuseUnlessSeen: Decider<C, S, Ev, string> = { ...tally, decide: (c, s) => ('refuse' in c ? E.left('refused') : s.seen.includes('ready') ? tally.decide(c, s) : E.left('not ready')) }
    const memory = makeMemoryEventStore()
    const store = counted(memory)
    const cache = makeStreamCache(10).scope<S>()
    await memory.append('c-3', [encoded('x')], 'no_stream')()
    const first = await handleCommand(store, 'c-3', refuseUnlessSeen, codec, () => ({ observe: 'a' }), { cache })()
    expect(first).toEqual(E.left({ _tag: 'Rejected', rejection: 'not ready' }))
    await memory.append('c-3', [encoded('ready')], 0n)()
    const reads = store.reads()
    const second = await handleCommand(store, 'c-3', refuseUnlessSeen, codec, () => ({ observe: 'a' }), { cache })()
    expect(E.isRight(second) && second.right.appended).toEqual([{ type: 'Observed', key: 'a' }])
    expect(store.reads()).toBe(reads + 1)
  })

  it('an idempotent answer about a batch stored further on does not become the cached state', async () => {
    const memory = makeMemoryEventStore()
    const cache = makeStreamCache(10).scope<S>()
    await handleCommand(memory, 'c-4', tally, codec, () => ({ observe: 'a' }), { cache })()
    // Elsewhere: "c" then the very batch this command will decide ("b"), at revision 2.
    await memory.append('c-4', [encoded('c')], 0n)()
    await memory.append('c-4', [encoded('b')], 1n)()
    const r = await handleCommand(memory, 'c-4', tally, codec, () => ({ observe: 'b' }), { cache })()
    // The store answers the retry of a stored batch with its original result (revision 2), but the
    // state decided on was revision 0: [a, b] is not the stream's state at revision 2.
    expect(E.isRight(r) && r.right.revision).toBe(2n)
    expect(cache.get('c-4')).toBeUndefined()
  })

  it('a batch another writer stored first (same ids, its own details) is not cached as this command decided it', async () => {
    const memory = makeMemoryEventStore()
    const cache = makeStreamCache(10).scope<S>()
    await handleCommand(memory, 'c-5', tally, codec, () => ({ observe: 'a' }), { cache })()
    await memory.append('c-5', [encoded('b')], 0n)()
    const r = await handleCommand(memory, 'c-5', tally, codec, () => ({ observe: 'b' }), { cache })()
    expect(E.isRight(r) && r.right.revision).toBe(1n)
    expect(cache.get('c-5')).toBeUndefined()
  })

  it('keeps at most its capacity, the least recently used out, across scopes', () => {
    const cache = makeStreamCache(2)
    const one = cache.scope<string>()
    const two = cache.scope<number>()
    one.set('s', { state: 'a', revision: 0n })
    two.set('s', { state: 1, revision: 0n })
    expect(one.get('s')?.state).toBe('a')
    two.set('t', { state: 2, revision: 3n })
    expect(two.get('s')).toBeUndefined()
    expect(one.get('s')).toEqual({ state: 'a', revision: 0n })
    expect(two.get('t')).toEqual({ state: 2, revision: 3n })
    expect(cache.stats()).toMatchObject({ size: 2, evictions: 1 })
    const off = makeStreamCache(0).scope<string>()
    off.set('s', { state: 'a', revision: 0n })
    expect(off.get('s')).toBeUndefined()
  })
})
