import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { consoleSignInStreamName, signInLockedOut } from '../domain/events/common/console-sign-in-locked-out.ts'
import { naturalKeyOf } from '../domain/events/registry.ts'
import type { Cause } from './deps.ts'
import { appendEvents } from './streams.ts'
import type { AppendError, EventStore } from './ports/event-store.ts'

/** A lockout of console sign-ins from one client address, as the sign-in throttle decided it. */
export type SignInLockout = {
  readonly address: string
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
