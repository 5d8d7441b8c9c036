import type { AccountThrottleState } from '../../domain/console-users/account-throttle.ts'
import type { ConsoleRole } from '../../domain/console-users/account.ts'

/** A console account as stored (its hash never leaves the adapters but to be verified). */
export type ConsoleAccount = {
  readonly name: string
  readonly role: ConsoleRole
  readonly passwordHash: string
  readonly passwordSetAt: Date
  readonly disabledAt: Date | null
  readonly createdAt: Date
  readonly throttle: AccountThrottleState
}

/** Where console accounts are kept: a table of satang's own, never the event log. */
export type ConsoleAccounts = {
  /** Adds an account; 'exists' when the name is taken (disabled accounts too). */
  readonly add: (a: { readonly name: string; readonly role: ConsoleRole; readonly passwordHash: string; readonly at: Date }) => Promise<'added' | 'exists'>
  readonly find: (name: string) => Promise<ConsoleAccount | undefined>
  readonly list: () => Promise<ReadonlyArray<ConsoleAccount>>
  /** Whether any account exists (disabled ones count: the installation has personal accounts). */
  readonly any: () => Promise<boolean>
  readonly disable: (name: string, at: Date) => Promise<'disabled' | 'already' | 'missing'>
  /** Sets a new password: the account is enabled again and its failures and lockout cleared. */
  readonly setPassword: (name: string, passwordHash: string, at: Date) => Promise<boolean>
  /**
   * Reads the account's throttle state under a row lock, stores the state `step` returns and gives back
   * its result (undefined when there is no such account): two api processes never lose a failure.
   */
  readonly withThrottle: <A>(name: string, step: (state: AccountThrottleState) => { readonly state: AccountThrottleState; readonly result: A }) => Promise<A | undefined>
}

/** Password hashing (scrypt): a fresh salt per hash, a constant-time comparison. */
export type PasswordHasher = {
  readonly hash: (password: string) => Promise<string>
  /** Whether `password` matches `stored`; a malformed `stored` matches nothing. */
  readonly verify: (password: string, stored: string) => Promise<boolean>
  /** Spends the time of one verification, for a name that has no account (its answer must not come sooner). */
  readonly waste: (password: string) => Promise<void>
}
