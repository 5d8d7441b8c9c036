import * as E from 'fp-ts/lib/Either.js'
import type { AnchorWriter } from '../application/ports/anchors.ts'
import type { Logger } from '../logger.ts'

export type AnchorJob = {
  /** Writes an anchor now (between the periodic ones); resolves when it is written or failed. */
  readonly anchorNow: (reason: string) => Promise<void>
  readonly stop: () => Promise<void>
}

/**
 * Writes an anchor of the event log every `intervalMs` (the first one `firstAfterMs` after start), and
 * on demand. A failed write is logged and tried again at the next tick: anchors are evidence, never a
 * reason to stop the process. Writers queue on a database lock, so several schedulers are harmless (an
 * unmoved log gets no new anchor).
 */
export const startAnchorJob = (deps: { readonly writer: AnchorWriter; readonly log: Logger }, config: { readonly intervalMs: number; readonly firstAfterMs?: number }): AnchorJob => {
  const log = deps.log.child({ component: 'anchor' })
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> = Promise.resolve()

  const anchorNow = (reason: string): Promise<void> => {
    const run = inFlight.then(async () => {
      const written = await deps.writer.write(reason)()
      if (E.isLeft(written)) log.warn({ err: written.left.cause, retriable: written.left.retriable }, 'writing an anchor failed; tried again at the next tick')
      else if (written.right !== null) log.info({ seq: written.right.seq.toString(), position: written.right.position, events: written.right.events.toString(), reason }, 'anchor written')
    })
    inFlight = run
    return run
  }

  const schedule = (ms: number): void => {
    if (stopped || config.intervalMs <= 0) return
    timer = setTimeout(() => {
      void anchorNow('scheduled').then(() => schedule(config.intervalMs))
    }, ms)
    timer.unref()
  }
  schedule(config.firstAfterMs ?? config.intervalMs)

  return {
    anchorNow,
    stop: async () => {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      await inFlight
    },
  }
}
