import type { Pool } from 'pg'
import { lagAfter } from '../application/log-lag.ts'
import type { EventStore, Position } from '../application/ports/event-store.ts'
import { readCheckpoints } from './checkpoints.ts'
import type { Projection } from './types.ts'

export type ProjectionStatus = {
  readonly name: string
  readonly description: string
  /** The last event applied; null before the first. */
  readonly position: Position | null
  readonly eventsApplied: number
  /** Events in the log after the checkpoint (at most `LAG_COUNT_CAP`). */
  readonly eventsBehind: number
  readonly eventsBehindCapped: boolean
  /** How long the oldest event not yet applied has been in the log (0 when caught up). */
  readonly secondsBehind: number
  /** When the store committed the last event applied (UTC). */
  readonly lastRecordedAt: Date | null
  readonly updatedAt: Date | null
  readonly state: 'running' | 'failed' | 'not_migrated'
  readonly failure: { readonly at: Date; readonly message: string; readonly stream: string | null; readonly position: string | null } | null
}

/** Lag and health of each projection: events and seconds behind the head of the log. */
export const projectionStatus = async (store: EventStore, pool: Pool, schema: string, projections: ReadonlyArray<Projection>, now: () => Date = () => new Date()): Promise<ReadonlyArray<ProjectionStatus>> => {
  const checkpoints = await readCheckpoints(pool, schema, projections.map((p) => p.name))
  const out: ProjectionStatus[] = []
  for (const p of projections) {
    const cp = checkpoints.get(p.name)
    const lag = await lagAfter(store, cp?.position ?? undefined, now)
    out.push({
      name: p.name,
      description: p.description,
      position: cp?.position ?? null,
      eventsApplied: cp?.eventsApplied ?? 0,
      ...lag,
      lastRecordedAt: cp?.lastRecordedAt ?? null,
      updatedAt: cp?.updatedAt ?? null,
      state: cp === undefined ? 'not_migrated' : cp.failure === null ? 'running' : 'failed',
      failure: cp?.failure ?? null,
    })
  }
  return out
}
