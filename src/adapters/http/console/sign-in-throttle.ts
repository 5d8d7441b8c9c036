/*
 * Failed console sign-ins, counted per client address and for all accounts together (a wrong token
 * names no account): each failure from an address waits longer than the last (200 ms, doubling, at most
 * 3.2 s), and past `maxFailures` the address is locked out (every sign-in from it answers 429 with
 * Retry-After, even with a right token), for a minute, doubling with each lockout up to 15 minutes. An
 * address's failures are forgotten once `windowMs` passes without one (not per window from the first:
 * a burst across a window's edge would get the allowance twice). Failures from every address together,
 * counted per minute, only slow down (up to 5 s each): locking every
 * account out would hand anyone who can reach the form a way to keep the operators out. The table
 * lives in this process's memory: at most `maxEntries` addresses, each forgotten an hour after its
 * last failure or lockout; when full, the least recently failing one goes first.
 */

export type ThrottlePolicy = {
  readonly maxFailures: number
  readonly windowMs: number
  readonly firstDelayMs: number
  readonly maxDelayMs: number
  readonly lockoutMs: number
  readonly maxLockoutMs: number
  /** Failures from all addresses within the window past which every failure waits `maxAllDelayMs`, growing to it. */
  readonly allAccountsFailures: number
  readonly maxAllDelayMs: number
  readonly maxEntries: number
  readonly forgetAfterMs: number
}

export const DEFAULT_THROTTLE: ThrottlePolicy = {
  maxFailures: 5,
  windowMs: 60_000,
  firstDelayMs: 200,
  maxDelayMs: 3_200,
  lockoutMs: 60_000,
  maxLockoutMs: 15 * 60_000,
  allAccountsFailures: 30,
  maxAllDelayMs: 5_000,
  maxEntries: 10_000,
  forgetAfterMs: 3_600_000,
}

type Entry = { lastFailure: number; failures: number; lockedUntil: number; lockouts: number; lastSeen: number }

/** Whether a sign-in from an address may be tried now. */
export type Admission = { readonly _tag: 'Allowed' } | { readonly _tag: 'LockedOut'; readonly retryAfterSeconds: number }

/** What a failed sign-in costs: a delay before answering, and a lockout when this failure began one. */
export type FailureOutcome = {
  readonly delayMs: number
  readonly lockout: { readonly failures: number; readonly windowSeconds: number; readonly lockedAt: Date; readonly lockedUntil: Date; readonly retryAfterSeconds: number } | null
}

export type SignInThrottle = {
  readonly admit: (address: string, now: Date) => Admission
  readonly failed: (address: string, now: Date) => FailureOutcome
  readonly succeeded: (address: string) => void
  /** Addresses held (for tests of the bound). */
  readonly size: () => number
}

export const makeSignInThrottle = (policy: ThrottlePolicy = DEFAULT_THROTTLE): SignInThrottle => {
  const entries = new Map<string, Entry>()
  const all = { windowStart: 0, failures: 0 }

  const touch = (address: string, entry: Entry, t: number): void => {
    entry.lastSeen = t
    // Map order is insertion order: re-inserting keeps the least recently seen first.
    entries.delete(address)
    entries.set(address, entry)
  }

  const forgetOld = (t: number): void => {
    // Oldest first: stop at the first one that is recent while there is room.
    for (const [address, e] of entries) {
      if (t - e.lastSeen < policy.forgetAfterMs && entries.size < policy.maxEntries) break
      entries.delete(address)
    }
  }

  const retryAfter = (until: number, t: number): number => Math.max(1, Math.ceil((until - t) / 1000))

  return {
    admit: (address, now) => {
      const e = entries.get(address)
      const t = now.getTime()
      return e !== undefined && e.lockedUntil > t ? { _tag: 'LockedOut', retryAfterSeconds: retryAfter(e.lockedUntil, t) } : { _tag: 'Allowed' }
    },
    failed: (address, now) => {
      const t = now.getTime()
      let e = entries.get(address)
      if (e === undefined) {
        forgetOld(t)
        e = { lastFailure: t, failures: 0, lockedUntil: 0, lockouts: 0, lastSeen: t }
      }
      // A quiet window since the last failure: the count starts again.
      if (t - e.lastFailure >= policy.windowMs) e.failures = 0
      e.lastFailure = t
      e.failures += 1
      touch(address, e, t)
      if (t - all.windowStart >= policy.windowMs) {
        all.windowStart = t
        all.failures = 0
      }
      all.failures += 1
      const over = all.failures - policy.allAccountsFailures
      const allDelay = over <= 0 ? 0 : Math.min(policy.maxAllDelayMs, policy.firstDelayMs * 2 ** Math.min(over - 1, 16))
      if (e.failures > policy.maxFailures) {
        const duration = Math.min(policy.maxLockoutMs, policy.lockoutMs * 2 ** Math.min(e.lockouts, 16))
        e.lockouts += 1
        e.lockedUntil = t + duration
        const failures = e.failures
        e.failures = 0
        return {
          delayMs: 0,
          lockout: { failures, windowSeconds: Math.ceil(policy.windowMs / 1000), lockedAt: now, lockedUntil: new Date(t + duration), retryAfterSeconds: retryAfter(t + duration, t) },
        }
      }
      const own = e.failures <= 1 ? 0 : Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (e.failures - 2))
      return { delayMs: Math.max(own, allDelay), lockout: null }
    },
    succeeded: (address) => {
      const e = entries.get(address)
      if (e !== undefined) e.failures = 0
    },
    size: () => entries.size,
  }
}
