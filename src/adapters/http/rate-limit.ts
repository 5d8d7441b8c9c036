/**
 * A fixed-window counter per key (a source address): `take` answers whether one more request fits
 * in the current minute. Process memory is right here: a limit protects this process, and a restart
 * only forgets a minute. The map is dropped at each new window and holds at most `maxKeys` addresses;
 * beyond that the newcomers share one count, so a flood of spoofed-looking addresses cannot grow it.
 */
export type RateLimiter = {
  /** `null` when the request fits; else the seconds until the window ends. */
  readonly take: (key: string) => number | null
}

const OVERFLOW = '\u0000overflow'

export const makeRateLimiter = (perWindow: number, now: () => number, windowMs = 60_000, maxKeys = 100_000): RateLimiter => {
  let window = Math.floor(now() / windowMs)
  let counts = new Map<string, number>()
  return {
    take: (key) => {
      if (perWindow <= 0) return null
      const t = now()
      const w = Math.floor(t / windowMs)
      if (w !== window) {
        window = w
        counts = new Map()
      }
      const k = counts.has(key) || counts.size < maxKeys ? key : OVERFLOW
      const n = (counts.get(k) ?? 0) + 1
      counts.set(k, n)
      return n <= perWindow ? null : Math.max(1, Math.ceil(((w + 1) * windowMs - t) / 1000))
    },
  }
}
