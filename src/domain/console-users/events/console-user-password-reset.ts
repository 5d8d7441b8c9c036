import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/**
 * A console account's password was set anew (`satang users reset-password`), which also enables a
 * disabled account and clears its lockout; its earlier sessions end. The password is not in the event.
 */
const V1 = t.strict({ name: t.string, by: t.string, at: Instant }, 'ConsoleUserPasswordResetV1')

export const consoleUserPasswordReset = defineEvent('ConsoleUserPasswordReset', { 1: V1 })
export type ConsoleUserPasswordReset = DomainEventOf<'ConsoleUserPasswordReset', t.TypeOf<typeof V1>>
