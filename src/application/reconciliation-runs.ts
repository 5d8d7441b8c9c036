import * as E from 'fp-ts/lib/Either.js'
import { decodeDomainEvent, describeEventDecodeError } from '../domain/events/registry.ts'
import { isRunEvent, type ReconciliationRunStartedData, type RunEvent } from '../domain/reconciliation/events/index.ts'
import { decideRun, evolveRunState, initialRunState, type ItemRecord, type Run, type RunCommand, type RunRejection, type RunState } from '../domain/reconciliation/run.ts'
import { runEventNaturalKey, runStreamName } from '../domain/reconciliation/stream.ts'
import { describeHandleError, loadStream, type HandleError } from './command-handler.ts'
import { appendEvents } from './streams.ts'
import type { EventStore, ExpectedRevision, RecordedEvent } from './ports/event-store.ts'

/*
 * The run stream as the reconciliation job writes it. The job holds the run's lock, so it is the only
 * writer: the state and revision stay in memory between appends (a run of 100,000 items appends a few
 * hundred batches, and folding the stream again for each would cost more than the run). An append that
 * finds the stream moved reads it again and decides again, as every command does.
 */

/** How writing a run stream fails: as any command (`HandleError`), refused by the run's own rules. */
export type RunStoreError = HandleError<RunRejection>

export const describeRunStoreError = (e: RunStoreError): string =>
  describeHandleError(e, (r) => (r._tag === 'RunClosed' ? `run ${r.runId} is already ${r.how}` : r._tag))

export type RunStoreDeps = {
  readonly store: EventStore
  readonly now: () => Date
  /** Decide and keep in memory, append nothing (`satang reconcile --dry-run`). */
  readonly dryRun: boolean
}

const decodeRunEvent = (r: RecordedEvent): E.Either<string, RunEvent> => {
  const decoded = decodeDomainEvent(r.type, r.schemaVersion, r.data)
  if (E.isLeft(decoded)) return E.left(describeEventDecodeError(decoded.left))
  return isRunEvent(decoded.right) ? E.right(decoded.right) : E.left(`${r.type} is not an event of a reconciliation run stream`)
}

const runDecider = { initialState: initialRunState, evolve: evolveRunState, decide: decideRun }

export type RunWriter = {
  readonly stream: string
  readonly state: () => Run
  /** Whether the stream held the run already (a run resumed after its process died). */
  readonly resumed: boolean
  /** Records a batch of checked items (an item the stream holds already is dropped). */
  readonly record: (items: ReadonlyArray<ItemRecord>) => Promise<E.Either<RunStoreError, void>>
  /** Records the end: counts, totals and verdicts from what the stream holds. */
  readonly complete: (days: ReadonlyArray<string>) => Promise<E.Either<RunStoreError, Run>>
}

const MAX_ATTEMPTS = 5

/** Appends what `command` decides on the stream, re-deciding after a lost race; keeps state and revision. */
const makeAppender = (deps: RunStoreDeps, stream: string, initial: { state: RunState; revision: bigint | undefined }) => {
  let state = initial.state
  let revision = initial.revision
  const reload = async (): Promise<E.Either<RunStoreError, void>> => {
    const loaded = await loadStream(deps.store, stream, runDecider, { decode: decodeRunEvent })()
    if (E.isLeft(loaded)) return loaded
    state = loaded.right.state
    revision = loaded.right.revision
    return E.right(undefined)
  }
  const run = async (command: RunCommand): Promise<E.Either<RunStoreError, RunState>> => {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const decided = decideRun(command, state)
      if (E.isLeft(decided)) return E.left({ _tag: 'Rejected', rejection: decided.left })
      if (decided.right.length === 0) return E.right(state)
      const next = decided.right.reduce(evolveRunState, state)
      if (deps.dryRun) {
        state = next
        return E.right(state)
      }
      const runId = next._tag === 'Run' ? next.started.runId : stream
      const events = decided.right.map((e) => ({ event: e, naturalKey: runEventNaturalKey(stream, e) }))
      const expected: ExpectedRevision = revision === undefined ? 'no_stream' : revision
      const appended = await appendEvents(deps, stream, events, { cause: { correlationId: runId, causationId: runId } }, expected)()
      if (E.isRight(appended)) {
        state = next
        revision = appended.right.nextExpectedRevision
        return E.right(state)
      }
      if (appended.left._tag !== 'WrongExpectedVersion') return E.left(appended.left)
      const reloaded = await reload()
      if (E.isLeft(reloaded)) return reloaded
    }
    return E.left({ _tag: 'TooMuchContention', stream, attempts: MAX_ATTEMPTS })
  }
  return { run, state: () => state }
}

const asRun = (s: RunState): E.Either<RunStoreError, Run> => (s._tag === 'Run' ? E.right(s) : E.left({ _tag: 'Rejected', rejection: { _tag: 'NoSuchRun' } }))

/**
 * Opens the run stream: starts the run, or resumes it when the stream holds it already and it is still
 * open (its process died). A run that completed or was superseded cannot be written again.
 */
export const openRun = async (deps: RunStoreDeps, started: ReconciliationRunStartedData): Promise<E.Either<RunStoreError, RunWriter>> => {
  const stream = runStreamName(started.merchantId, started.runId)
  const loaded = await loadStream(deps.store, stream, runDecider, { decode: decodeRunEvent })()
  if (E.isLeft(loaded)) return loaded
  const resumed = loaded.right.state._tag === 'Run'
  const appender = makeAppender(deps, stream, { state: loaded.right.state, revision: loaded.right.revision })
  const opened = resumed ? E.right(loaded.right.state) : await appender.run({ type: 'StartRun', started })
  if (E.isLeft(opened)) return opened
  const run = asRun(opened.right)
  if (E.isLeft(run)) return run
  if (run.right.completed !== null || run.right.superseded !== null) {
    return E.left({ _tag: 'Rejected', rejection: { _tag: 'RunClosed', runId: started.runId, how: run.right.completed !== null ? 'completed' : 'superseded' } })
  }
  const current = (): Run => {
    const s = appender.state()
    // Opened above as a Run; a run's state never goes back to NoRun.
    if (s._tag !== 'Run') throw new Error(`run stream ${stream} lost its run`)
    return s
  }
  return E.right({
    stream,
    state: current,
    resumed,
    record: async (items) => E.map(() => undefined)(await appender.run({ type: 'RecordItems', items, at: deps.now() })),
    complete: async (days) => {
      const done = await appender.run({ type: 'CompleteRun', days, at: deps.now() })
      return E.isLeft(done) ? done : asRun(done.right)
    },
  })
}

/** The started data of a run stream, or null when there is none (to resume a run with its own parameters). */
export const readRunStarted = async (store: EventStore, merchantId: string, runId: string): Promise<E.Either<RunStoreError, ReconciliationRunStartedData | null>> => {
  const loaded = await loadStream(store, runStreamName(merchantId, runId), runDecider, { decode: decodeRunEvent })()
  if (E.isLeft(loaded)) return loaded
  return E.right(loaded.right.state._tag === 'Run' ? loaded.right.state.started : null)
}

/** Closes a run whose process died, when the next run has another scope: it keeps no verdict; its open breaks are checked again by every later run. */
export const supersedeRun = async (deps: RunStoreDeps, merchantId: string, runId: string, by: string, reason: string): Promise<E.Either<RunStoreError, void>> => {
  const stream = runStreamName(merchantId, runId)
  const loaded = await loadStream(deps.store, stream, runDecider, { decode: decodeRunEvent })()
  if (E.isLeft(loaded)) return loaded
  const appender = makeAppender(deps, stream, { state: loaded.right.state, revision: loaded.right.revision })
  return E.map(() => undefined)(await appender.run({ type: 'SupersedeRun', by, reason, at: deps.now() }))
}
