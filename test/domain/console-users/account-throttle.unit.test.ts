import { describe, expect, it } from 'vitest'
import { accountFailed, accountSucceeded, admitAccount, DEFAULT_ACCOUNT_THROTTLE, NO_FAILURES, type AccountThrottleState } from '../../../src/domain/console-users/account-throttle.ts'

const p = DEFAULT_ACCOUNT_THROTTLE
const t0 = new Date('2026-11-26T03:00:00.000Z')
const later = (ms: number): Date => new Date(t0.getTime() + ms)

/** `n` failures one second apart from `s`: the outcome of each. */
const fail = (n: number, s: AccountThrottleState = NO_FAILURES, start = 0): { readonly state: AccountThrottleState; readonly delays: number[]; readonly lockouts: Array<Date | null> } => {
  let state = s
  const delays: number[] = []
  const lockouts: Array<Date | null> = []
  for (let i = 0; i < n; i += 1) {
    const f = accountFailed(p, state, later(start + i * 1000))
    state = f.state
    delays.push(f.delayMs)
    lockouts.push(f.lockout?.lockedUntil ?? null)
  }
  return { state, delays, lockouts }
}

describe('the per-account throttle', () => {
  it('each wrong password waits longer than the last, and the fifth within 15 minutes locks the account for 5 minutes', () => {
    const r = fail(5)
    expect(r.delays).toEqual([250, 500, 1000, 2000, 0])
    expect(r.lockouts).toEqual([null, null, null, null, later(4000 + 5 * 60_000)])
    expect(admitAccount(r.state, later(4001))).toEqual({ _tag: 'LockedOut', retryAfterSeconds: 300, lockedUntil: later(4000 + 5 * 60_000) })
    expect(admitAccount(r.state, later(4000 + 5 * 60_000))).toEqual({ _tag: 'Allowed' })
  })

  it('the delay stops growing at its cap', () => {
    const patient = { ...p, maxFailures: 10 }
    let s = NO_FAILURES
    const delays: number[] = []
    for (let i = 0; i < 8; i += 1) {
      const f = accountFailed(patient, s, later(i))
      s = f.state
      delays.push(f.delayMs)
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000, 4000])
  })

  it('failures are forgotten once a whole window passes after the last without another', () => {
    const r = fail(4)
    const last = 3000
    const f = accountFailed(p, r.state, later(last + p.windowMs + 1))
    expect(f.failures).toBe(1)
    expect(f.delayMs).toBe(250)
    expect(f.lockout).toBeNull()
    // Just inside the window after the last, the count goes on: the fifth locks.
    expect(accountFailed(p, r.state, later(last + p.windowMs - 1)).failures).toBe(5)
    expect(accountFailed(p, r.state, later(last + p.windowMs - 1)).lockout).not.toBeNull()
  })
  it('given four failures, when the next comes exactly one window after the last, then counting starts again', () => {
    const r = fail(4)
    const next = later(3000 + p.windowMs)
    expect(accountFailed(p, r.state, next)).toEqual({ ...accountFailed(p, NO_FAILURES, next) })
    expect(accountFailed(p, r.state, next).failures).toBe(1)
  })

  it('a burst across the edge of a window gets the allowance once, not twice', () => {
    // One failure, then three just before a window has passed since it, then one just after: counted
    // per window from the first failure, the fifth would begin a new window and go unpunished.
    let s = accountFailed(p, NO_FAILURES, t0).state
    for (const ms of [p.windowMs - 3000, p.windowMs - 2000, p.windowMs - 1000]) s = accountFailed(p, s, later(ms)).state
    const fifth = accountFailed(p, s, later(p.windowMs))
    expect(fifth.failures).toBe(5)
    expect(fifth.lockout?.lockedUntil).toEqual(later(p.windowMs + p.lockoutMs))
  })

  it('failures that never leave a quiet window between them lock the account, however slowly they come', () => {
    const every = p.windowMs - 1
    let s = NO_FAILURES
    const counted: number[] = []
    for (let i = 0; i < 5; i += 1) {
      const f = accountFailed(p, s, later(i * every))
      s = f.state
      counted.push(f.failures)
    }
    expect(counted).toEqual([1, 2, 3, 4, 5])
    expect(s.lockedUntil).toEqual(later(4 * every + p.lockoutMs))
  })

  it('a second lockout lasts twice as long, up to an hour', () => {
    const first = fail(5)
    const second = fail(5, first.state, 10 * 60_000)
    expect(second.lockouts[4]).toEqual(later(10 * 60_000 + 4000 + 10 * 60_000))
    let s = second.state
    for (let k = 0; k < 6; k += 1) s = fail(5, s, (k + 1) * 3 * 3_600_000).state
    expect(s.lockedUntil).toEqual(later(6 * 3 * 3_600_000 + 4000 + 60 * 60_000))
    expect(s.lockouts).toBe(8)
  })

  it('the right password clears the failures but remembers the lockouts', () => {
    const r = fail(3)
    const ok = accountSucceeded({ ...r.state, lockouts: 2 })
    expect(ok).toEqual({ failures: 0, lastFailureAt: null, lockedUntil: null, lockouts: 2 })
    expect(accountFailed(p, ok, later(5000)).delayMs).toBe(250)
    expect(admitAccount(NO_FAILURES, t0)).toEqual({ _tag: 'Allowed' })
  })
})
