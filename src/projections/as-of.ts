import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool, PoolClient } from 'pg'
import { AS_OF_RULE, type AsOf, type AsOfRequest } from '../application/as-of.ts'
import type { EventStore, Position } from '../application/ports/event-store.ts'
import { oneAtATime } from '../platform/postgres/one-at-a-time.ts'
import { decodeBatchItem } from './projector.ts'
import { qualified, readsStream, type ProjectedEvent, type Projection } from './types.ts'

/*
 * The read models as they stood at a past position of the log ("as of"): the projections themselves
 * applied to the log from its start up to and including that position, in a scratch schema that lives
 * only inside one transaction (rolled back at the end, so nothing is left behind). By construction the
 * tables equal what a rebuild stopped at that position gives. Cost: a replay of the log up to there.
 */

/** Something SQL can be sent to: a pool, or a client inside a transaction. */
export type Queryable = Pick<Pool, 'query'>

/** Read models at one place: tables of `schema` reached through `db`. */
export type ReadModelsAt = { readonly db: Queryable; readonly schema: string }

export type AsOfDeps = { readonly store: EventStore; readonly pool: Pool }

const PAGE = 5000

/** 42P01 (no such table: the audit log is not migrated yet) reads as nothing; any other failure is thrown on. */
const nullWhenNoTable = (e: unknown): null => {
  if (typeof e === 'object' && e !== null && 'code' in e && e.code === '42P01') return null
  throw e
}

/** Whether `position` is at or before `upTo` (positions of one store compare as plain strings). */
export const atOrBefore = (position: string, upTo: string): boolean => position <= upTo

/**
 * Applies `projections` to the log up to and including `upTo` in a schema of their own, hands the
 * tables to `read`, then rolls the whole transaction back.
 */
export const withReadModelsAsOf = async <A>(deps: AsOfDeps, projections: ReadonlyArray<Projection>, upTo: Position | null, read: (rm: ReadModelsAt) => Promise<A>, eventTable?: string): Promise<A> => {
  const schema = `satang_as_of_${randomUUID().replaceAll('-', '').slice(0, 16)}`
  const client: PoolClient = await deps.pool.connect()
  try {
    await client.query('begin')
    await client.query(`create schema "${schema}"`)
    for (const p of projections) {
      for (const sql of p.createTables(schema)) await client.query(sql)
      for (const sql of p.createViews?.(schema) ?? []) await client.query(sql)
    }
    let from: Position | undefined
    for (;;) {
      if (upTo === null) break
      const page = await deps.store.readAll({ ...(from === undefined ? {} : { from }), maxCount: PAGE })()
      if (E.isLeft(page)) throw new Error(`as of ${upTo}: reading the event log failed (${page.left._tag})`, { cause: page.left })
      const items = page.right.map(decodeBatchItem).filter((i) => atOrBefore(i.position, upTo))
      for (const p of projections) {
        const events: ProjectedEvent[] = []
        for (const item of items) {
          if (!readsStream(p, item.streamName)) continue
          if (!item.ok) throw new Error(`as of ${upTo}: ${item.reason}`)
          events.push(item.event)
        }
        if (events.length > 0) await p.apply({ client, schema, ...(eventTable === undefined ? {} : { eventTable }) }, events)
      }
      const last = page.right.at(-1)
      if (items.length < page.right.length || last === undefined) break
      from = E.isRight(last) ? last.right.position : last.left.position
    }
    // Readers may send several queries at once: the one client takes them in turn.
    const query = oneAtATime(client)
    return await read({ db: { query: query as unknown as Queryable['query'] }, schema })
  } finally {
    await client.query('rollback').catch(() => undefined)
    client.release()
  }
}

/**
 * The position of the last event the log held at `instant` (committed at or before it), or null when
 * the log was empty then. Starts from the audit log's index of commit times when it has one, then reads
 * the log itself from there (so a lagging read model hides nothing).
 */
export const positionAt = async (deps: AsOfDeps, readModelSchema: string, instant: Date): Promise<Position | null> => {
  let hint: Position | null = null
  const indexed = await deps.pool
    .query<{ p: string | null }>(`select max(global_position) as p from ${qualified(readModelSchema, 'audit_log')} where recorded_at <= $1`, [instant])
    .then((r) => r.rows[0]?.p ?? null, nullWhenNoTable)
  if (indexed !== null) hint = indexed as Position
  let found: Position | null = hint
  let from: Position | undefined = hint ?? undefined
  for (;;) {
    const page = await deps.store.readAll({ ...(from === undefined ? {} : { from }), maxCount: 500 })()
    if (E.isLeft(page)) throw new Error(`the position at ${instant.toISOString()}: reading the event log failed (${page.left._tag})`, { cause: page.left })
    if (page.right.length === 0) return found
    for (const item of page.right) {
      if (E.isLeft(item)) {
        from = item.left.position
        continue
      }
      if (item.right.recordedAt.getTime() > instant.getTime()) return found
      found = item.right.position
      from = item.right.position
    }
  }
}

/** The last position of the log now (null: empty). */
export const headOf = async (store: EventStore): Promise<Position | null> => {
  const head = await store.headPosition()()
  if (E.isLeft(head)) throw new Error('the head of the event log could not be read', { cause: head.left })
  return head.right ?? null
}

/** Why an as-of request cannot be answered (a position this store did not produce). */
export class AsOfRefused extends Error {
  override readonly name = 'AsOfRefused'
}

/**
 * Resolves an as-of request: an instant to the last position committed by then; a position (checked
 * with the store) to the instant its event was committed (from the audit log; the request's own time
 * when the audit log does not have it yet).
 */
export const resolveAsOf = async (deps: AsOfDeps, readModelSchema: string, request: AsOfRequest, now: Date): Promise<AsOf> => {
  if (request._tag === 'Instant') return { position: await positionAt(deps, readModelSchema, request.at), instant: request.at, requested: request.text }
  const valid = await deps.store.countAfter(request.position, 1)()
  if (E.isLeft(valid)) {
    if (valid.left._tag === 'InvalidPosition') throw new AsOfRefused(`${AS_OF_RULE} (${JSON.stringify(request.text)} is neither: not a position of this event log)`)
    throw new Error('the event log could not be read', { cause: valid.left })
  }
  const at = await deps.pool
    .query<{ recorded_at: Date }>(`select recorded_at from ${qualified(readModelSchema, 'audit_log')} where global_position <= $1 order by global_position desc limit 1`, [request.position])
    .then((r) => r.rows[0]?.recorded_at ?? null, nullWhenNoTable)
  return { position: request.position, instant: at ?? now, requested: request.text }
}
