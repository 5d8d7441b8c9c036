import { keptAddress } from '../../events/common/console-sign-in-locked-out.ts'
import { keyOf } from '../../events/natural-key.ts'
import type { ConsoleRole } from '../account.ts'
import { consoleSignInFailed, type ConsoleSignInFailed, type SignInFailure } from './console-sign-in-failed.ts'
import { consoleSignedIn, type ConsoleSignedIn, type SignInMethod } from './console-signed-in.ts'
import { consoleUserAdded, type ConsoleUserAdded } from './console-user-added.ts'
import { consoleUserDisabled, type ConsoleUserDisabled } from './console-user-disabled.ts'
import { consoleUserPasswordReset, type ConsoleUserPasswordReset } from './console-user-password-reset.ts'

export { consoleSignInFailed, consoleSignedIn, consoleUserAdded, consoleUserDisabled, consoleUserPasswordReset }
export type { ConsoleSignInFailed, ConsoleSignedIn, ConsoleUserAdded, ConsoleUserDisabled, ConsoleUserPasswordReset, SignInFailure, SignInMethod }

/** The lifecycle of console accounts: added, disabled, password reset. */
export type ConsoleUserEvent = ConsoleUserAdded | ConsoleUserDisabled | ConsoleUserPasswordReset
/** Sign-ins and refused sign-ins of known users (lockouts are ConsoleSignInLockedOut, beside them). */
export type ConsoleSessionEvent = ConsoleSignedIn | ConsoleSignInFailed

/** The one stream of every account's lifecycle. */
export const CONSOLE_USERS_STREAM = 'console-users'

export const isConsoleUserEvent = (e: { readonly type: string }): e is ConsoleUserEvent => e.type === 'ConsoleUserAdded' || e.type === 'ConsoleUserDisabled' || e.type === 'ConsoleUserPasswordReset'
export const isConsoleSessionEvent = (e: { readonly type: string }): e is ConsoleSessionEvent => e.type === 'ConsoleSignedIn' || e.type === 'ConsoleSignInFailed'

/** Each fact once: one per user, kind and moment (a retried append stores nothing twice). */
export const consoleUserNaturalKey = (stream: string, e: ConsoleUserEvent | ConsoleSessionEvent): string => keyOf(stream, e.type, 'user' in e.data ? e.data.user : e.data.name, e.data.at.toISOString(), 'address' in e.data ? e.data.address : '')

export const userAdded = (name: string, role: ConsoleRole, by: string, at: Date): ConsoleUserAdded => consoleUserAdded.make({ name, role, by, at })
export const userDisabled = (name: string, by: string, at: Date): ConsoleUserDisabled => consoleUserDisabled.make({ name, by, at })
export const userPasswordReset = (name: string, by: string, at: Date): ConsoleUserPasswordReset => consoleUserPasswordReset.make({ name, by, at })

export const signedIn = (s: { readonly user: string; readonly method: SignInMethod; readonly roles: ReadonlyArray<string>; readonly scopes: ReadonlyArray<string>; readonly address: string; readonly at: Date }): ConsoleSignedIn =>
  consoleSignedIn.make({ user: s.user, method: s.method, roles: [...s.roles], scopes: [...s.scopes], address: keptAddress(s.address), at: s.at })

export const signInFailed = (f: { readonly user: string; readonly method: SignInMethod; readonly reason: SignInFailure; readonly address: string; readonly failures: number; readonly delayMs: number; readonly at: Date }): ConsoleSignInFailed =>
  consoleSignInFailed.make({ user: f.user, method: f.method, reason: f.reason, address: keptAddress(f.address), failures: Math.max(0, Math.floor(f.failures)), delayMs: Math.max(0, Math.floor(f.delayMs)), at: f.at })
