import type { OrderState } from '../domain/order/index.ts'
import type { RefundState } from '../domain/refund/index.ts'
import type { SubscriptionState } from '../domain/subscription/index.ts'
import { approximateBytes } from './approximate-size.ts'

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
  /** About how many bytes the cached states and their stream names hold (`approximateBytes`, plus each entry's bookkeeping); 0 for a cache without a byte budget (nothing is estimated). */
  readonly bytes: number
}

/**
 * A bounded in-process cache, least recently used out, shared by several kinds of stream: at most
 * `capacity` streams in all, and at most `budgetBytes` bytes of them (an estimate, `approximateBytes`).
 * Capacity 0 keeps nothing (every command reads its stream); a state larger than the whole budget is
 * not kept.
 */
export type StreamCache = {
  readonly capacity: number
  readonly budgetBytes: number
  /** New, empty states for one kind of stream (call it once per kind; each call is its own scope). */
  readonly scope: <S>() => StreamStates<S>
  readonly stats: () => StreamCacheStats
}

/** What one entry costs besides its state: its key twice (scope and order), two Map slots, its bookkeeping object and closure, the revision. */
const ENTRY_OVERHEAD_BYTES = 200

type Slot = { readonly remove: () => void; readonly bytes: number }

/** A bounded LRU of stream states (see `StreamCache`). */
export const makeStreamCache = (capacity: number, budgetBytes: number = Number.POSITIVE_INFINITY): StreamCache => {
  if (!Number.isSafeInteger(capacity) || capacity < 0) throw new Error(`stream cache capacity must be a whole number ≥ 0, got ${String(capacity)}`)
  if (!(budgetBytes >= 0)) throw new Error(`stream cache budget must be a number of bytes ≥ 0, got ${String(budgetBytes)}`)
  // Every entry of every scope, in use order (a Map iterates in insertion order): the first is the least
  // recently used. The slot removes the entry from its scope and says what it was counted as.
  const order = new Map<string, Slot>()
  let scopes = 0
  let hits = 0
  let misses = 0
  let evictions = 0
  let bytes = 0

  const evictWhileOver = (): void => {
    while (order.size > capacity || bytes > budgetBytes) {
      const oldest = order.entries().next()
      if (oldest.done === true) break
      order.delete(oldest.value[0])
      bytes -= oldest.value[1].bytes
      oldest.value[1].remove()
      evictions += 1
    }
  }

  const forget = (key: string): void => {
    const slot = order.get(key)
    if (slot === undefined) return
    order.delete(key)
    bytes -= slot.bytes
  }

  /** Moves an entry to the most recently used end (its size unchanged). */
  const touch = (key: string): void => {
    const slot = order.get(key)
    if (slot === undefined) return
    order.delete(key)
    order.set(key, slot)
  }

  const put = (key: string, slot: Slot): void => {
    forget(key)
    order.set(key, slot)
    bytes += slot.bytes
    evictWhileOver()
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
        touch(keyOf(stream))
        return entry
      },
      set: (stream, entry) => {
        if (capacity === 0) return
        const key = keyOf(stream)
        // Without a byte budget the sizes bound nothing: they are not estimated (a reconciliation
        // run's cache takes two states per order), and \`bytes\` stays 0.
        const size = budgetBytes === Number.POSITIVE_INFINITY ? 0 : ENTRY_OVERHEAD_BYTES + 2 * approximateBytes(key) + approximateBytes(entry.state)
        if (size > budgetBytes) {
          // Larger than the whole budget: not kept (an older state of it must not stay either).
          entries.delete(stream)
          forget(key)
          return
        }
        entries.set(stream, entry)
        put(key, { remove: () => entries.delete(stream), bytes: size })
      },
      drop: (stream) => {
        entries.delete(stream)
        forget(keyOf(stream))
      },
    }
  }

  return { capacity, budgetBytes, scope, stats: () => ({ hits, misses, evictions, size: order.size, bytes }) }
}

/** This process's cached order, refund and subscription states (one bounded LRU for the three). */
export type AggregateStreamCache = {
  readonly order: StreamStates<OrderState>
  readonly refund: StreamStates<RefundState>
  readonly subscription: StreamStates<SubscriptionState>
  readonly stats: () => StreamCacheStats
}

/** At most `capacity` streams and `budgetBytes` bytes in all; capacity 0 keeps nothing. */
export const makeAggregateStreamCache = (capacity: number, budgetBytes: number = Number.POSITIVE_INFINITY): AggregateStreamCache => {
  const cache = makeStreamCache(capacity, budgetBytes)
  return { order: cache.scope(), refund: cache.scope(), subscription: cache.scope(), stats: cache.stats }
}
