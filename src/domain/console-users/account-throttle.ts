/*
 * Wrong passwords for one account, wherever they come from. Failures are counted until windowMs passes
 * with none (a quiet window), not per window from the first one: so no burst at a window's edge gets
 * twice the allowance (the failures at the end of one window and again at the start of the next), and
 * any maxFailures within windowMs of each other lock the account. Each failure counted waits longer
 * than the last before it is answered (firstDelayMs, doubling, at most maxDelayMs); the maxFailures-th
 * locks the account for lockoutMs, doubling with each lockout in a row up to maxLockoutMs. While
 * locked, even the right password is refused. A right password clears the failures (not the count of
 * lockouts: a second lockout after a success still lasts longer). The state is kept beside the account
 * (console_users), so every api process counts the same failures.
 */

export type AccountThrottlePolicy = {
  readonly maxFailures: number
  readonly windowMs: number
  readonly firstDelayMs: number
  readonly maxDelayMs: number
  readonly lockoutMs: number
  readonly maxLockoutMs: number
}

export const DEFAULT_ACCOUNT_THROTTLE: AccountThrottlePolicy = {
  maxFailures: 5,
  windowMs: 15 * 60_000,
  firstDelayMs: 250,
  maxDelayMs: 4_000,
  lockoutMs: 5 * 60_000,
  maxLockoutMs: 60 * 60_000,
}

export type AccountThrottleState = {
  readonly failures: number
  /** When the last of `failures` came: they are forgotten once windowMs passes after it without another. */
  readonly lastFailureAt: Date | null
  readonly lockedUntil: Date | null
  readonly lockouts: number
}

export const NO_FAILURES: AccountThrottleState = { failures: 0, lastFailureAt: null, lockedUntil: null, lockouts: 0 }

export type AccountAdmission = { readonly _tag: 'Allowed' } | { readonly _tag: 'LockedOut'; readonly retryAfterSeconds: number; readonly lockedUntil: Date }

const secondsUntil = (until: Date, now: Date): number => Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000))

/** Whether a sign-in to the account may be tried now. */
export const admitAccount = (s: AccountThrottleState, now: Date): AccountAdmission =>
  s.lockedUntil !== null && s.lockedUntil.getTime() > now.getTime() ? { _tag: 'LockedOut', retryAfterSeconds: secondsUntil(s.lockedUntil, now), lockedUntil: s.lockedUntil } : { _tag: 'Allowed' }

export type AccountFailure = {
  readonly state: AccountThrottleState
  /** How long to wait before answering this failure. */
  readonly delayMs: number
  /** The failures counted since the last quiet window, this one included. */
  readonly failures: number
  /** Set when this failure locked the account. */
  readonly lockout: { readonly lockedAt: Date; readonly lockedUntil: Date; readonly retryAfterSeconds: number } | null
}

/** One more wrong password for the account at `now`. */
export const accountFailed = (p: AccountThrottlePolicy, s: AccountThrottleState, now: Date): AccountFailure => {
  const t = now.getTime()
  const quiet = s.lastFailureAt === null || t - s.lastFailureAt.getTime() >= p.windowMs
  const failures = (quiet ? 0 : s.failures) + 1
  if (failures >= p.maxFailures) {
    const duration = Math.min(p.maxLockoutMs, p.lockoutMs * 2 ** Math.min(s.lockouts, 20))
    const lockedUntil = new Date(t + duration)
    return { state: { failures: 0, lastFailureAt: null, lockedUntil, lockouts: s.lockouts + 1 }, delayMs: 0, failures, lockout: { lockedAt: now, lockedUntil, retryAfterSeconds: secondsUntil(lockedUntil, now) } }
  }
  const delayMs = Math.min(p.maxDelayMs, p.firstDelayMs * 2 ** (failures - 1))
  return { state: { failures, lastFailureAt: now, lockedUntil: s.lockedUntil, lockouts: s.lockouts }, delayMs, failures, lockout: null }
}

/** The right password: the failures are forgotten. */
export const accountSucceeded = (s: AccountThrottleState): AccountThrottleState => ({ failures: 0, lastFailureAt: null, lockedUntil: null, lockouts: s.lockouts })
