/** Requests per second and burst of one caller; `perSecond` 0 turns limiting off. */
export type RateLimit = { readonly perSecond: number; readonly burst: number }

export type RateLimiter = {
  /** Takes one token for `key`: 0 when allowed, else the ms until a token is free. */
  readonly take: (key: string) => number
  readonly configure: (limit: RateLimit) => void
  readonly limit: () => RateLimit
}

type Bucket = { tokens: number; at: number }

/** A token bucket per caller (per `merchant_id`), on real (not sandbox) time. */
export const makeRateLimiter = (initial: RateLimit, now: () => number = () => performance.now()): RateLimiter => {
  let limit = initial
  const buckets = new Map<string, Bucket>()
  return {
    take: (key) => {
      if (limit.perSecond <= 0) return 0
      const t = now()
      const bucket = buckets.get(key) ?? { tokens: limit.burst, at: t }
      bucket.tokens = Math.min(limit.burst, bucket.tokens + ((t - bucket.at) * limit.perSecond) / 1000)
      bucket.at = t
      buckets.set(key, bucket)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return 0
      }
      return Math.ceil(((1 - bucket.tokens) * 1000) / limit.perSecond)
    },
    configure: (l) => {
      limit = l
      buckets.clear()
    },
    limit: () => limit,
  }
}
