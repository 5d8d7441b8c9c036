import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * The sandbox's time (issue 3, point 8): real time keeps passing, shifted by an offset that the
 * control API moves forward, so schedules, retries and expiries are tested in milliseconds.
 */
export type SandboxClock = {
  readonly now: () => Date
  /** Moves time forward by `ms`, then runs every onAdvance listener in order, awaiting each. */
  readonly advance: (ms: number) => Promise<void>
  /** Moves time forward to `instant` (never back), then runs the listeners as `advance` does. */
  readonly set: (instant: Date) => Promise<void>
  /** Registers a listener; returns the function that removes it. */
  readonly onAdvance: (listener: (now: Date) => Promise<void>) => () => void
  /** How far sandbox time is ahead of real time. */
  readonly offsetMs: () => number
}

const nested = new AsyncLocalStorage<true>()

export const makeSandboxClock = (opts: { readonly start?: Date; readonly realNow?: () => number } = {}): SandboxClock => {
  const realNow = opts.realNow ?? Date.now
  if (opts.start !== undefined && !Number.isFinite(opts.start.getTime())) throw new RangeError('sandbox clock: start is an invalid date')
  let offset = opts.start === undefined ? 0 : opts.start.getTime() - realNow()
  const listeners: Array<(now: Date) => Promise<void>> = []
  // Moves run one after another, so that two control-API calls never run the listeners (the
  // subscription engine's due charges) concurrently.
  let queue: Promise<void> = Promise.resolve()

  const now = (): Date => new Date(realNow() + offset)

  const runListeners = async (): Promise<void> => {
    const errors: unknown[] = []
    // A copy: a listener may unsubscribe itself while we iterate.
    for (const listener of [...listeners]) {
      try {
        await nested.run(true, () => listener(now()))
      } catch (e) {
        errors.push(e)
      }
    }
    // Every listener ran even if one failed (one engine's defect must not stall the others).
    if (errors.length === 1) throw errors[0]
    if (errors.length > 1) throw new AggregateError(errors, `sandbox clock: ${String(errors.length)} onAdvance listeners failed`)
  }

  const move = (what: string, delta: () => number): Promise<void> => {
    // Awaiting the queue inside a listener would wait for that listener itself: a deadlock.
    if (nested.getStore() === true) {
      return Promise.reject(new Error(`sandbox clock: ${what} was called from inside an onAdvance listener; listeners must not move the clock`))
    }
    const next = queue.then(async () => {
      offset += delta()
      await runListeners()
    })
    // The queue continues after a failed move; the caller gets the failure from `next`.
    queue = next.then(
      () => undefined,
      () => undefined,
    )
    return next
  }

  return {
    now,
    offsetMs: () => offset,
    advance: (ms) => {
      if (!Number.isFinite(ms) || ms < 0) {
        return Promise.reject(new RangeError(`sandbox clock: advance takes a finite number of milliseconds of at least 0, got ${String(ms)}`))
      }
      return move('advance', () => ms)
    },
    set: (instant) => {
      if (!Number.isFinite(instant.getTime())) return Promise.reject(new RangeError('sandbox clock: set was given an invalid date'))
      return move('set', () => {
        const delta = instant.getTime() - now().getTime()
        // Sandbox time only moves forward: charges, expiries and notifications already sent cannot be undone.
        if (delta < 0) {
          throw new RangeError(`sandbox clock: cannot go back in time to ${instant.toISOString()}; sandbox time is already ${now().toISOString()}`)
        }
        return delta
      })
    },
    onAdvance: (listener) => {
      // Wrapped so that the same function registered twice is removed once per unsubscribe.
      const entry = (at: Date): Promise<void> => listener(at)
      listeners.push(entry)
      return () => {
        const i = listeners.indexOf(entry)
        if (i >= 0) listeners.splice(i, 1)
      }
    },
  }
}
