import * as E from 'fp-ts/lib/Either.js'
import { describeRunStoreError, type RunWriter } from '../../application/reconciliation-runs.ts'
import type { ItemRecord } from '../../domain/reconciliation/run.ts'

/** The run stream could not take a batch: the run stops; the next run resumes it from what the stream holds. */
export class RunStoreFailed extends Error {
  override readonly name = 'RunStoreFailed'
}

/**
 * Collects checked items and appends them to the run stream in batches: when `maxItems` are waiting or
 * every `maxMs`. Appends are serialised (one writer, in order). An item is part of the run only once
 * its batch is appended: a run killed before that checks it again when resumed.
 */
export const makeBatcher = (writer: RunWriter, options: { readonly maxItems: number; readonly maxMs: number; readonly onRecorded?: (batches: number) => void }) => {
  let waiting: ItemRecord[] = []
  let chain: Promise<void> = Promise.resolve()
  let failure: RunStoreFailed | undefined
  let timer: NodeJS.Timeout | undefined

  const flush = (): Promise<void> => {
    const batch = waiting
    waiting = []
    if (batch.length === 0) return chain
    chain = chain.then(async () => {
      if (failure !== undefined) return
      const done = await writer.record(batch)
      if (E.isLeft(done)) failure = new RunStoreFailed(`the run stream could not record ${String(batch.length)} checked items: ${describeRunStoreError(done.left)}`)
      else options.onRecorded?.(writer.state().batches.length)
    })
    return chain
  }

  const arm = (): void => {
    timer ??= setTimeout(() => {
      timer = undefined
      void flush()
    }, options.maxMs)
  }

  return {
    /** Adds a checked item; when a batch is full, waits for it to be appended (back-pressure). */
    add: async (record: ItemRecord): Promise<void> => {
      if (failure !== undefined) throw failure
      waiting.push(record)
      if (waiting.length >= options.maxItems) await flush()
      else arm()
      if (failure !== undefined) throw failure
    },
    /** Appends what is waiting and waits for every append; throws when one failed. */
    drain: async (): Promise<void> => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      await flush()
      await chain
      if (failure !== undefined) throw failure
    },
    failed: (): boolean => failure !== undefined,
  }
}
