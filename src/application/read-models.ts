import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import * as t from 'io-ts'
import { oneOf } from '../domain/gateway/text-codecs.ts'
import type { Projected, ReadModelFailure, ReadModelQueries } from './ports/read-models.ts'
import type { RecordingDeps } from './deps.ts'

/**
 * What a read model keeps for `stream` (read by `read`), or undefined when there is no read model, no
 * row yet, the row is behind the stream (the projector lags a moment behind every write: one look at
 * the stream's last event tells), or it cannot be read. The caller then folds the stream, so an answer
 * is never staler than the log.
 */
export const freshProjection = async <A>(
  deps: Pick<RecordingDeps, 'readModels' | 'store' | 'log'>,
  stream: string,
  read: (queries: ReadModelQueries) => TE.TaskEither<ReadModelFailure, Projected<A> | undefined>,
): Promise<Projected<A> | undefined> => {
  const queries = deps.readModels
  if (queries === undefined) return undefined
  const projected = await read(queries)()
  if (E.isLeft(projected)) {
    deps.log.warn({ err: projected.left.cause, operation: projected.left.operation }, 'a read model could not be read; folding the stream instead')
    return undefined
  }
  if (projected.right === undefined) return undefined
  const latest = await deps.store.readStream(stream, { direction: 'backward', maxCount: 1 })()
  const head = E.isRight(latest) ? latest.right[0] : undefined
  const headPosition = head === undefined ? undefined : E.isRight(head) ? head.right.position : head.left.position
  return headPosition === projected.right.position ? projected.right : undefined
}

/** Where a read was answered from. */
export const ServedFrom = t.partial({ served_from: oneOf('ServedFrom', ['event_log', 'read_model']), read_model_position: t.string })
export type ServedFrom = t.TypeOf<typeof ServedFrom>

/** Marks an answer with where it came from. */
export const servedFrom = (position: string | undefined): ServedFrom => (position === undefined ? { served_from: 'event_log' } : { served_from: 'read_model', read_model_position: position })
