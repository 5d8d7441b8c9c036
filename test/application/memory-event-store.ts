import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { decodeEvent, validateAppend } from '../../src/adapters/eventstore/envelope.ts'
import type {
  AppendError,
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  InvalidPosition,
  Position,
  ReadItem,
  RecordedEvent,
  Subscription,
  SubscriptionError,
} from '../../src/application/ports/event-store.ts'

/**
 * An in-memory event store for the application's unit tests: optimistic appends, idempotent batches
 * (the same ids in the same stream again = the original result), global order, subscriptions. Not a
 * product adapter, but it passes the store contract suite (memory-event-store.unit.test.ts), and the
 * PostgreSQL store runs the same application code in the int tests.
 */
export type MemoryEventStore = EventStore & {
  readonly all: () => ReadonlyArray<RecordedEvent>
  /** Makes the next `n` appends to `stream` fail as if another writer got there first, after appending `events` for it. */
  readonly interfere: (stream: string, events: ReadonlyArray<EventToAppend>) => void
  /** Stores, as the next event of `stream`, one whose envelope cannot be decoded (as a damaged row would be). */
  readonly writeUndecodable: (stream: string) => void
}

/** The log several stores can share (as several processes share one database). */
export type MemoryLog = {
  readonly items: ReadItem[]
  readonly streams: Map<string, ReadItem[]>
  readonly batches: Map<string, { readonly stream: string; readonly ids: string; readonly result: AppendResult }>
  readonly waiters: Set<() => void>
}

export const makeMemoryLog = (): MemoryLog => ({ items: [], streams: new Map(), batches: new Map(), waiters: new Set() })

const POSITION = /^\d{20}$/
const pos = (n: number): Position => String(n).padStart(20, '0') as Position
/** How many events of the log precede the one after `from`. */
const indexAfter = (from: Position | undefined): E.Either<InvalidPosition, number> =>
  from === undefined ? E.right(0) : POSITION.test(from) ? E.right(Number(from)) : E.left({ _tag: 'InvalidPosition', position: from })
const positionOf = (item: ReadItem): Position => (E.isRight(item) ? item.right.position : item.left.position)
const streamOf = (item: ReadItem): string => (E.isRight(item) ? item.right.streamName : item.left.stream)
const revisionOfItem = (item: ReadItem): bigint => (E.isRight(item) ? item.right.streamRevision : item.left.streamRevision)

export const makeMemoryEventStore = (now: () => Date = () => new Date(), log: MemoryLog = makeMemoryLog()): MemoryEventStore => {
  const pendingInterference = new Map<string, ReadonlyArray<EventToAppend>>()
  const subscriptions = new Set<Subscription>()

  const revisionOf = (stream: string): bigint | undefined => {
    const last = log.streams.get(stream)?.at(-1)
    return last === undefined ? undefined : revisionOfItem(last)
  }

  const holds = (expected: ExpectedRevision, actual: bigint | undefined): boolean => {
    if (expected === 'any') return true
    if (expected === 'no_stream') return actual === undefined
    if (expected === 'stream_exists') return actual !== undefined
    return actual === expected
  }

  const store = (stream: string, raw: ReadonlyArray<Omit<Parameters<typeof decodeEvent>[0], 'streamName' | 'streamRevision' | 'position' | 'recordedAt'>>): bigint => {
    let rev = revisionOf(stream) ?? -1n
    const mine = log.streams.get(stream) ?? []
    log.streams.set(stream, mine)
    for (const r of raw) {
      rev += 1n
      const item = decodeEvent({ ...r, streamName: stream, streamRevision: rev, position: pos(log.items.length + 1), recordedAt: now() })
      log.items.push(item)
      mine.push(item)
    }
    for (const wake of log.waiters) wake()
    return rev
  }

  const write = (stream: string, events: ReadonlyArray<EventToAppend>): AppendResult => {
    const rev = store(stream, events)
    const result = { nextExpectedRevision: rev, position: pos(log.items.length) }
    for (const e of events) log.batches.set(e.eventId, { stream, ids: events.map((x) => x.eventId).join(','), result })
    return result
  }

  const append =
    (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision): TE.TaskEither<AppendError, AppendResult> =>
    async () => {
      const valid = validateAppend(stream, events)
      if (E.isLeft(valid)) return valid
      const interference = pendingInterference.get(stream)
      if (interference !== undefined) {
        pendingInterference.delete(stream)
        write(stream, interference)
      }
      const first = events[0]
      if (first === undefined) return E.left({ _tag: 'InvalidAppend', stream, reason: 'a batch needs at least one event' })
      const known = log.batches.get(first.eventId)
      if (known !== undefined) {
        if (known.stream === stream && known.ids === events.map((e) => e.eventId).join(',')) return E.right({ ...known.result, alreadyStored: true })
        return E.left({ _tag: 'EventIdConflict', stream, eventIds: events.map((e) => e.eventId) })
      }
      if (events.some((e) => log.batches.has(e.eventId))) return E.left({ _tag: 'EventIdConflict', stream, eventIds: events.map((e) => e.eventId) })
      const actual = revisionOf(stream)
      if (!holds(expected, actual)) return E.left({ _tag: 'WrongExpectedVersion', stream, expected, actual: actual ?? 'no_stream' })
      return E.right(write(stream, events))
    }

  /** The items after `from`, kept by `keep`, at most `maxCount`. */
  const after = (from: Position | undefined, maxCount: number, keep: (item: ReadItem) => boolean = () => true): E.Either<InvalidPosition, ReadonlyArray<ReadItem>> => {
    const start = indexAfter(from)
    if (E.isLeft(start)) return start
    const page: ReadItem[] = []
    for (let i = start.right; i < log.items.length && page.length < maxCount; i++) {
      const item = log.items[i]
      if (item !== undefined && keep(item)) page.push(item)
    }
    return E.right(page)
  }

  const subscribeToAll: EventStore['subscribeToAll'] = (options, handler) => {
    let stopped = false
    let wake: () => void = () => undefined
    const follow = async (): Promise<E.Either<SubscriptionError, void>> => {
      const start = indexAfter(options.from)
      if (E.isLeft(start)) return start
      let next = start.right
      while (!stopped) {
        const item = log.items[next]
        if (item === undefined) {
          await new Promise<void>((resolve) => {
            wake = resolve
            log.waiters.add(resolve)
          })
          log.waiters.delete(wake)
          continue
        }
        next += 1
        if (options.streamNamePrefix !== undefined && !streamOf(item).startsWith(options.streamNamePrefix)) continue
        try {
          await handler(item)
        } catch (cause) {
          return E.left({ _tag: 'SubscriberFailed', position: positionOf(item), cause })
        }
      }
      return E.right(undefined)
    }
    const closed = follow()
    const subscription: Subscription = {
      stop: async () => {
        stopped = true
        wake()
        await closed
      },
      closed,
    }
    subscriptions.add(subscription)
    void closed.then(() => subscriptions.delete(subscription))
    return subscription
  }

  return {
    append,
    readStream: (stream, options = {}) => async () => {
      const mine = log.streams.get(stream) ?? []
      const ordered = options.direction === 'backward' ? [...mine].reverse() : mine
      const from = options.fromRevision
      const filtered =
        from === undefined ? ordered : ordered.filter((e) => (options.direction === 'backward' ? revisionOfItem(e) <= from : revisionOfItem(e) >= from))
      return E.right(filtered.slice(0, options.maxCount ?? filtered.length))
    },
    readAll: (options = {}) => async () => after(options.from, options.maxCount ?? 1000),
    countAfter: (from, cap) => async () => E.map((start: number) => Math.max(0, Math.min(cap, log.items.length - start)))(indexAfter(from)),
    headPosition: () => async () => {
      const last = log.items.at(-1)
      return E.right(last === undefined ? undefined : positionOf(last))
    },
    readCategory: (prefix, options = {}) => async () => after(options.from, options.maxCount ?? 1000, (item) => streamOf(item).startsWith(prefix)),
    subscribeToAll,
    close: async () => {
      await Promise.all([...subscriptions].map((s) => s.stop()))
    },
    all: () => log.items.flatMap((item) => (E.isRight(item) ? [item.right] : [])),
    interfere: (stream, events) => {
      pendingInterference.set(stream, events)
    },
    writeUndecodable: (stream) => {
      store(stream, [{ eventId: randomUUID(), type: 'Damaged', schemaVersion: 1, data: {}, metadata: 'not an object' }])
    },
  }
}
