import * as E from 'fp-ts/lib/Either.js'
import type { AppendError, AppendResult, EventStore, StreamAppend } from '../../application/ports/event-store.ts'

export type GatherOptions = {
  /** Appends per round trip at most. */
  readonly maxAppends: number
  /** Round trips under way at once; appends made meanwhile wait and go together in the next one. */
  readonly maxInFlight: number
}

type Waiting = { readonly append: StreamAppend; readonly resolve: (r: E.Either<AppendError, AppendResult>) => void }

/**
 * The store with its appends gathered (issue 28): an append at `no_stream` or an exact revision waits
 * for the round trip under way (at most `maxInFlight`) and goes with the others made meanwhile, by
 * `appendToStreams`, one statement and one commit for many streams. Each append still gets its own
 * answer, decided as `append` decides it, so a command handler sees no difference; two appends of
 * one stream never share a round trip (the second waits for the first). Appends under `any` and
 * `stream_exists`, and every append of a store without `appendToStreams`, go as they are.
 */
export const gatherAppends = (store: EventStore, options: GatherOptions = { maxAppends: 256, maxInFlight: 2 }): EventStore => {
  const appendToStreams = store.appendToStreams
  if (appendToStreams === undefined) return store
  let queue: Waiting[] = []
  let inFlight = 0
  let scheduled = false

  const send = async (batch: ReadonlyArray<Waiting>): Promise<void> => {
    const answered = await appendToStreams(batch.map((w) => w.append))()
    for (const [i, w] of batch.entries()) {
      if (E.isLeft(answered)) w.resolve(E.left(answered.left))
      else w.resolve(answered.right[i] ?? E.left({ _tag: 'EventStoreFailure', operation: 'appendToStreams', retriable: false, cause: new Error('the store gave no answer for this append') }))
    }
  }

  const pump = (): void => {
    scheduled = false
    while (inFlight < options.maxInFlight && queue.length > 0) {
      const batch: Waiting[] = []
      const rest: Waiting[] = []
      const streams = new Set<string>()
      for (const w of queue) {
        if (batch.length < options.maxAppends && !streams.has(w.append.stream)) {
          streams.add(w.append.stream)
          batch.push(w)
        } else rest.push(w)
      }
      queue = rest
      inFlight += 1
      void send(batch).finally(() => {
        inFlight -= 1
        pump()
      })
    }
  }

  return {
    ...store,
    append: (stream, events, expected) =>
      expected === 'any' || expected === 'stream_exists'
        ? store.append(stream, events, expected)
        : () =>
            new Promise((resolve) => {
              queue.push({ append: { stream, events, expected }, resolve })
              if (!scheduled) {
                scheduled = true
                // Appends made in this turn of the event loop go together.
                setImmediate(pump)
              }
            }),
  }
}
