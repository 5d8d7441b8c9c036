import * as E from 'fp-ts/lib/Either.js'
import { setTimeout as sleep } from 'node:timers/promises'
import type { EventStore, Position, ReadAllOptions, ReadError, ReadItem } from './ports/event-store.ts'

/**
 * Reading a category when a decision depends on having seen all of it. The global log of the
 * PostgreSQL store shows an event only once every older transaction of the cluster has ended, so a
 * category read can stop short of events committed just before it (the store's horizon). A decision
 * that must not miss one (carrying refunds over into their ledgers, finding the creates that await
 * their outcome) reads up to the head the store had when it started: it pages through the category,
 * and when the category has nothing more, checks that the global log reads up to that head, waiting
 * (polling) until it does or until `waitMs` is over.
 */

export type CategoryReadOptions = {
  /** How long to wait for the log to be readable up to the head (default 60 s). */
  readonly waitMs?: number
  /** How often to look again while waiting (default 50 ms). */
  readonly pollMs?: number
  readonly pageSize?: number
}

export type CategoryRead =
  /** Every event of the category up to the head was visited. */
  | { readonly _tag: 'UpToHead'; readonly head: Position | undefined }
  /** The log was not readable up to the head within `waitMs`: what was visited stops at `readTo`. */
  | { readonly _tag: 'ShortOfHead'; readonly head: Position; readonly readTo: Position | undefined }

/**
 * Reads the global log on from `from` towards `head`: whether it reads at least up to `head`, and the
 * furthest position it could read (where the next look may start: the horizon only moves forward).
 */
const readTowards = async (store: EventStore, from: ReadAllOptions, head: Position): Promise<{ readonly reached: boolean; readonly readTo: ReadAllOptions }> => {
  let cursor = from
  for (;;) {
    const page = await store.readAll({ ...cursor, maxCount: 1000 })()
    if (E.isLeft(page)) return { reached: false, readTo: cursor }
    const end: ReadItem | undefined = page.right[page.right.length - 1]
    if (end === undefined) return { reached: false, readTo: cursor }
    const position = E.isRight(end) ? end.right.position : end.left.position
    if (position >= head) return { reached: true, readTo: { from: position } }
    cursor = { from: position }
  }
}

/** The later of two read starts (positions of one store compare as strings). */
const later = (a: ReadAllOptions, b: ReadAllOptions): ReadAllOptions => (a.from === undefined ? b : b.from === undefined || a.from >= b.from ? a : b)

/**
 * Visits every event of the category `prefix` after `from` (the start when absent) in log order, up to
 * the log's head as it is when the read starts. `visit` returning a Left stops the read with it.
 */
export const readCategoryUpToHead = async <V>(
  store: EventStore,
  prefix: string,
  from: ReadAllOptions,
  visit: (item: ReadItem) => E.Either<V, void>,
  options: CategoryReadOptions = {},
): Promise<E.Either<ReadError | V, CategoryRead>> => {
  const head = await store.headPosition()()
  if (E.isLeft(head)) return head
  const deadline = Date.now() + (options.waitMs ?? 60_000)
  let cursor = from
  // How far the global log was found readable while waiting: each look goes on from there.
  let logCursor = from
  let headReadable = false
  for (;;) {
    const page = await store.readCategory(prefix, { ...cursor, maxCount: options.pageSize ?? 1000 })()
    if (E.isLeft(page)) return page
    for (const item of page.right) {
      const visited = visit(item)
      if (E.isLeft(visited)) return visited
    }
    const end: ReadItem | undefined = page.right[page.right.length - 1]
    if (end !== undefined) {
      cursor = { from: E.isRight(end) ? end.right.position : end.left.position }
      continue
    }
    // The category has nothing more to show; it may still stand before the head (events of other
    // categories come after it, or the newest are not readable yet).
    if (headReadable || head.right === undefined || (cursor.from !== undefined && cursor.from >= head.right)) return E.right({ _tag: 'UpToHead', head: head.right })
    const looked = await readTowards(store, later(logCursor, cursor), head.right)
    logCursor = looked.readTo
    if (looked.reached) {
      // Everything up to the head is readable now (the horizon only moves forward): one more read of
      // the category sees what became readable since its last page.
      headReadable = true
      continue
    }
    if (Date.now() > deadline) return E.right({ _tag: 'ShortOfHead', head: head.right, readTo: cursor.from })
    await sleep(options.pollMs ?? 50)
  }
}
