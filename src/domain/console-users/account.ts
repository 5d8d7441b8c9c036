import type { Violation } from '../violations.ts'

/*
 * Console accounts: people who sign in to the web console as themselves, each with one role. A role
 * grants the scopes of the merchant API's tokens (the console's pages and forms ask for those), so
 * a person sees and does what a token of those scopes could, and nothing of payments:write.
 */

export const CONSOLE_ROLES = ['finance', 'auditor', 'admin'] as const
export type ConsoleRole = (typeof CONSOLE_ROLES)[number]

/** The token scopes (adapters/http/api-tokens.ts) a role grants. */
export const ROLE_SCOPES: { readonly [R in ConsoleRole]: ReadonlyArray<'payments:write' | 'read' | 'audit' | 'reconcile:write'> } = {
  finance: ['read', 'reconcile:write'],
  auditor: ['read', 'audit'],
  admin: ['payments:write', 'read', 'audit', 'reconcile:write'],
}

export const isConsoleRole = (s: string): s is ConsoleRole => (CONSOLE_ROLES as ReadonlyArray<string>).includes(s)

/** The scopes of several roles together (an OpenID claim may name more than one), each once, in ROLE_SCOPES order of admin. */
export const scopesOfRoles = (roles: ReadonlyArray<ConsoleRole>): ReadonlyArray<'payments:write' | 'read' | 'audit' | 'reconcile:write'> => ROLE_SCOPES.admin.filter((s) => roles.some((r) => ROLE_SCOPES[r].includes(s)))

export const MAX_NAME_LENGTH = 64
export const MIN_PASSWORD_LENGTH = 12
export const MAX_PASSWORD_LENGTH = 256

// Lowercase so that `Alice` and `alice` cannot be two people; `@` and `.` so an e-mail address fits.
const NAME = /^[a-z0-9][a-z0-9._@-]*$/

/** Every rule a user name breaks (empty when it is a good name). */
export const nameViolations = (name: string, path = 'name'): ReadonlyArray<Violation> => {
  const out: Violation[] = []
  if (name.length === 0) return [{ path, rule: 'must not be empty' }]
  if (name.length > MAX_NAME_LENGTH) out.push({ path, rule: `must be at most ${String(MAX_NAME_LENGTH)} characters` })
  if (!NAME.test(name)) out.push({ path, rule: 'must be lowercase letters a-z, digits, dot, dash, underline or @, starting with a letter or digit' })
  return out
}

/** Every rule a new password breaks. Its length counts characters (code points), as a person does. */
export const passwordViolations = (password: string, name: string | null, path = 'password'): ReadonlyArray<Violation> => {
  const out: Violation[] = []
  const length = [...password].length
  if (length < MIN_PASSWORD_LENGTH) out.push({ path, rule: `must be at least ${String(MIN_PASSWORD_LENGTH)} characters` })
  if (length > MAX_PASSWORD_LENGTH) out.push({ path, rule: `must be at most ${String(MAX_PASSWORD_LENGTH)} characters` })
  // A control character is a pasting accident (a newline from a file is trimmed before this).
  if (/\p{Cc}/u.test(password)) out.push({ path, rule: 'must not hold control characters (tab, newline, …)' })
  if (name !== null && password.toLowerCase().includes(name)) out.push({ path, rule: 'must not contain the user name' })
  return out
}

/** Every rule a role breaks. */
export const roleViolations = (role: string, path = 'role'): ReadonlyArray<Violation> => (isConsoleRole(role) ? [] : [{ path, rule: `must be one of ${CONSOLE_ROLES.join(', ')}` }])

/**
 * The roles an OpenID Connect claim grants: a string (one role, or several separated by spaces or
 * commas) or a list of strings; values that are no role are ignored, and none at all grants nothing.
 */
export const rolesOfClaim = (claim: unknown): ReadonlyArray<ConsoleRole> => {
  // Stryker disable next-line MethodExpression,ArrayDeclaration: only the roles are looked up in values, so a value that is not a string (kept without the filter) or is no role (the mutant's default list) changes nothing
  const values = typeof claim === 'string' ? claim.split(/[\s,]+/) : Array.isArray(claim) ? claim.filter((v): v is string => typeof v === 'string') : []
  return CONSOLE_ROLES.filter((r) => values.includes(r))
}
