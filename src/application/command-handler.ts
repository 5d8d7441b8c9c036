import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { AppendError, EventStore, EventStoreFailure, EventToAppend, ExpectedRevision, RecordedEvent, UndecodableEvent } from './ports/event-store.ts'
import type { StreamStates } from './stream-cache.ts'

/** An aggregate as pure functions: `decide(command, state)` → events or a rejection; `evolve` folds. */
export type Decider<C, S, Ev, R> = {
  readonly initialState: S
  readonly evolve: (state: S, event: Ev) => S
  readonly decide: (command: C, state: S) => E.Either<R, ReadonlyArray<Ev>>
}

/** How one stream's events leave and enter the store: decoding (with upcasting) and encoding (with metadata). */
export type StreamCodec<Ev> = {
  /** A stored event as the aggregate's newest shape; `left` with a reason when it cannot be read. */
  readonly decode: (recorded: RecordedEvent) => E.Either<string, Ev>
  readonly encode: (event: Ev) => EventToAppend
}

/** A stream that holds an event its codec cannot read: a defect or a missing upcaster, never skipped. */
export type StreamUnreadable = {
  readonly _tag: 'StreamUnreadable'
  readonly stream: string
  readonly streamRevision: bigint
  readonly reason: string
}

/** The append kept losing races (every retry found the stream moved again). */
export type TooMuchContention = { readonly _tag: 'TooMuchContention'; readonly stream: string; readonly attempts: number }

export type Rejected<R> = { readonly _tag: 'Rejected'; readonly rejection: R }

export type HandleError<R> = Rejected<R> | StreamUnreadable | TooMuchContention | EventStoreFailure | Exclude<AppendError, { _tag: 'WrongExpectedVersion' }>

/** What a command is decided on: the stream's state and its revision (`undefined` = no stream). */
export type Current<S> = {
  readonly state: S
  readonly revision: bigint | undefined
}

/** A stream folded: the state, its revision (`undefined` = no stream) and its events. */
export type Loaded<S, Ev> = Current<S> & {
  readonly events: ReadonlyArray<Ev>
  /** The stored id of each event of `events`, at the same index. */
  readonly eventIds: ReadonlyArray<string>
}

export type Handled<S, Ev> = {
  /** The state after the command (unchanged when it decided nothing). */
  readonly state: S
  /** What this command appended: empty when it was a duplicate or stale observation. */
  readonly appended: ReadonlyArray<Ev>
  /** The ids `appended` was stored under, at the same index. */
  readonly appendedIds: ReadonlyArray<string>
  readonly revision: bigint | undefined
}

export const DEFAULT_MAX_ATTEMPTS = 5

const unreadable = (u: UndecodableEvent): StreamUnreadable => ({ _tag: 'StreamUnreadable', stream: u.stream, streamRevision: u.streamRevision, reason: u.reason })

/** Reads a whole stream and folds it. */
export const loadStream =
  <S, Ev>(store: EventStore, stream: string, decider: Pick<Decider<never, S, Ev, never>, 'initialState' | 'evolve'>, codec: Pick<StreamCodec<Ev>, 'decode'>): TE.TaskEither<StreamUnreadable | EventStoreFailure, Loaded<S, Ev>> =>
  async () => {
    const read = await store.readStream(stream)()
    if (E.isLeft(read)) return read
    let state = decider.initialState
    let revision: bigint | undefined
    const events: Ev[] = []
    const eventIds: string[] = []
    for (const item of read.right) {
      if (E.isLeft(item)) return E.left(unreadable(item.left))
      const decoded = codec.decode(item.right)
      if (E.isLeft(decoded)) return E.left({ _tag: 'StreamUnreadable', stream, streamRevision: item.right.streamRevision, reason: decoded.left })
      state = decider.evolve(state, decoded.right)
      events.push(decoded.right)
      eventIds.push(item.right.eventId)
      revision = item.right.streamRevision
    }
    return E.right({ state, revision, events, eventIds })
  }

/**
 * Read, decide, append with the expected revision; when another writer got there first, read again
 * and decide again (at most `maxAttempts` times). No transaction is held between the read and the
 * append, and none across any other IO: the expected revision is the lock. Event ids come from the
 * codec (derived from natural keys, and for claims from this command too), so a retry of a batch that
 * did commit stores nothing twice, and a concurrent writer of the same claim loses the race instead
 * of being answered "already stored".
 *
 * With a `cache` (this process's last known state and revision of the stream), a command on a known
 * stream is decided without reading it. The cache is never trusted further than this:
 *  - an append decided on a cached state carries the cached revision as its expectation: if the stream
 *    moved, the store refuses it (`WrongExpectedVersion`), the entry is dropped, the stream is read
 *    and the command decided again;
 *  - a rejection decided on a cached state is not answered: the stream is read and the command
 *    decided again (a later event may be what the command needed, such as the order it names);
 *  - a command that decides nothing on a cached state (a duplicate or stale observation) is answered
 *    at once. This relies on the deciders' rule that what is already recorded stays recorded: an
 *    observation key in the state at one revision is in the state at every later one, and a final
 *    status never regresses, so "nothing to do" on an earlier state is "nothing to do" on the latest;
 *  - after an append, the entry is replaced only when the store wrote the batch right after the
 *    revision it was decided on; when the store answers that the batch was stored already (by another
 *    writer of the same ids, whose events may differ from these in their details) the entry is dropped;
 *  - after any other failure of the append (its outcome may be unknown), the entry is dropped.
 * Only streams that exist are cached.
 */
export const handleCommand =
  <C, S, Ev, R>(
    store: EventStore,
    stream: string,
    decider: Decider<C, S, Ev, R>,
    codec: StreamCodec<Ev>,
    /** Builds the command from what the stream holds now (called again on every retry). */
    command: (current: Current<S>) => C,
    options: { readonly maxAttempts?: number; readonly cache?: StreamStates<S> | undefined } = {},
  ): TE.TaskEither<HandleError<R>, Handled<S, Ev>> =>
  async () => {
    const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
    const cache = options.cache
    let attempt = 1
    while (attempt <= maxAttempts) {
      const cached = cache?.get(stream)
      let current: Current<S>
      if (cached !== undefined) {
        current = cached
      } else {
        const loaded = await loadStream(store, stream, decider, codec)()
        if (E.isLeft(loaded)) return loaded
        current = { state: loaded.right.state, revision: loaded.right.revision }
        if (cache !== undefined && current.revision !== undefined) cache.set(stream, { state: current.state, revision: current.revision })
      }
      const { state, revision } = current
      const decided = decider.decide(command(current), state)
      if (E.isLeft(decided)) {
        if (cached === undefined) return E.left({ _tag: 'Rejected', rejection: decided.left })
        cache?.drop(stream)
        continue
      }
      const events = decided.right
      if (events.length === 0) return E.right({ state, appended: [], appendedIds: [], revision })
      const expected: ExpectedRevision = revision === undefined ? 'no_stream' : revision
      const encoded = events.map(codec.encode)
      const appended = await store.append(stream, encoded, expected)()
      if (E.isRight(appended)) {
        const next = events.reduce(decider.evolve, state)
        const nextRevision = appended.right.nextExpectedRevision
        if (cache !== undefined) {
          if (appended.right.alreadyStored !== true && nextRevision === (revision ?? -1n) + BigInt(events.length)) cache.set(stream, { state: next, revision: nextRevision })
          else cache.drop(stream)
        }
        return E.right({ state: next, appended: events, appendedIds: encoded.map((e) => e.eventId), revision: nextRevision })
      }
      cache?.drop(stream)
      // Someone else appended (or this very batch committed but its answer was lost): decide again on what is there now.
      if (appended.left._tag === 'WrongExpectedVersion') {
        attempt += 1
        continue
      }
      return E.left(appended.left)
    }
    return E.left({ _tag: 'TooMuchContention', stream, attempts: maxAttempts })
  }

/**
 * The error under an operational failure, for logs: its code (SQLSTATE, errno) and the first line of its
 * message, cut to 200 characters. Not the whole error: a driver's error may quote the data it refused.
 */
export const describeCause = (cause: unknown): string => {
  const code = typeof cause === 'object' && cause !== null && 'code' in cause && (typeof cause.code === 'string' || typeof cause.code === 'number') ? `${String(cause.code)} ` : ''
  const message = cause instanceof Error ? cause.message : String(cause)
  return `${code}${(message.split('\n')[0] ?? '').slice(0, 200)}`
}

/** One line for logs and operators; never carries payloads. */
export const describeHandleError = <R>(e: HandleError<R>, describeRejection: (r: R) => string): string => {
  switch (e._tag) {
    case 'Rejected':
      return describeRejection(e.rejection)
    case 'StreamUnreadable':
      return `stream ${e.stream} cannot be read at revision ${e.streamRevision.toString()}: ${e.reason}`
    case 'TooMuchContention':
      return `stream ${e.stream}: lost ${String(e.attempts)} append races in a row`
    case 'EventStoreFailure':
      return `event store ${e.operation} failed`
    case 'EventIdConflict':
      return `stream ${e.stream}: event ids already stored elsewhere`
    case 'InvalidAppend':
      return `stream ${e.stream}: invalid append: ${e.reason}`
    default:
      return e satisfies never
  }
}
