/**
 * A per-key (source address) limit of `perWindow` requests a minute, as a sliding window: `take` counts
 * the request and answers whether the last minute holds no more than `perWindow`, estimated as this
 * window's count plus the previous window's, weighted by the share of it still inside the last
 * `windowMs`. A fixed window let a burst through twice at a window's edge (the limit at the end of one
 * minute, again at the start of the next); this one does not. Process memory is right here: a limit
 * protects this process, and a restart only forgets a minute. Two windows' maps are kept, each of at
 * most `maxKeys` addresses; beyond that the newcomers share one count, so a flood of spoofed-looking
 * addresses cannot grow them.
 */
export type RateLimiter = {
  /** `null` when the request fits; else the seconds until one more would. */
  readonly take: (key: string) => number | null
}

const OVERFLOW = '\u0000overflow'

/**
 * Milliseconds from `elapsed` (into the current window) until one more request fits, with `count`
 * requests counted in this window and `previous` in the one before.
 */
const waitMs = (perWindow: number, windowMs: number, elapsed: number, count: number, previous: number): number => {
  // Still in this window: once the previous window's share has shrunk enough.
  const room = perWindow - 1 - count
  if (room >= 0 && previous > 0) {
    const at = windowMs * (1 - room / previous)
    if (at < windowMs) return Math.max(0, at - elapsed)
  }
  // In the next window, where this one's count is the share that shrinks.
  const next = count <= perWindow - 1 ? 0 : windowMs * (1 - (perWindow - 1) / count)
  return windowMs - elapsed + next
}

export const makeRateLimiter = (perWindow: number, now: () => number, windowMs = 60_000, maxKeys = 100_000): RateLimiter => {
  let window = Math.floor(now() / windowMs)
  let previous = new Map<string, number>()
  let counts = new Map<string, number>()
  return {
    take: (key) => {
      if (perWindow <= 0) return null
      const t = now()
      const w = Math.floor(t / windowMs)
      if (w !== window) {
        previous = w === window + 1 ? counts : new Map()
        counts = new Map()
        window = w
      }
      const k = counts.has(key) || counts.size < maxKeys ? key : OVERFLOW
      const n = (counts.get(k) ?? 0) + 1
      counts.set(k, n)
      const p = previous.get(k) ?? 0
      const elapsed = t - w * windowMs
      if (n + (p * (windowMs - elapsed)) / windowMs <= perWindow) return null
      return Math.max(1, Math.ceil(waitMs(perWindow, windowMs, elapsed, n, p) / 1000))
    },
  }
}
