import { describe, expect, it } from 'vitest'
import { CONSOLE_USERS_STREAM, consoleUserNaturalKey, signedIn, signInFailed, userAdded, userDisabled, userPasswordReset } from '../../../src/domain/console-users/events/index.ts'

/** The console's account and sign-in events as made, and their natural keys, whole. */

const at = new Date('2026-11-26T03:00:00.000Z')
const AT = '2026-11-26T03%3A00%3A00.000Z'
const SESSIONS = 'console-sessions-2026-11-26'

describe('console account events', () => {
  it('given an account added, disabled and reset, when made, then each names the account, who did it and when', () => {
    expect([userAdded('somchai', 'finance', 'admin', at), userDisabled('somchai', 'admin', at), userPasswordReset('somchai', 'admin', at)]).toEqual([
      { type: 'ConsoleUserAdded', data: { name: 'somchai', role: 'finance', by: 'admin', at } },
      { type: 'ConsoleUserDisabled', data: { name: 'somchai', by: 'admin', at } },
      { type: 'ConsoleUserPasswordReset', data: { name: 'somchai', by: 'admin', at } },
    ])
  })

  it('given an account event, when keyed, then the key is the account and the moment, with an empty address part', () => {
    expect(consoleUserNaturalKey(CONSOLE_USERS_STREAM, userAdded('somchai', 'finance', 'admin', at))).toBe(`console-users:ConsoleUserAdded:somchai:${AT}:`)
    expect(consoleUserNaturalKey(CONSOLE_USERS_STREAM, userDisabled('somchai', 'admin', at))).toBe(`console-users:ConsoleUserDisabled:somchai:${AT}:`)
  })
})

describe('console sign-in events', () => {
  it('given a sign-in, when made, then it keeps the user, method, roles, scopes and the kept address', () => {
    const roles = ['finance']
    const scopes = ['read', 'reconcile:write']
    const e = signedIn({ user: 'somchai', method: 'password', roles, scopes, address: `${'x'.repeat(70)}`, at })
    expect(e).toEqual({ type: 'ConsoleSignedIn', data: { user: 'somchai', method: 'password', roles: ['finance'], scopes: ['read', 'reconcile:write'], address: 'x'.repeat(64), at } })
    expect(e.data.roles).not.toBe(roles)
  })

  it('given a refused sign-in, when made, then its counts are whole and never negative', () => {
    expect(signInFailed({ user: 'somchai', method: 'password', reason: 'wrong_password', address: '198.51.100.24', failures: 2.9, delayMs: 500.5, at })).toEqual({
      type: 'ConsoleSignInFailed',
      data: { user: 'somchai', method: 'password', reason: 'wrong_password', address: '198.51.100.24', failures: 2, delayMs: 500, at },
    })
    const none = signInFailed({ user: 'somchai', method: 'api_token', reason: 'no_role', address: 'a', failures: -1, delayMs: -0.5, at })
    expect([none.data.failures, none.data.delayMs]).toEqual([0, 0])
  })

  it('given sign-in events, when keyed, then the key is the user, the moment and the address', () => {
    const ok = signedIn({ user: 'somchai', method: 'openid_connect', roles: [], scopes: [], address: '198.51.100.24', at })
    expect(consoleUserNaturalKey(SESSIONS, ok)).toBe(`${SESSIONS}:ConsoleSignedIn:somchai:${AT}:198.51.100.24`)
    const refused = signInFailed({ user: 'somchai', method: 'password', reason: 'account_locked', address: '2001:db8::1', failures: 0, delayMs: 0, at })
    expect(consoleUserNaturalKey(SESSIONS, refused)).toBe(`${SESSIONS}:ConsoleSignInFailed:somchai:${AT}:2001%3Adb8%3A%3A1`)
  })
})
