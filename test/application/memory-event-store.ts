import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { AppendError, AppendResult, EventStore, EventToAppend, ExpectedRevision, Position, ReadItem, RecordedEvent } from '../../src/application/ports/event-store.ts'

/**
 * An in-memory event store for the application's unit tests: optimistic appends, idempotent batches
 * (the same ids in the same stream again = the original result), global order. Not a product
 * adapter; the PostgreSQL store runs the same application code in the int tests.
 */
export type MemoryEventStore = EventStore & {
  readonly all: () => ReadonlyArray<RecordedEvent>
  /** Makes the next `n` appends to `stream` fail as if another writer got there first, after appending `events` for it. */
  readonly interfere: (stream: string, events: ReadonlyArray<EventToAppend>) => void
}

const pos = (n: number): Position => String(n).padStart(20, '0') as Position

export const makeMemoryEventStore = (now: () => Date = () => new Date()): MemoryEventStore => {
  const log: RecordedEvent[] = []
  const batches = new Map<string, { stream: string; ids: string; result: AppendResult }>()
  const pendingInterference = new Map<string, ReadonlyArray<EventToAppend>>()

  const revisionOf = (stream: string): bigint | undefined => {
    let r: bigint | undefined
    for (const e of log) if (e.streamName === stream) r = e.streamRevision
    return r
  }

  const holds = (expected: ExpectedRevision, actual: bigint | undefined): boolean => {
    if (expected === 'any') return true
    if (expected === 'no_stream') return actual === undefined
    if (expected === 'stream_exists') return actual !== undefined
    return actual === expected
  }

  const write = (stream: string, events: ReadonlyArray<EventToAppend>): AppendResult => {
    let rev = revisionOf(stream) ?? -1n
    for (const e of events) {
      rev += 1n
      log.push({ ...e, streamName: stream, streamRevision: rev, position: pos(log.length + 1), recordedAt: now() })
    }
    const result = { nextExpectedRevision: rev, position: pos(log.length) }
    for (const e of events) batches.set(e.eventId, { stream, ids: events.map((x) => x.eventId).join(','), result })
    return result
  }

  const append =
    (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision): TE.TaskEither<AppendError, AppendResult> =>
    async () => {
      const interference = pendingInterference.get(stream)
      if (interference !== undefined) {
        pendingInterference.delete(stream)
        write(stream, interference)
      }
      const first = events[0]
      if (first === undefined) return E.left({ _tag: 'InvalidAppend', stream, reason: 'a batch needs at least one event' })
      const known = batches.get(first.eventId)
      if (known !== undefined) {
        if (known.stream === stream && known.ids === events.map((e) => e.eventId).join(',')) return E.right({ ...known.result, alreadyStored: true })
        return E.left({ _tag: 'EventIdConflict', stream, eventIds: events.map((e) => e.eventId) })
      }
      if (events.some((e) => batches.has(e.eventId))) return E.left({ _tag: 'EventIdConflict', stream, eventIds: events.map((e) => e.eventId) })
      const actual = revisionOf(stream)
      if (!holds(expected, actual)) return E.left({ _tag: 'WrongExpectedVersion', stream, expected, actual: actual ?? 'no_stream' })
      return E.right(write(stream, events))
    }

  const items = (events: ReadonlyArray<RecordedEvent>): ReadonlyArray<ReadItem> => events.map((e) => E.right(e))
  const after = (from: Position | undefined) => (e: RecordedEvent) => from === undefined || e.position > from

  return {
    append,
    readStream: (stream, options = {}) => async () => {
      const mine = log.filter((e) => e.streamName === stream)
      const ordered = options.direction === 'backward' ? [...mine].reverse() : mine
      const from = options.fromRevision
      const filtered = from === undefined ? ordered : ordered.filter((e) => (options.direction === 'backward' ? e.streamRevision <= from : e.streamRevision >= from))
      return E.right(items(filtered.slice(0, options.maxCount ?? filtered.length)))
    },
    readAll: (options = {}) => async () => E.right(items(log.filter(after(options.from)).slice(0, options.maxCount ?? 1000))),
    countAfter: (from, cap) => async () => E.right(Math.min(cap, log.filter(after(from)).length)),
    headPosition: () => async () => E.right(log.at(-1)?.position),
    readCategory: (prefix, options = {}) => async () =>
      E.right(items(log.filter((e) => e.streamName.startsWith(prefix)).filter(after(options.from)).slice(0, options.maxCount ?? 1000))),
    subscribeToAll: () => {
      throw new Error('memory event store: subscriptions are not implemented')
    },
    close: async () => undefined,
    all: () => log,
    interfere: (stream, events) => {
      pendingInterference.set(stream, events)
    },
  }
}
