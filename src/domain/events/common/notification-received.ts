import * as t from 'io-ts'
import { NotifyType } from '../../gateway/notification.ts'
import { Instant } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import { RedactedPayload } from '../redaction.ts'

/**
 * A notification whose signature verified, as received (payer data redacted): the evidence behind the
 * observation recorded with it. `observationKey` is that observation's natural key.
 */
const V1 = t.strict({ kind: NotifyType, observationKey: t.string, receivedAt: Instant, payload: RedactedPayload }, 'NotificationReceivedV1')

export const notificationReceived = defineEvent('NotificationReceived', { 1: V1 })
export type NotificationReceivedData = t.TypeOf<typeof V1>
export type NotificationReceived = DomainEventOf<'NotificationReceived', NotificationReceivedData>
