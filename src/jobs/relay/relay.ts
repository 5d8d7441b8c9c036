/**
 * The relay: every event of the global log, in log order, to the event publisher (the Kafka topic).
 *
 * At least once, never a gap: the relay follows the log from its checkpoint with the store's no-skip
 * subscription, publishes what has arrived (up to a batch) in log order, and moves its checkpoint only
 * after the broker acknowledged the whole batch. A crash at any point republishes at most the batch in
 * flight (consumers dedupe on the event id); nothing after the checkpoint is ever passed over.
 *
 * Only one relay publishes per database: the one holding the relay lock (relay-lock.ts). The others
 * stand by and take over when it dies. Every failure (broker down, topic missing, database, an event
 * that cannot be read) stops publishing with a clear error, kept in the checkpoint row and in
 * `state()`, and the relay tries again from its checkpoint with exponential backoff. An event that
 * cannot be decoded is never skipped: the relay stops before it until a version that knows it runs.
 */
import { hostname } from 'node:os'
import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import type { EventPublisher, PublishFailureKind } from '../../application/ports/event-publisher.ts'
import type { EventStore, Position, ReadItem, RecordedEvent } from '../../application/ports/event-store.ts'
import type { Logger } from '../../logger.ts'
import { advanceRelayCheckpoint, claimRelayCheckpoint, clearRelayFailing, readRelayCheckpoint, recordRelayError, writeRelayHeartbeat } from './relay-checkpoint.ts'
import { heartbeatOf, openLockSession, RELAY_APPLICATION_NAME, type LockSession } from './relay-lock.ts'
import { readRelayStatus, type RelayStatus } from './relay-status.ts'

export type RelayErrorKind = PublishFailureKind | 'database' | 'event_log' | 'undecodable_event'

export type RelayError = { readonly at: Date; readonly kind: RelayErrorKind; readonly message: string }

/** What this process's relay is doing: `standby` (another process publishes), `leader` (this one does). */
export type RelayRole = 'starting' | 'standby' | 'leader' | 'stopped'

/** This process's relay, in memory (for `/metrics` and progress lines). */
export type RelayRuntime = {
  readonly role: RelayRole
  readonly topic: string
  /** Where the events go, once the publisher prepared it. */
  readonly destination: string | null
  /** The last event this process had acknowledged. */
  readonly position: Position | null
  /** Events this process published since it started. */
  readonly published: number
  /** Events per second acknowledged over the last 10 s. */
  readonly publishRate: number
  readonly lastError: RelayError | null
  /** Whether the last attempt failed (the relay is waiting to retry). */
  readonly failing: boolean
  /** Whether the leader reached the broker (its topic prepared) since it took the lock or last failed. */
  readonly connected: boolean
  /** When this process last made progress as leader: reached the broker, or had a batch acknowledged (epoch ms; null: never). */
  readonly progressAt: number | null
}

export type Relay = {
  readonly runtime: () => RelayRuntime
  /** The relay as the database sees it (lag, holder, last error), as `satang relay --status` prints it. */
  readonly status: () => Promise<RelayStatus>
  /** Finishes the batch in flight (publish and checkpoint), releases the lock, closes the publisher. */
  readonly stop: () => Promise<void>
}

export type RelayDeps = {
  readonly store: EventStore
  readonly publisher: EventPublisher
  /** The read-model database: the checkpoint row, and the lock session's connection settings. */
  readonly pool: Pool
  readonly log: Logger
  readonly now?: () => Date
}

export type RelayConfig = {
  /** The read-model schema holding `relay_checkpoints` (migrated). */
  readonly schema: string
  /** The destination's name: the checkpoint's key. */
  readonly topic: string
  /** Most events per publish. Default 5000. */
  readonly batchSize?: number
  /** First wait before a retry; it doubles per failure in a row. Default 500 ms. */
  readonly retryBaseMs?: number
  /** Longest wait between retries. Default 30 s. */
  readonly retryMaxMs?: number
  /** How often a standby tries to take the lock. Default 1000 ms. */
  readonly standbyPollMs?: number
  /** How often the lock session checks its connection. Default 2000 ms. */
  readonly heartbeatMs?: number
  /** How often the leader writes its heartbeat into the checkpoint row. Default 5000 ms. */
  readonly rowHeartbeatMs?: number
}

const RATE_WINDOW_MS = 10_000

/** Thrown inside the leader loop when the lock session is gone: step down, stand by again. */
class LockLost extends Error {
  override readonly name = 'LockLost'
}

/** Items from the store's subscription, waiting to be published; the subscription waits when it is full. */
const makeBuffer = (highWater: number) => {
  let items: ReadItem[] = []
  let wakeTaker: (() => void) | undefined
  let wakeProducer: (() => void) | undefined
  /** Up to `max` items that are here now (possibly none), without waiting. */
  const takeNow = (max: number): ReadonlyArray<ReadItem> => {
    if (items.length === 0) return []
    const out = items.length <= max ? items : items.slice(0, max)
    items = items.length <= max ? [] : items.slice(max)
    if (items.length < highWater) {
      wakeProducer?.()
      wakeProducer = undefined
    }
    return out
  }
  return {
    push: async (item: ReadItem): Promise<void> => {
      items.push(item)
      wakeTaker?.()
      wakeTaker = undefined
      if (items.length >= highWater) await new Promise<void>((r) => (wakeProducer = r))
    },
    /** Up to `max` items; waits for one unless `interrupt` settles first (then possibly none). */
    take: async (max: number, interrupt: Promise<unknown>): Promise<ReadonlyArray<ReadItem>> => {
      if (items.length === 0) await Promise.race([new Promise<void>((r) => (wakeTaker = r)), interrupt])
      wakeTaker = undefined
      return takeNow(max)
    },
    takeNow,
    release: (): void => {
      wakeProducer?.()
      wakeProducer = undefined
    },
  }
}

/**
 * The events to hand to the publisher now: those before the first the store could not read (its
 * envelope), and which one that is. Each event's data is checked by the publisher itself, on its own
 * thread (EventPublisher's `publish`): it publishes up to the first it refuses.
 */
export const readablePrefix = (items: ReadonlyArray<ReadItem>): { readonly events: ReadonlyArray<RecordedEvent>; readonly stop: string | null } => {
  const events: RecordedEvent[] = []
  for (const item of items) {
    if (E.isLeft(item)) {
      const u = item.left
      return { events, stop: `${u.stream} revision ${String(u.streamRevision)} at position ${u.position}: undecodable event ${u.eventId}: ${u.reason}` }
    }
    events.push(item.right)
  }
  return { events, stop: null }
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Starts the relay; it runs until `stop`. The read-model migrations must have created `relay_checkpoints`. */
export const startRelay = (deps: RelayDeps, config: RelayConfig): Relay => {
  const { schema, topic } = config
  const log = deps.log.child({ component: 'relay', topic })
  const now = deps.now ?? (() => new Date())
  const batchSize = config.batchSize ?? 5000
  const retryBaseMs = config.retryBaseMs ?? 500
  const retryMaxMs = config.retryMaxMs ?? 30_000
  const standbyPollMs = config.standbyPollMs ?? 1_000
  const holder = `${hostname()} pid ${String(process.pid)}`
  const stopping = new AbortController()
  const stopped = new Promise<void>((r) => stopping.signal.addEventListener('abort', () => r(), { once: true }))

  let role: RelayRole = 'starting'
  let destination: string | null = null
  let position: Position | null = null
  let published = 0
  let lastError: RelayError | null = null
  let failing = false
  // Acknowledged batches of the last RATE_WINDOW_MS: [epoch ms, events].
  let acks: Array<readonly [number, number]> = []
  let leaderSince = 0
  let connected = false
  let progressAt: number | null = null
  const rowHeartbeatMs = config.rowHeartbeatMs ?? 5_000

  const publishRate = (): number => {
    const t = Date.now()
    acks = acks.filter(([at]) => t - at <= RATE_WINDOW_MS)
    const events = acks.reduce((n, [, k]) => n + k, 0)
    const window = Math.min(RATE_WINDOW_MS, Math.max(1_000, t - leaderSince)) / 1000
    return events / window
  }

  /** Waits `ms`, or less when the relay stops or `also` settles. */
  const pause = (ms: number, also?: Promise<unknown>): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      const done = (): void => {
        clearTimeout(timer)
        resolve()
      }
      void stopped.then(done)
      void also?.then(done)
    })

  const backoff = (failuresInARow: number): number => Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(20, failuresInARow - 1))

  /** Notes a failure in memory and the log; the caller records it in the checkpoint row if it can. */
  const noteError = (kind: RelayErrorKind, message: string, retryInMs: number, cause?: unknown): RelayError => {
    const error = { at: now(), kind, message }
    lastError = error
    failing = true
    connected = false
    log.error({ kind, retryInMs, ...(cause === undefined ? {} : { err: cause }) }, `relay stopped publishing: ${message}; retrying in ${(retryInMs / 1000).toFixed(1)} s`)
    return error
  }

  /**
   * Publishes from the checkpoint until the relay stops (right) or something fails (left: what and why).
   * Throws `LockLost` when the lock session died. `onProgress` is called after each acknowledged batch.
   */
  const publishFromCheckpoint = async (session: LockSession, onProgress: () => void): Promise<E.Either<{ kind: RelayErrorKind; message: string; cause?: unknown }, void>> => {
    const prepared = await deps.publisher.prepare()()
    if (E.isLeft(prepared)) return E.left({ kind: prepared.left.kind, message: prepared.left.message, cause: prepared.left.cause })
    destination = prepared.right.description
    const onSession = <A>(p: Promise<A>): Promise<A> =>
      p.catch((e: unknown) => {
        throw session.isLost() ? new LockLost(messageOf(e)) : e
      })
    const checkpoint = await onSession(readRelayCheckpoint(session, schema, topic))
    // Reached the destination: no longer failing (whichever process failed last), unless what stopped
    // the relay is an event it cannot publish: that one is still next, so the relay stays failing until
    // the checkpoint moves past it (advanceRelayCheckpoint clears it). Cleared at every retry, the status
    // read "publishing" for a moment each time while the relay stood stuck before the same event.
    const stuckBeforeEvent = checkpoint?.failing === true && checkpoint.lastError?.kind === 'undecodable_event'
    if (!stuckBeforeEvent) {
      await onSession(clearRelayFailing(session, schema, topic))
      failing = false
    }
    connected = true
    progressAt = Date.now()
    const from = checkpoint?.position ?? null
    position = from
    log.info({ from: from ?? 'start', partitions: prepared.right.partitions, created: prepared.right.created }, `relay publishing to ${prepared.right.description}`)
    const buffer = makeBuffer(batchSize * 2)
    const sub = deps.store.subscribeToAll(from === null ? {} : { from }, (item) => buffer.push(item))
    const interrupt = Promise.race([stopped, sub.closed, session.lost])
    // The next batch, taken and checked while the one before it was on its way to the broker.
    let ahead: ReturnType<typeof readablePrefix> | undefined
    try {
      while (!stopping.signal.aborted) {
        if (session.isLost()) throw new LockLost('the relay lock connection was lost')
        const items = ahead === undefined ? await buffer.take(batchSize, interrupt) : []
        if (ahead === undefined && items.length === 0) {
          if (stopping.signal.aborted) break
          if (session.isLost()) throw new LockLost('the relay lock connection was lost')
          const closed = await Promise.race([sub.closed, Promise.resolve(undefined)])
          if (closed !== undefined) {
            return E.left(E.isLeft(closed) ? { kind: 'event_log', message: `reading the event log failed (${closed.left._tag})`, cause: closed.left } : { kind: 'event_log', message: 'the subscription to the event log ended' })
          }
          continue
        }
        const { events, stop } = ahead ?? readablePrefix(items)
        ahead = undefined
        // The event the relay stops before: one the publisher refused, else one the store could not read.
        let before = stop
        if (events.length > 0) {
          const sending = deps.publisher.publish(events)()
          // Published in order all the same: the next batch is only sent after this one's checkpoint.
          const next = stop === null ? buffer.takeNow(batchSize) : []
          if (next.length > 0) ahead = readablePrefix(next)
          const sent = await sending
          if (E.isLeft(sent)) return E.left({ kind: sent.left.kind, message: sent.left.message, cause: sent.left.cause })
          const { published: count, refused } = sent.right
          const last = events[count - 1]
          if (last !== undefined) {
            acks.push([Date.now(), count])
            const moved = await onSession(advanceRelayCheckpoint(session, schema, topic, { position: last.position, recordedAt: last.recordedAt, published: count, rate: publishRate() }))
            if (!moved) return E.left({ kind: 'database', message: `the checkpoint of ${topic} is already at or past ${last.position}: another relay published without the lock; starting again from the checkpoint` })
            position = last.position
            published += count
            failing = false
            progressAt = Date.now()
            onProgress()
          }
          before = refused ?? stop
        }
        if (before !== null) return E.left({ kind: 'undecodable_event', message: `stopped before an event it cannot publish: ${before}` })
      }
      return E.right(undefined)
    } finally {
      buffer.release()
      await sub.stop()
    }
  }

  /** Holds the lock: publishes, and after each failure records it and retries with backoff. */
  const lead = async (session: LockSession): Promise<void> => {
    await claimRelayCheckpoint(session, schema, topic, holder)
    role = 'leader'
    leaderSince = Date.now()
    acks = []
    connected = false
    log.info({ holder }, 'relay lock taken: this process publishes')
    // The heartbeat in the checkpoint row: other processes (the console, satang relay --status) see the
    // publisher alive from the database, whatever their own configuration.
    const beat = heartbeatOf(() =>
      writeRelayHeartbeat(session, schema, topic).catch((e: unknown) => {
        if (!session.isLost()) log.warn({ err: e }, 'could not write the relay heartbeat')
      }),
    )
    beat()
    const heartbeat = setInterval(beat, rowHeartbeatMs)
    heartbeat.unref()
    try {
      await leadLoop(session)
    } finally {
      clearInterval(heartbeat)
      connected = false
    }
  }

  const leadLoop = async (session: LockSession): Promise<void> => {
    let failuresInARow = 0
    while (!stopping.signal.aborted) {
      let outcome: Awaited<ReturnType<typeof publishFromCheckpoint>>
      try {
        outcome = await publishFromCheckpoint(session, () => {
          failuresInARow = 0
        })
      } catch (e) {
        if (e instanceof LockLost || session.isLost()) throw e instanceof LockLost ? e : new LockLost(messageOf(e))
        outcome = E.left({ kind: 'database', message: `the read-model database failed: ${messageOf(e)}`, cause: e })
      }
      if (E.isRight(outcome)) return
      failuresInARow += 1
      const wait = backoff(failuresInARow)
      const error = noteError(outcome.left.kind, outcome.left.message, wait, outcome.left.cause)
      await recordRelayError(session, schema, topic, error).catch((e: unknown) => {
        if (session.isLost()) throw new LockLost(messageOf(e))
        log.warn({ err: e }, 'could not record the relay error in its checkpoint row')
      })
      await pause(wait, session.lost)
    }
  }

  const run = async (): Promise<void> => {
    let failuresInARow = 0
    while (!stopping.signal.aborted) {
      let session: LockSession
      try {
        session = await openLockSession({ pool: deps.pool, log }, { applicationName: `${RELAY_APPLICATION_NAME} ${topic} ${holder}`, ...(config.heartbeatMs === undefined ? {} : { heartbeatMs: config.heartbeatMs }) })
      } catch (e) {
        failuresInARow += 1
        const wait = backoff(failuresInARow)
        noteError('database', `cannot connect to the read-model database for the relay lock: ${messageOf(e)}`, wait, e)
        await pause(wait)
        continue
      }
      try {
        role = 'standby'
        let announced = false
        while (!stopping.signal.aborted && !session.isLost()) {
          if (await session.tryAcquire()) break
          if (!announced) log.info('relay standing by: another process holds the relay lock')
          announced = true
          await pause(standbyPollMs, session.lost)
        }
        if (stopping.signal.aborted) break
        if (session.isLost()) throw new LockLost(messageOf(await session.lost))
        failuresInARow = 0
        await lead(session)
      } catch (e) {
        failuresInARow += 1
        const wait = backoff(failuresInARow)
        noteError('database', e instanceof LockLost ? `lost the relay lock connection (${e.message}); standing by again` : `the relay lock session failed: ${messageOf(e)}`, wait, e)
        await pause(wait)
      } finally {
        role = stopping.signal.aborted ? 'stopped' : 'standby'
        await session.close()
      }
    }
  }

  const done = run().catch((e: unknown) => {
    // A defect (the loop itself threw): the relay stops for good; the process stays up for the API.
    log.fatal({ err: e }, 'the relay crashed; restart the process')
    lastError = { at: now(), kind: 'database', message: `the relay crashed: ${messageOf(e)}` }
    failing = true
  })

  return {
    runtime: () => ({ role, topic, destination, position, published, publishRate: role === 'leader' ? publishRate() : 0, lastError, failing, connected, progressAt }),
    status: () => readRelayStatus({ store: deps.store, pool: deps.pool }, schema, topic, now),
    stop: async () => {
      stopping.abort()
      await done
      role = 'stopped'
      await deps.publisher.close()
    },
  }
}
