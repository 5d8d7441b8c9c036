import * as E from 'fp-ts/lib/Either.js'
import type { EventStore, Position } from './ports/event-store.ts'

/** Events behind are counted up to this many; beyond, the figure says "at least". */
export const LAG_COUNT_CAP = 1_000_000

/** How far a reader of the global log (a projection, the relay) is behind the head. */
export type LogLag = {
  /** Events in the log after the reader's checkpoint (at most `LAG_COUNT_CAP`). */
  readonly eventsBehind: number
  readonly eventsBehindCapped: boolean
  /** How long the oldest event not yet read has been in the log (0 when caught up). */
  readonly secondsBehind: number
}

/** The lag of a reader whose checkpoint is `from` (undefined: it has read nothing yet). */
export const lagAfter = async (store: Pick<EventStore, 'countAfter' | 'readAll'>, from: Position | undefined, now: () => Date): Promise<LogLag> => {
  const counted = await store.countAfter(from, LAG_COUNT_CAP)()
  if (E.isLeft(counted)) throw new Error(`reading the event log failed (${counted.left._tag})`, { cause: counted.left })
  let secondsBehind = 0
  if (counted.right > 0) {
    const next = await store.readAll({ ...(from === undefined ? {} : { from }), maxCount: 1 })()
    const first = E.isRight(next) ? next.right[0] : undefined
    if (first !== undefined && E.isRight(first)) secondsBehind = Math.max(0, (now().getTime() - first.right.recordedAt.getTime()) / 1000)
  }
  return { eventsBehind: counted.right, eventsBehindCapped: counted.right >= LAG_COUNT_CAP, secondsBehind }
}
