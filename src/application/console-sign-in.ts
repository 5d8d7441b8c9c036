import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { accountFailed, accountSucceeded, admitAccount, type AccountThrottlePolicy } from '../domain/console-users/account-throttle.ts'
import { MAX_PASSWORD_LENGTH, nameViolations, ROLE_SCOPES, type ConsoleRole } from '../domain/console-users/account.ts'
import { signedIn, signInFailed, type SignInFailure, type SignInMethod } from '../domain/console-users/events/index.ts'
import { consoleSignInStreamName, signInLockedOut } from '../domain/events/common/console-sign-in-locked-out.ts'
import { naturalKeyOf, type DomainEvent } from '../domain/events/registry.ts'
import type { Cause } from './deps.ts'
import { appendEvents } from './streams.ts'
import type { ConsoleAccounts, PasswordHasher } from './ports/console-accounts.ts'
import type { AppendError, EventStore } from './ports/event-store.ts'

/** A lockout of console sign-ins from one client address, as the sign-in throttle decided it. */
export type SignInLockout = {
  readonly address: string
  /** The known user whose wrong password locked the address (null: a wrong token, an unknown name). */
  readonly user?: string | null
  readonly failures: number
  readonly windowSeconds: number
  readonly lockedAt: Date
  readonly lockedUntil: Date
}

/**
 * Records a lockout of console sign-ins (`ConsoleSignInLockedOut`) in the stream of its Bangkok day:
 * the log says who was kept out and until when, beside what they could have changed.
 */
export const recordSignInLockout = (deps: { readonly store: EventStore; readonly now: () => Date }, lockout: SignInLockout, cause: Cause): TE.TaskEither<AppendError, void> => {
  const event = signInLockedOut(lockout)
  const stream = consoleSignInStreamName(lockout.lockedAt)
  return pipe(
    appendEvents(deps, stream, [{ event, naturalKey: naturalKeyOf(stream, event) }], { cause }, 'any'),
    TE.map(() => undefined),
  )
}

/** Signed in, or refused: what the sign-in form answers. */
export type PasswordSignIn =
  | { readonly _tag: 'SignedIn'; readonly name: string; readonly role: ConsoleRole; readonly scopes: ReadonlyArray<string> }
  | {
      readonly _tag: 'Refused'
      /** The account tried, when there is one (an unknown name names none). */
      readonly user: string | null
      readonly reason: 'unknown_user' | SignInFailure
      /** How long to hold the answer back. */
      readonly delayMs: number
      /** Set while the account is locked (this attempt locked it, or it was locked). */
      readonly retryAfterSeconds: number | null
    }
  /** The sign-in was right but could not be recorded: refused, since every sign-in is on record. */
  | { readonly _tag: 'NotRecorded'; readonly cause: string }

export type PasswordSignInDeps = {
  readonly accounts: ConsoleAccounts
  readonly hasher: PasswordHasher
  readonly store: EventStore
  readonly now: () => Date
  readonly policy: AccountThrottlePolicy
  /** Where a fact that could not be recorded is told (it never changes the answer to a refusal). */
  readonly unrecorded: (what: string, e: AppendError) => void
}

// No stored name or password is longer than this: a longer input is wrong without being hashed.
const MAX_PASSWORD_INPUT = MAX_PASSWORD_LENGTH * 4

const recordOn = (deps: Pick<PasswordSignInDeps, 'store' | 'now'>, at: Date, events: ReadonlyArray<DomainEvent>, cause: Cause): TE.TaskEither<AppendError, void> => {
  const stream = consoleSignInStreamName(at)
  return pipe(
    appendEvents(deps, stream, events.map((event) => ({ event, naturalKey: naturalKeyOf(stream, event) })), { cause }, 'any'),
    TE.map(() => undefined),
  )
}

/**
 * A person signs in with a name and a password. The account's throttle (its failures, kept beside it
 * for every api process) decides a delay and a lockout; a known user's sign-in, refusal and lockout are
 * recorded as events naming them (`console-sign-in-<day>`). A name without an account costs the time
 * of one verification too, and is refused in the same words.
 */
export const signInWithPassword = async (deps: PasswordSignInDeps, input: { readonly name: string; readonly password: string; readonly address: string }, cause: Cause): Promise<PasswordSignIn> => {
  const now = deps.now()
  const { name, password, address } = input
  const unknown = (): PasswordSignIn => ({ _tag: 'Refused', user: null, reason: 'unknown_user', delayMs: 0, retryAfterSeconds: null })
  if (password.length > MAX_PASSWORD_INPUT || nameViolations(name).length > 0) return unknown()
  const account = await deps.accounts.find(name)
  if (account === undefined) {
    await deps.hasher.waste(password)
    return unknown()
  }
  const failed = async (reason: SignInFailure, failures: number, delayMs: number, extra: ReadonlyArray<DomainEvent> = []): Promise<void> => {
    const done = await recordOn(deps, now, [signInFailed({ user: name, method: 'password', reason, address, failures, delayMs, at: now }), ...extra], cause)()
    if (E.isLeft(done)) deps.unrecorded('a refused console sign-in', done.left)
  }
  const admission = admitAccount(account.throttle, now)
  if (admission._tag === 'LockedOut') {
    await failed('account_locked', 0, 0)
    return { _tag: 'Refused', user: name, reason: 'account_locked', delayMs: 0, retryAfterSeconds: admission.retryAfterSeconds }
  }
  const right = await deps.hasher.verify(password, account.passwordHash)
  if (right && account.disabledAt === null) {
    await deps.accounts.withThrottle(name, (s) => ({ state: accountSucceeded(s), result: null }))
    const scopes = ROLE_SCOPES[account.role]
    const recorded = await recordOn(deps, now, [signedIn({ user: name, method: 'password', roles: [account.role], scopes, address, at: now })], cause)()
    if (E.isLeft(recorded)) return { _tag: 'NotRecorded', cause: recorded.left._tag }
    return { _tag: 'SignedIn', name, role: account.role, scopes }
  }
  if (right) {
    // A disabled account with its right password: no failure counted (nothing is being guessed), but refused and recorded.
    await failed('account_disabled', 0, 0)
    return { _tag: 'Refused', user: name, reason: 'account_disabled', delayMs: 0, retryAfterSeconds: null }
  }
  const outcome = await deps.accounts.withThrottle(name, (s) => {
    const f = accountFailed(deps.policy, s, now)
    return { state: f.state, result: f }
  })
  if (outcome === undefined) return unknown()
  const lockout = outcome.lockout
  await failed(
    'wrong_password',
    outcome.failures,
    outcome.delayMs,
    lockout === null ? [] : [signInLockedOut({ address, user: name, lockedBy: 'account', failures: outcome.failures, windowSeconds: Math.ceil(deps.policy.windowMs / 1000), lockedAt: lockout.lockedAt, lockedUntil: lockout.lockedUntil })],
  )
  return { _tag: 'Refused', user: name, reason: lockout === null ? 'wrong_password' : 'account_locked', delayMs: outcome.delayMs, retryAfterSeconds: lockout?.retryAfterSeconds ?? null }
}

/** Records a sign-in that another way decided (an API token in the form, an OpenID Connect provider). */
export const recordSignIn = (
  deps: { readonly store: EventStore; readonly now: () => Date },
  s: { readonly user: string; readonly method: SignInMethod; readonly roles: ReadonlyArray<string>; readonly scopes: ReadonlyArray<string>; readonly address: string },
  cause: Cause,
): TE.TaskEither<AppendError, void> => {
  const at = deps.now()
  return recordOn(deps, at, [signedIn({ ...s, at })], cause)
}

/** Records a refused sign-in of a named user that another way decided (an OpenID Connect user without a role). */
export const recordSignInRefusal = (
  deps: { readonly store: EventStore; readonly now: () => Date },
  f: { readonly user: string; readonly method: SignInMethod; readonly reason: SignInFailure; readonly address: string },
  cause: Cause,
): TE.TaskEither<AppendError, void> => {
  const at = deps.now()
  return recordOn(deps, at, [signInFailed({ ...f, failures: 0, delayMs: 0, at })], cause)
}
