import * as E from 'fp-ts/lib/Either.js'
import type { Pool, PoolClient } from 'pg'
import type { EventStore, Position, ReadItem } from '../application/ports/event-store.ts'
import type { Logger } from '../logger.ts'
import { REBUILD_LOCKS } from '../platform/postgres/names.ts'
import { CHECKPOINTS_TABLE, readCheckpoints } from './checkpoints.ts'
import { decodeBatchItem, DEFAULT_BUFFER_BYTES, makeBufferSizer, type BatchItem } from './projector.ts'
import { qualified, readsStream, type ProjectedEvent, type Projection } from './types.ts'

/**
 * `satang project --rebuild NAME`: builds a projection's tables again from the start of the log in a
 * scratch schema, then swaps them in, in one transaction, for the live ones:
 *
 * 1. `<schema>_rebuild_<name>` is created empty and filled page by page while the live tables keep
 *    serving (and the live projector keeps them current).
 * 2. The swap transaction locks the projection's checkpoint row (the live projector waits between
 *    batches), applies the last events to the scratch tables, drops the live tables and views, moves
 *    the scratch tables into the live schema, recreates the views, and sets the checkpoint to the
 *    last event applied. A reader sees the old tables until the commit and the new ones after it
 *    (PostgreSQL looks a table name up again once the lock it waited for is granted).
 * 3. The live projector goes on from the new checkpoint.
 *
 * Nothing changes in the live schema until the swap commits: a rebuild that fails (or is killed)
 * leaves the old tables serving; the next rebuild starts over.
 */

export type RebuildProgress = { readonly projection: string; readonly events: number; readonly position: Position | null; readonly phase: 'building' | 'swapping' | 'done' }

export type RebuildResult = { readonly projection: string; readonly events: number; readonly position: Position | null; readonly seconds: number }

export type RebuildDeps = { readonly store: EventStore; readonly pool: Pool; readonly log: Logger }

export type RebuildConfig = {
  readonly schema: string
  readonly projection: Projection
  /** Events per read and per transaction while building. Default 5000. */
  readonly batchSize?: number
  readonly onProgress?: (p: RebuildProgress) => void
  /** The scratch schema. Default `<schema>_rebuild_<name>`. */
  readonly scratchSchema?: string
  /** See `ProjectionTarget.eventTable`. */
  readonly eventTable?: string
}

/** A table of the live read model that differs from a rebuild from the log: rows only in one of them. */
export type TableDifference = { readonly table: string; readonly onlyLive: number; readonly onlyRebuilt: number }


/** The scratch schema a rebuild of `name` builds in. */
export const scratchSchemaOf = (schema: string, name: string): string => `${schema}_rebuild_${name}`

const applyPage = async (client: PoolClient, schema: string, projection: Projection, items: ReadonlyArray<BatchItem>, eventTable: string | undefined): Promise<number> => {
  const events: ProjectedEvent[] = []
  for (const item of items) {
    if (!readsStream(projection, item.streamName)) continue
    if (!item.ok) throw new Error(`rebuild of ${projection.name} stopped: ${item.reason}`)
    events.push(item.event)
  }
  if (events.length > 0) await projection.apply({ client, schema, ...(eventTable === undefined ? {} : { eventTable }) }, events)
  return events.length
}

/** Reads pages after `from` and applies them on `client` until the log has no more; returns the last position and the count. */
const catchUp = async (
  deps: RebuildDeps,
  client: PoolClient,
  schema: string,
  projection: Projection,
  from: Position | null,
  batchSize: number,
  perPage: (applied: number, position: Position | null) => Promise<void>,
  eventTable: string | undefined,
): Promise<{ readonly position: Position | null; readonly lastRecordedAt: Date | null; readonly applied: number }> => {
  let position = from
  let lastRecordedAt: Date | null = null
  let applied = 0
  // Pages bounded by bytes too (issue 31): two in memory, each at most a third of the projector's budget.
  const sizer = makeBufferSizer(batchSize, batchSize * 2, DEFAULT_BUFFER_BYTES)
  const read = async (after: Position | null): Promise<ReadonlyArray<ReadItem>> => {
    const page = await deps.store.readAll({ ...(after === null ? {} : { from: after }), maxCount: sizer.batch() })()
    if (E.isLeft(page)) throw new Error(`rebuild of ${projection.name}: reading the event log failed (${page.left._tag})`, { cause: page.left })
    return page.right
  }
  let page = await read(position)
  for (;;) {
    if (page.length === 0) return { position, lastRecordedAt, applied }
    const items = page.map(decodeBatchItem)
    for (const item of items) sizer.observe(item)
    const last = items.at(-1)
    // The next page is read (on another connection) while this one is applied: at most two pages in memory.
    const next = last === undefined ? Promise.resolve<ReadonlyArray<ReadItem>>([]) : read(last.position)
    try {
      applied += await applyPage(client, schema, projection, items, eventTable)
      if (last !== undefined) {
        position = last.position
        if (last.ok) lastRecordedAt = last.recordedAt
      }
      await perPage(applied, position)
    } catch (e) {
      // Never leave the read ahead unobserved: its failure after this one must not go unhandled.
      await next.catch(() => undefined)
      throw e
    }
    page = await next
  }
}

/** Rebuilds one projection (see the module comment). */
export const rebuildProjection = async (deps: RebuildDeps, config: RebuildConfig): Promise<RebuildResult> => {
  const r = await rebuildWith(deps, config, 'swap')
  return r.result
}

/**
 * Rebuilds the projection from the log in the scratch schema and compares every table with the live
 * one, row for row, at the same checkpoint (the live projection waits meanwhile); the live tables are
 * not changed. Fails when the live projection is behind the log (compare once it has caught up).
 */
export const compareWithRebuild = async (deps: RebuildDeps, config: RebuildConfig): Promise<{ readonly result: RebuildResult; readonly differences: ReadonlyArray<TableDifference> }> =>
  rebuildWith(deps, config, 'compare')

const rebuildWith = async (deps: RebuildDeps, config: RebuildConfig, mode: 'swap' | 'compare'): Promise<{ readonly result: RebuildResult; readonly differences: ReadonlyArray<TableDifference> }> => {
  const { schema, projection } = config
  const scratch = config.scratchSchema ?? scratchSchemaOf(schema, projection.name)
  const batchSize = config.batchSize ?? 5000
  const started = performance.now()
  const log = deps.log.child({ component: 'rebuild', projection: projection.name })
  const progress = (events: number, position: Position | null, phase: RebuildProgress['phase']): void => config.onProgress?.({ projection: projection.name, events, position, phase })

  // One rebuild of a projection at a time (the scratch schema is theirs).
  const lock = await deps.pool.connect()
  try {
    const { rows } = await lock.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [REBUILD_LOCKS, `rebuild:${schema}:${projection.name}`])
    if (rows[0]?.ok !== true) throw new Error(`a rebuild of ${projection.name} is already running`)
    await lock.query(`drop schema if exists "${scratch}" cascade`)
    await lock.query(`create schema "${scratch}"`)
    for (const sql of projection.createTables(scratch)) await lock.query(sql)

    // 1. Build while the live tables serve: one transaction per page.
    let built: { position: Position | null; lastRecordedAt: Date | null; applied: number } = { position: null, lastRecordedAt: null, applied: 0 }
    const builder = await deps.pool.connect()
    try {
      await builder.query('begin')
      built = await catchUp(
        deps,
        builder,
        scratch,
        projection,
        null,
        batchSize,
        async (applied, position) => {
          await builder.query('commit')
          await builder.query('begin')
          progress(applied, position, 'building')
        },
        config.eventTable,
      )
      await builder.query('commit')
    } catch (e) {
      await builder.query('rollback').catch(() => undefined)
      throw e
    } finally {
      builder.release()
    }

    // 2. The swap.
    progress(built.applied, built.position, 'swapping')
    const swap = await deps.pool.connect()
    try {
      await swap.query('begin')
      await swap.query("set local lock_timeout = '60s'")
      const cp = (await readCheckpoints(swap, schema, [projection.name], true)).get(projection.name)
      if (cp === undefined) throw new Error(`projection ${projection.name} has no checkpoint in ${schema} (run satang migrate)`)
      const tail = await catchUp(deps, swap, scratch, projection, built.position, batchSize, async () => undefined, config.eventTable)
      const position = tail.position
      const applied = built.applied + tail.applied
      const lastRecordedAt = tail.lastRecordedAt ?? built.lastRecordedAt
      if (mode === 'compare') {
        if (cp.position !== position) throw new Error(`projection ${projection.name} is at ${cp.position ?? 'start'} but the log ends at ${position ?? 'start'}: compare once it has caught up`)
        const differences: TableDifference[] = []
        for (const table of projection.tables) {
          const live = qualified(schema, table)
          const rebuilt = qualified(scratch, table)
          const { rows } = await swap.query<{ only_live: number; only_rebuilt: number }>(
            `select (select count(*)::int from (select * from ${live} except all select * from ${rebuilt}) a) as only_live,
                    (select count(*)::int from (select * from ${rebuilt} except all select * from ${live}) b) as only_rebuilt`,
          )
          differences.push({ table, onlyLive: rows[0]?.only_live ?? -1, onlyRebuilt: rows[0]?.only_rebuilt ?? -1 })
        }
        await swap.query('rollback')
        progress(applied, position, 'done')
        return { result: { projection: projection.name, events: applied, position, seconds: (performance.now() - started) / 1000 }, differences }
      }
      for (const view of projection.views ?? []) await swap.query(`drop view if exists ${qualified(schema, view)}`)
      for (const table of projection.tables) {
        await swap.query(`drop table if exists ${qualified(schema, table)}`)
        await swap.query(`alter table ${qualified(scratch, table)} set schema "${schema}"`)
      }
      for (const sql of projection.createViews?.(schema) ?? []) await swap.query(sql)
      await swap.query(
        `update ${qualified(schema, CHECKPOINTS_TABLE)}
            set position = $2, last_recorded_at = $3, events_applied = $4, updated_at = now(),
                failed_at = null, failure = null, failure_stream = null, failure_position = null
          where name = $1`,
        [projection.name, position, lastRecordedAt, applied],
      )
      await swap.query('commit')
      log.info({ events: applied, position }, `projection ${projection.name} rebuilt and swapped in`)
      progress(applied, position, 'done')
      return { result: { projection: projection.name, events: applied, position, seconds: (performance.now() - started) / 1000 }, differences: [] }
    } catch (e) {
      await swap.query('rollback').catch(() => undefined)
      throw e
    } finally {
      swap.release()
    }
  } finally {
    await lock.query(`drop schema if exists "${scratch}" cascade`).catch(() => undefined)
    await lock.query('select pg_advisory_unlock($1, hashtext($2))', [REBUILD_LOCKS, `rebuild:${schema}:${projection.name}`]).catch(() => undefined)
    lock.release()
  }
}
