import { setTimeout as sleep } from 'node:timers/promises'
import type { Pool } from 'pg'
import type { EventStore } from '../application/ports/event-store.ts'
import { headOf } from './as-of.ts'
import { readCheckpoints } from './checkpoints.ts'

/**
 * Waits (at most `timeoutMs`) until the projection `name` has applied the log as it stands now, so that
 * a page shown right after a write shows it. Resolves whether it caught up; never throws for a timeout.
 */
export const projectionCaughtUp = async (deps: { readonly store: EventStore; readonly pool: Pool }, schema: string, name: string, timeoutMs: number): Promise<boolean> => {
  const head = await headOf(deps.store)
  if (head === null) return true
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const cp = (await readCheckpoints(deps.pool, schema, [name])).get(name)
    if (cp?.position !== undefined && cp.position !== null && cp.position >= head) return true
    if (Date.now() >= deadline) return false
    await sleep(50)
  }
}
