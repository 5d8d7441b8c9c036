import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { oneOf } from '../../gateway/text-codecs.ts'

/** How a person (or a token's holder) signed in to the console. */
export const SignInMethod = oneOf('SignInMethod', ['password', 'openid_connect', 'api_token'] as const)
export type SignInMethod = t.TypeOf<typeof SignInMethod>

/**
 * Someone signed in to the web console: the user (a console account, an OpenID Connect user, or an
 * API token's name), how, with which roles (none for a token) and scopes, from which address.
 */
const V1 = t.strict(
  { user: t.string, method: SignInMethod, roles: t.array(t.string), scopes: t.array(t.string), address: t.string, at: Instant },
  'ConsoleSignedInV1',
)

export const consoleSignedIn = defineEvent('ConsoleSignedIn', { 1: V1 })
export type ConsoleSignedIn = DomainEventOf<'ConsoleSignedIn', t.TypeOf<typeof V1>>
