import * as t from 'io-ts'
import { Instant } from '../../events/codecs.ts'
import { defineEvent, type DomainEventOf } from '../../events/define-event.ts'

/** A console account was disabled (`satang users disable`): it signs in no more, and its sessions end. */
const V1 = t.strict({ name: t.string, by: t.string, at: Instant }, 'ConsoleUserDisabledV1')

export const consoleUserDisabled = defineEvent('ConsoleUserDisabled', { 1: V1 })
export type ConsoleUserDisabled = DomainEventOf<'ConsoleUserDisabled', t.TypeOf<typeof V1>>
