import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { CONSOLE_ROLES } from '../account.ts'

/** A console account was made (`satang users add`): its name and role, and who made it. Never its password or hash. */
const V1 = t.strict({ name: t.string, role: oneOf('ConsoleRole', CONSOLE_ROLES), by: t.string, at: Instant }, 'ConsoleUserAddedV1')

export const consoleUserAdded = defineEvent('ConsoleUserAdded', { 1: V1 })
export type ConsoleUserAdded = DomainEventOf<'ConsoleUserAdded', t.TypeOf<typeof V1>>
