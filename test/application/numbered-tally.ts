import * as E from 'fp-ts/lib/Either.js'
import type { Decider, StreamCodec } from '../../src/application/command-handler.ts'
import { eventIdOf } from '../../src/application/event-id.ts'

/**
 * A test aggregate that shows on the stream itself whether each decision was made on the latest state:
 * each new key is recorded with `seq` = how many keys the state held, so an event decided on a stale
 * state carries a `seq` lower than its revision, and a key decided twice appears twice. A command may
 * need another key first (else it is rejected), so a rejection decided on a stale state would show too.
 */
export type TallyEvent = { readonly type: 'Numbered'; readonly key: string; readonly seq: number }
export type TallyCommand = { readonly key: string; readonly needs?: string | undefined }
export type TallyState = { readonly keys: ReadonlySet<string>; readonly count: number }
export type TallyRejection = { readonly _tag: 'Missing'; readonly key: string }

export const numberedTally: Decider<TallyCommand, TallyState, TallyEvent, TallyRejection> = {
  initialState: { keys: new Set(), count: 0 },
  evolve: (s, e) => ({ keys: new Set([...s.keys, e.key]), count: s.count + 1 }),
  decide: (c, s) => {
    if (s.keys.has(c.key)) return E.right([])
    if (c.needs !== undefined && !s.keys.has(c.needs)) return E.left({ _tag: 'Missing', key: c.needs })
    return E.right([{ type: 'Numbered', key: c.key, seq: s.count }])
  },
}

/** Event ids from the stream and the key: the same key decided twice in one stream is one event id. */
export const tallyCodec = (stream: string): StreamCodec<TallyEvent> => ({
  decode: (r) => {
    const key = r.data['key']
    const seq = r.data['seq']
    return r.type === 'Numbered' && typeof key === 'string' && typeof seq === 'number' ? E.right({ type: 'Numbered', key, seq }) : E.left(`not a Numbered event: ${r.type}`)
  },
  encode: (e) => ({
    eventId: eventIdOf(`${stream}:${e.key}`),
    type: 'Numbered',
    schemaVersion: 1,
    data: { key: e.key, seq: e.seq },
    metadata: { correlationId: 'tally', causationId: 'tally', recordedAt: '2026-01-01T00:00:00.000Z', source: 'operator' },
  }),
})
