import * as E from 'fp-ts/lib/Either.js'
import { nameViolations, passwordViolations, roleViolations, type ConsoleRole } from '../domain/console-users/account.ts'
import { CONSOLE_USERS_STREAM, consoleUserNaturalKey, userAdded, userDisabled, userPasswordReset, type ConsoleUserEvent } from '../domain/console-users/events/index.ts'
import type { Violation } from '../domain/violations.ts'
import type { Cause } from './deps.ts'
import type { ConsoleAccount, ConsoleAccounts, PasswordHasher } from './ports/console-accounts.ts'
import type { EventStore } from './ports/event-store.ts'
import { appendEvents } from './streams.ts'

/*
 * The lifecycle of console accounts (`satang users …`): the account and its hash go to the
 * console_users table, then the fact, without any secret, to the log (stream `console-users`), which
 * the audit trail and Kafka consumers read. The table is written first: a fact is never logged for an
 * account that does not exist; when the log then fails, the command says so and can be run again
 * (adding again answers that the name exists; the fact of a reset or a disable is simply appended).
 */

export type ConsoleUserDeps = { readonly accounts: ConsoleAccounts; readonly hasher: PasswordHasher; readonly store: EventStore; readonly now: () => Date }

export type ConsoleUserFailure =
  | { readonly _tag: 'Invalid'; readonly violations: ReadonlyArray<Violation> }
  | { readonly _tag: 'Exists'; readonly name: string }
  | { readonly _tag: 'NoSuchUser'; readonly name: string }
  /** Done in the table, but the event log refused the fact. */
  | { readonly _tag: 'NotLogged'; readonly name: string; readonly cause: string }

export const describeConsoleUserFailure = (f: ConsoleUserFailure): string => {
  switch (f._tag) {
    case 'Invalid':
      return f.violations.map((v) => `${v.path} ${v.rule}`).join('; ')
    case 'Exists':
      return `a user named ${f.name} exists already (satang users reset-password ${f.name} sets a new password)`
    case 'NoSuchUser':
      return `there is no user named ${f.name} (satang users list shows them)`
    case 'NotLogged':
      return `the change to ${f.name} is made, but the event log could not record it (${f.cause}): run the command again`
  }
}

const log = async (deps: ConsoleUserDeps, event: ConsoleUserEvent, name: string, cause: Cause): Promise<E.Either<ConsoleUserFailure, void>> => {
  const appended = await appendEvents(deps, CONSOLE_USERS_STREAM, [{ event, naturalKey: consoleUserNaturalKey(CONSOLE_USERS_STREAM, event) }], { cause, source: 'operator' }, 'any')()
  return E.isLeft(appended) ? E.left({ _tag: 'NotLogged', name, cause: appended.left._tag }) : E.right(undefined)
}

export const addConsoleUser = async (deps: ConsoleUserDeps, input: { readonly name: string; readonly role: string; readonly password: string; readonly by: string }, cause: Cause): Promise<E.Either<ConsoleUserFailure, { readonly name: string; readonly role: ConsoleRole }>> => {
  const { name, role } = input
  const violations = [...nameViolations(name), ...roleViolations(role), ...passwordViolations(input.password, nameViolations(name).length === 0 ? name : null)]
  if (violations.length > 0 || !(role === 'finance' || role === 'auditor' || role === 'admin')) return E.left({ _tag: 'Invalid', violations })
  const at = deps.now()
  const added = await deps.accounts.add({ name, role, passwordHash: await deps.hasher.hash(input.password), at })
  if (added === 'exists') return E.left({ _tag: 'Exists', name })
  const logged = await log(deps, userAdded(name, role, input.by, at), name, cause)
  return E.isLeft(logged) ? logged : E.right({ name, role })
}

export const disableConsoleUser = async (deps: ConsoleUserDeps, input: { readonly name: string; readonly by: string }, cause: Cause): Promise<E.Either<ConsoleUserFailure, { readonly already: boolean }>> => {
  const violations = nameViolations(input.name)
  if (violations.length > 0) return E.left({ _tag: 'Invalid', violations })
  const at = deps.now()
  const done = await deps.accounts.disable(input.name, at)
  if (done === 'missing') return E.left({ _tag: 'NoSuchUser', name: input.name })
  if (done === 'already') return E.right({ already: true })
  const logged = await log(deps, userDisabled(input.name, input.by, at), input.name, cause)
  return E.isLeft(logged) ? logged : E.right({ already: false })
}

export const resetConsoleUserPassword = async (deps: ConsoleUserDeps, input: { readonly name: string; readonly password: string; readonly by: string }, cause: Cause): Promise<E.Either<ConsoleUserFailure, void>> => {
  const violations = [...nameViolations(input.name), ...passwordViolations(input.password, input.name)]
  if (violations.length > 0) return E.left({ _tag: 'Invalid', violations })
  const at = deps.now()
  if (!(await deps.accounts.setPassword(input.name, await deps.hasher.hash(input.password), at))) return E.left({ _tag: 'NoSuchUser', name: input.name })
  return log(deps, userPasswordReset(input.name, input.by, at), input.name, cause)
}

/** Every account, without its hash. */
export const listConsoleUsers = async (deps: Pick<ConsoleUserDeps, 'accounts'>): Promise<ReadonlyArray<Omit<ConsoleAccount, 'passwordHash'>>> =>
  (await deps.accounts.list()).map(({ passwordHash: _hash, ...rest }) => rest)
