import type { OrderState } from '../domain/order/index.ts'
import type { RefundState } from '../domain/refund/index.ts'
import type { SubscriptionState } from '../domain/subscription/index.ts'

/**
 * What this process last knew of a stream: its folded state and the revision of its last event. A
 * command on a known stream decides on it without reading the stream again; the append's expected
 * revision is the guard, so a stale entry costs one `WrongExpectedVersion` (then a read), never a wrong
 * append. See `handleCommand` for the rules that keep it from ever answering wrongly.
 */
export type CachedStream<S> = {
  readonly state: S
  /** The revision of the stream's last event folded into `state` (a cached stream always exists). */
  readonly revision: bigint
}

/** The cached states of one aggregate kind's streams. */
export type StreamStates<S> = {
  readonly get: (stream: string) => CachedStream<S> | undefined
  readonly set: (stream: string, entry: CachedStream<S>) => void
  readonly drop: (stream: string) => void
}

/** Counters since start, for metrics and tests. */
export type StreamCacheStats = {
  readonly hits: number
  readonly misses: number
  readonly evictions: number
  readonly size: number
}

/**
 * A bounded in-process cache, least recently used out, shared by several kinds of stream: at most
 * `capacity` streams in all. Capacity 0 keeps nothing (every command reads its stream).
 */
export type StreamCache = {
  readonly capacity: number
  /** New, empty states for one kind of stream (call it once per kind; each call is its own scope). */
  readonly scope: <S>() => StreamStates<S>
  readonly stats: () => StreamCacheStats
}

/** A bounded LRU of stream states (see `StreamCache`). */
export const makeStreamCache = (capacity: number): StreamCache => {
  if (!Number.isSafeInteger(capacity) || capacity < 0) throw new Error(`stream cache capacity must be a whole number ≥ 0, got ${String(capacity)}`)
  // Every entry of every scope, in use order (a Map iterates in insertion order): the first is the least
  // recently used. The value removes the entry from its scope.
  const order = new Map<string, () => void>()
  let scopes = 0
  let hits = 0
  let misses = 0
  let evictions = 0

  const touch = (key: string, remove: () => void): void => {
    order.delete(key)
    order.set(key, remove)
    while (order.size > capacity) {
      const oldest = order.entries().next()
      if (oldest.done === true) break
      order.delete(oldest.value[0])
      oldest.value[1]()
      evictions += 1
    }
  }

  const scope = <S>(): StreamStates<S> => {
    scopes += 1
    const prefix = `${String(scopes)}:`
    const entries = new Map<string, CachedStream<S>>()
    const keyOf = (stream: string): string => prefix + stream
    return {
      get: (stream) => {
        const entry = entries.get(stream)
        if (entry === undefined) {
          misses += 1
          return undefined
        }
        hits += 1
        touch(keyOf(stream), () => entries.delete(stream))
        return entry
      },
      set: (stream, entry) => {
        if (capacity === 0) return
        entries.set(stream, entry)
        touch(keyOf(stream), () => entries.delete(stream))
      },
      drop: (stream) => {
        entries.delete(stream)
        order.delete(keyOf(stream))
      },
    }
  }

  return { capacity, scope, stats: () => ({ hits, misses, evictions, size: order.size }) }
}

/** This process's cached order, refund and subscription states (one bounded LRU for the three). */
export type AggregateStreamCache = {
  readonly order: StreamStates<OrderState>
  readonly refund: StreamStates<RefundState>
  readonly subscription: StreamStates<SubscriptionState>
  readonly stats: () => StreamCacheStats
}

/** At most `capacity` streams in all; 0 keeps nothing. */
export const makeAggregateStreamCache = (capacity: number): AggregateStreamCache => {
  const cache = makeStreamCache(capacity)
  return { order: cache.scope(), refund: cache.scope(), subscription: cache.scope(), stats: cache.stats }
}
