import * as E from 'fp-ts/lib/Either.js'
import type { JsonObject } from '../domain/event-store.ts'
import type { RecordingDeps } from './deps.ts'

/** The read models `GET` answers come from: one row per stream, with the state kept and the last event applied. */
export type ProjectedTable = 'orders' | 'refunds' | 'subscriptions'

/**
 * The state of `stream` as its read model keeps it (`projection_state`, decoded by `decode`), or
 * undefined when there is no read model, no row yet, the row is behind the stream (the projector
 * lags a moment behind every write: one look at the stream's last event tells), or it cannot be read.
 * The caller then folds the stream, so an answer is never staler than the log.
 */
export const projectedState = async <S>(
  deps: Pick<RecordingDeps, 'readModels' | 'store' | 'log'>,
  table: ProjectedTable,
  stream: string,
  decode: (projectionState: unknown) => S | null,
): Promise<{ readonly state: S; readonly position: string } | undefined> => {
  const rm = deps.readModels
  if (rm === undefined) return undefined
  try {
    const { rows } = await rm.pool.query<{ projection_state: unknown; last_event_position: string }>(
      `select projection_state, last_event_position from "${rm.schema}"."${table}" where stream_name = $1`,
      [stream],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    const latest = await deps.store.readStream(stream, { direction: 'backward', maxCount: 1 })()
    const head = E.isRight(latest) ? latest.right[0] : undefined
    const headPosition = head === undefined ? undefined : E.isRight(head) ? head.right.position : head.left.position
    if (headPosition !== row.last_event_position) return undefined
    const state = decode(row.projection_state)
    return state === null ? undefined : { state, position: row.last_event_position }
  } catch (e) {
    deps.log.warn({ err: e, table }, 'a read model could not be read; folding the stream instead')
    return undefined
  }
}

/** Marks an answer with where it came from. */
export const servedFrom = (position: string | undefined): JsonObject => (position === undefined ? { served_from: 'event_log' } : { served_from: 'read_model', read_model_position: position })
