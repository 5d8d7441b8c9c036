/**
 * The projector: reads the event log once and feeds every projection, each from its own checkpoint.
 *
 * One subscription to the global log (from the oldest checkpoint) fills a bounded, shared buffer of
 * decoded events. Each projection takes from it at its own pace, what has arrived up to a batch, and
 * applies that in its own transaction on its own connection: it locks its checkpoint row, skips the
 * events it already has (checkpoint ≥ position), applies the rest, moves the checkpoint and commits. A
 * crash at any point loses nothing (the checkpoint did not move) and applies nothing twice (it moved
 * with the writes). Projections run in parallel and independently, so one slow read model does not
 * hold the others back (only the buffer's bound does), and a failure stops only the projection it
 * happened in.
 *
 * An event that cannot be decoded (unknown type or schema version, bad data, bad envelope) stops
 * every projection that reads its stream, with an error naming the stream, revision and position; it
 * is never skipped. The error stays in the checkpoint row (`satang project --status`); the next start
 * of the projector tries again (after an upgrade that knows the event, it goes on).
 */
import { setImmediate as yieldToIo } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool, PoolClient } from 'pg'
import type { EventStore, Position, ReadItem, Subscription } from '../application/ports/event-store.ts'
import { approximateBytes } from '../application/approximate-size.ts'
import { decodeDomainEvent, describeEventDecodeError } from '../domain/events/registry.ts'
import type { Logger } from '../logger.ts'
import { isRetriablePgError } from '../platform/postgres/errors.ts'
import { advanceCheckpoint, clearFailure, ensureCheckpoints, readCheckpoints, recordFailure, type Checkpoint } from './checkpoints.ts'
import { projectedEventOf, readsStream, type ProjectedEvent, type Projection } from './types.ts'

/** An event of the batch: decoded, or why it cannot be. */
export type BatchItem =
  | { readonly ok: true; readonly position: Position; readonly streamName: string; readonly recordedAt: Date; readonly event: ProjectedEvent }
  | { readonly ok: false; readonly position: Position; readonly streamName: string; readonly reason: string }

/** Decodes a delivered item for the projections (once, shared by all of them). */
export const decodeBatchItem = (item: ReadItem): BatchItem => {
  if (E.isLeft(item)) {
    const u = item.left
    return { ok: false, position: u.position, streamName: u.stream, reason: `${u.stream} revision ${String(u.streamRevision)} at position ${u.position}: undecodable event ${u.eventId}: ${u.reason}` }
  }
  const r = item.right
  const decoded = decodeDomainEvent(r.type, r.schemaVersion, r.data)
  if (E.isLeft(decoded)) {
    return { ok: false, position: r.position, streamName: r.streamName, reason: `${r.streamName} revision ${String(r.streamRevision)} at position ${r.position}: ${describeEventDecodeError(decoded.left)}` }
  }
  return { ok: true, position: r.position, streamName: r.streamName, recordedAt: r.recordedAt, event: projectedEventOf(r, decoded.right) }
}

/** Test-only fault injection: called inside a projection's transaction, after its writes, before its commit. */
export type ProjectorCrashHook = (projection: string, batchNumber: number) => void

export type ProjectorConfig = {
  /** The read-model schema (tables and `projection_checkpoints`), already migrated. */
  readonly schema: string
  readonly projections: ReadonlyArray<Projection>
  /** Events per batch. Default 5000. */
  readonly batchSize?: number
  /**
   * Bytes of decoded events the projector holds, all projections together (an estimate of their heap
   * size, see `approximateBytes`): the shared buffer stops its reader past it, and a batch takes at
   * most a third of it, whatever `batchSize` says. Default `DEFAULT_BUFFER_BYTES`.
   */
  readonly bufferBytes?: number
  /** How long to wait before retrying after an operational failure. Default 1000 ms. */
  readonly retryDelayMs?: number
  /** See `ProjectionTarget.eventTable`: set only when the event store is PostgreSQL in the read models' database. */
  readonly eventTable?: string
  /** Whether a projection stopped by a failure is tried again when the projector starts. Default true. */
  readonly retryFailedOnStart?: boolean
}

export type ProjectorDeps = {
  readonly store: EventStore
  /** Read-model database; each projection's transaction takes one connection. */
  readonly pool: Pool
  readonly log: Logger
  readonly crashHook?: ProjectorCrashHook
  /** Called after each projection's committed batch (metrics). */
  readonly onApplied?: (projection: string, events: number, ms: number) => void
  /** Runs each projection's batch (tracing: a span around it, linked to the requests of its events). */
  readonly aroundBatch?: <T>(projection: string, items: ReadonlyArray<BatchItem>, apply: () => Promise<T>) => Promise<T>
}

export type Projector = {
  /** Resolves once every running projection has applied the whole log as it stood when called. */
  readonly caughtUp: (timeoutMs?: number) => Promise<void>
  /** Why the projector's reader is not running now (it retries), or null while it follows the log. */
  readonly failing: () => string | null
  readonly stop: () => Promise<void>
}

class Restart extends Error {
  override readonly name = 'Restart'
}

const before = (a: Position | null, b: Position | null): boolean => (a === null ? b !== null : b !== null && a < b)

/** Index of the first item after `position` (items are in log order). */
const firstAfter = (items: ReadonlyArray<BatchItem>, position: Position | null): number => {
  if (position === null) return 0
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const item = items[mid]
    if (item !== undefined && item.position <= position) lo = mid + 1
    else hi = mid
  }
  return lo
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * Applies one batch to one projection in its own transaction. `floor` is the position the batch
 * follows (what the reader delivered before it): a checkpoint behind it means events were missed
 * for this projection (it was rewound), and the reader must start again.
 */
const applyToProjection = async (
  deps: ProjectorDeps,
  config: ProjectorConfig,
  projection: Projection,
  items: ReadonlyArray<BatchItem>,
  floor: Position | null,
  batchNumber: number,
): Promise<'applied' | 'skipped' | 'failed'> => {
  const client: PoolClient = await deps.pool.connect()
  const started = performance.now()
  try {
    await client.query('begin')
    const cp = (await readCheckpoints(client, config.schema, [projection.name], true)).get(projection.name)
    if (cp === undefined) throw new Error(`projection ${projection.name} has no checkpoint row (run satang migrate)`)
    if (cp.failure !== null) {
      await client.query('rollback')
      return 'skipped'
    }
    if (before(cp.position, floor)) throw new Restart(`${projection.name}: checkpoint ${cp.position ?? 'start'} is behind the reader (${floor ?? 'start'})`)
    const pending = items.slice(firstAfter(items, cp.position))
    const bad = pending.findIndex((i) => !i.ok && readsStream(projection, i.streamName))
    const good = bad < 0 ? pending : pending.slice(0, bad)
    const events: ProjectedEvent[] = []
    for (const i of good) if (i.ok && readsStream(projection, i.streamName)) events.push(i.event)
    if (events.length > 0) {
      try {
        await projection.apply({ client, schema: config.schema, ...(config.eventTable === undefined ? {} : { eventTable: config.eventTable }) }, events)
      } catch (e) {
        if (isRetriablePgError(e)) throw e
        // A defect or a constraint the events break: stop this projection, name what it was applying.
        await client.query('rollback')
        const first = events[0]
        const last = events.at(-1)
        const message = `applying ${String(events.length)} events (${first?.streamName ?? '?'} at ${first?.position ?? '?'} … ${last?.position ?? '?'}) failed: ${messageOf(e)}`
        await recordFailure(deps.pool, config.schema, projection.name, { message, stream: first?.streamName ?? null, position: first?.position ?? null })
        deps.log.error({ projection: projection.name, err: e }, `projection ${projection.name} stopped: ${message}`)
        return 'failed'
      }
    }
    const lastGood = good.at(-1)
    if (lastGood !== undefined) {
      const recordedAt = good.findLast((i) => i.ok)
      await advanceCheckpoint(client, config.schema, projection.name, lastGood.position, recordedAt?.ok === true ? recordedAt.recordedAt : new Date(0), events.length)
    }
    const failing = bad < 0 ? undefined : pending[bad]
    if (failing !== undefined && !failing.ok) {
      await recordFailure(client, config.schema, projection.name, { message: failing.reason, stream: failing.streamName, position: failing.position })
      deps.log.error({ projection: projection.name, stream: failing.streamName, position: failing.position }, `projection ${projection.name} stopped: ${failing.reason}`)
    }
    deps.crashHook?.(projection.name, batchNumber)
    await client.query('commit')
    deps.onApplied?.(projection.name, events.length, performance.now() - started)
    return failing === undefined ? 'applied' : 'failed'
  } catch (e) {
    await client.query('rollback').catch(() => undefined)
    throw e
  } finally {
    client.release()
  }
}

/**
 * Decoded events the projector holds at most, in bytes (issue 31): 12 MiB, about 5,000 events of the
 * usual size. With 24 MiB the projector role peaked at 207–221 MiB catching up 600,000 events, with 12 at
 * 189–197, in the same time (55–65 s; docs/operations.md "Memory").
 */
export const DEFAULT_BUFFER_BYTES = 12 * 1024 * 1024

/** One decoded item in this many is measured (`approximateBytes`); the others count at the running average. */
const SIZE_SAMPLE = 16

/**
 * The count limits that keep `budgetBytes` of decoded items: the buffer's (at most `highWater`) and a
 * batch's (at most `batchSize`, and a third of the budget), from the running average size of the items
 * (one in `SIZE_SAMPLE` measured). Larger events than usual make both shorter, so the projector holds
 * about its budget whatever its events weigh; at least one item each.
 */
export const makeBufferSizer = (batchSize: number, highWater: number, budgetBytes: number) => {
  let average = 0
  let seen = 0
  const fit = (bytes: number, most: number): number => (average === 0 ? most : Math.max(1, Math.min(most, Math.floor(bytes / average))))
  return {
    observe: (item: BatchItem): void => {
      if (seen++ % SIZE_SAMPLE !== 0) return
      const bytes = approximateBytes(item)
      // The mean of the first samples, then a moving average of the recent ones (1/8 of each new one).
      average = average === 0 ? bytes : average + (bytes - average) / 8
    },
    /** Items the buffer holds before its reader waits. */
    capacity: (): number => fit(budgetBytes, highWater),
    /** Items one batch takes at most. */
    batch: (): number => fit(budgetBytes / 3, batchSize),
    averageBytes: (): number => average,
  }
}

/**
 * The events read from the log, shared by the projections: one reader appends, each projection takes
 * from its own cursor at its own pace, and an item is dropped once every projection has taken it.
 * The reader's handler waits while the slowest projection is `sizer.capacity()` items behind
 * (back-pressure on the store's reader: a count and a byte budget), so a slow read model bounds memory
 * without holding the fast ones back.
 */
const makeSharedLog = (names: ReadonlyArray<string>, sizer: ReturnType<typeof makeBufferSizer>) => {
  // Items are decoded as they arrive, so decoding overlaps with the projections' database work.
  let items: BatchItem[] = []
  let base = 0 // the sequence number of items[0]
  const cursors = new Map(names.map((n) => [n, 0]))
  const waiting = new Map<string, () => void>()
  let wakeProducer: (() => void) | undefined
  const end = (): number => base + items.length
  const trim = (): void => {
    const min = Math.min(...cursors.values())
    if (!Number.isFinite(min) || min <= base) return
    items = items.slice(min - base)
    base = min
    if (items.length < sizer.capacity()) {
      wakeProducer?.()
      wakeProducer = undefined
    }
  }
  const wakeAll = (): void => {
    for (const wake of waiting.values()) wake()
    waiting.clear()
  }
  return {
    push: async (item: ReadItem): Promise<void> => {
      const decoded = decodeBatchItem(item)
      sizer.observe(decoded)
      items.push(decoded)
      wakeAll()
      if (items.length >= sizer.capacity()) await new Promise<void>((r) => (wakeProducer = r))
    },
    /** Waits for items after `name`'s cursor (or `interrupt`), then returns up to a batch of them (not yet taken). */
    peek: async (name: string, interrupt: Promise<unknown>): Promise<BatchItem[]> => {
      const at = (): number => cursors.get(name) ?? end()
      if (at() >= end()) await Promise.race([new Promise<void>((r) => waiting.set(name, r)), interrupt])
      // Let the reader finish the page it is delivering: batches of one event would waste transactions.
      if (at() >= end() - sizer.batch()) await yieldToIo()
      // Sized once the items are there (the first ones tell their size).
      const max = sizer.batch()
      const from = at() - base
      return items.slice(from, from + max)
    },
    /** `name` has applied `n` more items. */
    advance: (name: string, n: number): void => {
      cursors.set(name, (cursors.get(name) ?? base) + n)
      trim()
    },
    /** `name` takes no more (it failed): it no longer holds items back. */
    leave: (name: string): void => {
      cursors.delete(name)
      waiting.get(name)?.()
      waiting.delete(name)
      trim()
    },
    release: () => {
      wakeProducer?.()
      wakeAll()
    },
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
  })

/** Starts the projector; it runs until `stop`. Migrations must have created the schema and the tables. */
export const startProjector = (deps: ProjectorDeps, config: ProjectorConfig): Projector => {
  const log = deps.log.child({ component: 'projector' })
  const names = config.projections.map((p) => p.name)
  const batchSize = config.batchSize ?? 5000
  const bufferBytes = config.bufferBytes ?? DEFAULT_BUFFER_BYTES
  const retryDelayMs = config.retryDelayMs ?? 1000
  const stopping = new AbortController()
  const stopped = new Promise<void>((r) => stopping.signal.addEventListener('abort', () => r(), { once: true }))
  let subscription: Subscription | undefined

  /**
   * Follows the log from `from` until a restart is needed, the projector stops, or every projection has
   * failed. Each projection runs its own loop over the shared log: it applies what it has not applied,
   * up to a batch, as fast as its own transactions allow.
   */
  const follow = async (from: Position | null, live: ReadonlyArray<Projection>): Promise<void> => {
    const shared = makeSharedLog(live.map((p) => p.name), makeBufferSizer(batchSize, batchSize * 3, bufferBytes))
    const sub = deps.store.subscribeToAll(from === null ? {} : { from }, (item) => shared.push(item))
    subscription = sub
    let ended: { readonly reason: string; readonly cause?: unknown } | undefined
    const closed = sub.closed.then((r) => {
      ended = E.isLeft(r) ? { reason: `the subscription to the event log failed (${r.left._tag})`, cause: r.left } : { reason: 'the subscription to the event log ended' }
    })
    // The first projection loop to fail (a restart, an operational failure) ends the others too.
    const halt = new AbortController()
    const halted = new Promise<void>((r) => halt.signal.addEventListener('abort', () => r(), { once: true }))
    const interrupt = Promise.race([closed, stopped, halted])
    const run = async (projection: Projection): Promise<void> => {
      let floor = from
      let batches = 0
      while (!stopping.signal.aborted && !halt.signal.aborted) {
        const items = await shared.peek(projection.name, interrupt)
        if (items.length === 0) {
          if (stopping.signal.aborted || halt.signal.aborted) return
          if (ended !== undefined) throw new Error(ended.reason, { cause: ended.cause })
          continue
        }
        batches += 1
        const apply = (): ReturnType<typeof applyToProjection> => applyToProjection(deps, config, projection, items, floor, batches)
        const outcome = await (deps.aroundBatch === undefined ? apply() : deps.aroundBatch(projection.name, items, apply))
        if (outcome === 'failed') {
          shared.leave(projection.name)
          return
        }
        floor = items.at(-1)?.position ?? floor
        shared.advance(projection.name, items.length)
      }
    }
    try {
      const outcomes = await Promise.allSettled(
        live.map((p) =>
          run(p).catch((e: unknown) => {
            halt.abort()
            throw e
          }),
        ),
      )
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
      if (failed !== undefined) throw failed.reason
    } finally {
      shared.release()
      await sub.stop()
      subscription = undefined
    }
  }

  let failure: string | null = null
  const loop = async (): Promise<void> => {
    let first = true
    while (!stopping.signal.aborted) {
      try {
        await ensureCheckpoints(deps.pool, config.schema, names)
        if (first && (config.retryFailedOnStart ?? true)) {
          const failed = [...(await readCheckpoints(deps.pool, config.schema, names)).values()].filter((c) => c.failure !== null)
          for (const c of failed) {
            log.warn({ projection: c.name, failure: c.failure?.message }, `projection ${c.name} had stopped (${c.failure?.message ?? ''}); trying it again`)
            await clearFailure(deps.pool, config.schema, c.name)
          }
        }
        first = false
        const checkpoints = await readCheckpoints(deps.pool, config.schema, names)
        const live = config.projections.filter((p) => checkpoints.get(p.name)?.failure === null)
        if (live.length === 0) {
          // Every projection has stopped: wait for an operator (a rebuild clears the failure).
          await sleep(Math.max(retryDelayMs, 2000), stopping.signal)
          continue
        }
        const positions = live.map((p) => checkpoints.get(p.name)?.position ?? null)
        const from = positions.reduce<Position | null>((min, p) => (min === null || p === null ? null : p < min ? p : min), positions[0] ?? null)
        log.info({ from: from ?? 'start', projections: live.map((p) => p.name) }, 'projector following the event log')
        failure = null
        await follow(from, live)
      } catch (e) {
        if (stopping.signal.aborted) break
        if (e instanceof Restart) {
          log.info({ reason: e.message }, 'projector restarting its reader')
          continue
        }
        failure = `the projector failed (${e instanceof Error ? e.message : String(e)}); retrying`
        log.error({ err: e }, `projector failed; retrying in ${String(retryDelayMs)} ms`)
        await sleep(retryDelayMs, stopping.signal)
      }
    }
  }

  const done = loop()

  const caughtUp = async (timeoutMs = 60_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs
    // The head as committed now, readable yet or not: counting readable events alone would call a
    // projection caught up while committed events still wait behind an older transaction.
    const head = await deps.store.headPosition()()
    if (E.isLeft(head)) throw new Error(`headPosition failed: ${head.left.operation}`)
    for (;;) {
      const checkpoints: ReadonlyMap<string, Checkpoint> = await readCheckpoints(deps.pool, config.schema, names)
      const behind = [...checkpoints.values()].some((c) => c.failure === null && before(c.position, head.right ?? null))
      if (!behind && checkpoints.size === names.length) return
      if (Date.now() > deadline) throw new Error(`projections did not catch up within ${String(timeoutMs)} ms`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  return {
    caughtUp,
    failing: () => failure,
    stop: async () => {
      stopping.abort()
      await subscription?.stop()
      await done
    },
  }
}
