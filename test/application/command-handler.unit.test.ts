import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { eventIdOf } from '../../src/application/event-id.ts'
import { handleCommand, loadStream, type Decider, type StreamCodec } from '../../src/application/command-handler.ts'
import type { EventToAppend } from '../../src/application/ports/event-store.ts'
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
      calls.push(loaded.events.length)
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
