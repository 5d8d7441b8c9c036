import * as t from 'io-ts'
import { Count, Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { SignInMethod } from './console-signed-in.ts'

/** Why a sign-in of a known user was refused. */
export const SignInFailure = oneOf('SignInFailure', ['wrong_password', 'account_disabled', 'account_locked', 'no_role'] as const)
export type SignInFailure = t.TypeOf<typeof SignInFailure>

/**
 * A sign-in to the console as a known user was refused: who, how, why, from where, the failures
 * counted against the account within its window (0 when the refusal counts none), and how long the
 * answer was held back. (Unknown names and wrong tokens name no user: they are logged and throttled
 * per address, and a lockout is recorded as ConsoleSignInLockedOut.)
 */
const V1 = t.strict(
  { user: t.string, method: SignInMethod, reason: SignInFailure, address: t.string, failures: Count, delayMs: Count, at: Instant },
  'ConsoleSignInFailedV1',
)

export const consoleSignInFailed = defineEvent('ConsoleSignInFailed', { 1: V1 })
export type ConsoleSignInFailed = DomainEventOf<'ConsoleSignInFailed', t.TypeOf<typeof V1>>
