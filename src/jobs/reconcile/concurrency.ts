/**
 * Runs `work` on every item with at most `limit` at a time, in order of start. Stops taking new items
 * once `signal` is aborted or `shouldStop` says so; resolves when the ones started have finished. A
 * rejection of `work` stops the others from starting and is rethrown (the caller records nothing
 * half-done: items are recorded by the batcher only once checked).
 */
export const forEachConcurrently = async <A>(items: ReadonlyArray<A>, limit: number, work: (item: A) => Promise<void>, shouldStop: () => boolean): Promise<void> => {
  let next = 0
  let failure: { readonly error: unknown } | undefined
  const worker = async (): Promise<void> => {
    while (failure === undefined && !shouldStop()) {
      const i = next
      next += 1
      const item = items[i]
      if (item === undefined) return
      try {
        await work(item)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  if (failure !== undefined) throw failure.error
}

/**
 * At most `limit` calls at once of what it wraps; a call made while `limit` are under way waits for
 * one of them to end (first come, first served).
 */
export const callsAtOnce = (limit: number) => {
  let active = 0
  const waiting: Array<() => void> = []
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (active < limit) active += 1
    // The slot of the call that ends is handed to this one (`active` stays as it is).
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await call()
    } finally {
      const next = waiting.shift()
      if (next === undefined) active -= 1
      else next()
    }
  }
}
