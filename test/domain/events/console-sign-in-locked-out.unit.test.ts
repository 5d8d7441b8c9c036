import { describe, expect, it } from 'vitest'
import { consoleSignInNaturalKey, consoleSignInStreamName, keptAddress, signInLockedOut } from '../../../src/domain/events/common/console-sign-in-locked-out.ts'

/** A console lockout as an event: its data, its stream (the Bangkok day) and its natural key, whole. */

const lockedAt = new Date('2026-11-26T03:00:00.000Z')
const lockedUntil = new Date('2026-11-26T03:05:00.000Z')
const STREAM = 'console-sign-in-2026-11-26'
const AT = '2026-11-26T03%3A00%3A00.000Z'

describe('signInLockedOut', () => {
  it('given an address lockout with no user named, when made, then the event names no user, is locked by address, and keeps the counts', () => {
    expect(signInLockedOut({ address: '198.51.100.23', failures: 6, windowSeconds: 60, lockedAt, lockedUntil })).toEqual({
      type: 'ConsoleSignInLockedOut',
      data: { address: '198.51.100.23', user: null, lockedBy: 'address', failures: 6, windowSeconds: 60, lockedAt, lockedUntil },
    })
  })

  it('given an account lockout, when made, then the event names the account and what was locked', () => {
    expect(signInLockedOut({ address: '198.51.100.24', user: 'somchai', lockedBy: 'account', failures: 5, windowSeconds: 900, lockedAt, lockedUntil }).data).toEqual({
      address: '198.51.100.24',
      user: 'somchai',
      lockedBy: 'account',
      failures: 5,
      windowSeconds: 900,
      lockedAt,
      lockedUntil,
    })
  })

  it('given counts that are fractions or under one, when made, then they are whole and at least 1 (the codec refuses anything else)', () => {
    const e = signInLockedOut({ address: 'a', failures: 6.9, windowSeconds: 0.5, lockedAt, lockedUntil })
    expect([e.data.failures, e.data.windowSeconds]).toEqual([6, 1])
    const none = signInLockedOut({ address: 'a', failures: 0, windowSeconds: -3, lockedAt, lockedUntil })
    expect([none.data.failures, none.data.windowSeconds]).toEqual([1, 1])
  })
})

describe('keptAddress', () => {
  it('given an address of up to 64 characters, when kept, then it is kept whole', () => {
    expect(keptAddress('2001:db8::1%eth0')).toBe('2001:db8::1%eth0')
    expect(keptAddress('x'.repeat(64))).toBe('x'.repeat(64))
  })

  it('given a longer one, when kept, then its first 64 characters are, counted after the refused characters are escaped', () => {
    expect(keptAddress('x'.repeat(65))).toBe('x'.repeat(64))
    expect(keptAddress(`${'x'.repeat(60)}\u0001yz`)).toBe(`${'x'.repeat(60)}\\u00`)
  })
})

describe('the stream and natural key of a lockout', () => {
  it('given instants either side of midnight in Bangkok, when the stream is named, then it is the Bangkok day', () => {
    expect(consoleSignInStreamName(new Date('2026-11-26T16:59:59.999Z'))).toBe('console-sign-in-2026-11-26')
    expect(consoleSignInStreamName(new Date('2026-11-26T17:00:00.000Z'))).toBe('console-sign-in-2026-11-27')
  })

  it('given an address lockout, when keyed, then the key is the address and the moment', () => {
    const e = signInLockedOut({ address: '2001:db8::1', user: 'somchai', failures: 6, windowSeconds: 60, lockedAt, lockedUntil })
    expect(consoleSignInNaturalKey(STREAM, e)).toBe(`${STREAM}:ConsoleSignInLockedOut:2001%3Adb8%3A%3A1:${AT}`)
  })

  it('given an account lockout, when keyed, then the key is the account and the moment, whatever the address', () => {
    const e = signInLockedOut({ address: '198.51.100.24', user: 'somchai', lockedBy: 'account', failures: 5, windowSeconds: 900, lockedAt, lockedUntil })
    expect(consoleSignInNaturalKey(STREAM, e)).toBe(`${STREAM}:ConsoleSignInLockedOut:account:somchai:${AT}`)
    expect(consoleSignInNaturalKey(STREAM, { ...e, data: { ...e.data, address: '198.51.100.25' } })).toBe(consoleSignInNaturalKey(STREAM, e))
    expect(consoleSignInNaturalKey(STREAM, { ...e, data: { ...e.data, user: null } })).toBe(`${STREAM}:ConsoleSignInLockedOut:account::${AT}`)
  })
})
