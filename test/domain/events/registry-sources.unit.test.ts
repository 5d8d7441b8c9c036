import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { quarantineNaturalKey } from '../../../src/domain/events/common/callback-quarantined.ts'
import { consoleSignInNaturalKey } from '../../../src/domain/events/common/console-sign-in-locked-out.ts'
import {
  decodeDomainEvent,
  decodeOrderEvent,
  decodeRefundEvent,
  decodeSubscriptionEvent,
  describeEventDecodeError,
  encodeDomainEvent,
  eventSourceOf,
  naturalKeyOf,
  type DomainEvent,
} from '../../../src/domain/events/index.ts'
import { ledgerPeriodEventNaturalKey } from '../../../src/domain/ledger/period.ts'
import { breakEventNaturalKey, runEventNaturalKey } from '../../../src/domain/reconciliation/stream.ts'
import { refundLedgerNaturalKey } from '../../../src/domain/refund/ledger.ts'
import { subscriptionEventNaturalKey } from '../../../src/domain/subscription/stream.ts'
import { allEvents } from './catalogue.ts'

/* The registry's routing, type by type: the source an event's metadata carries, its natural key, the decoders of each aggregate, the one-line errors. */

const first = (type: string): DomainEvent => {
  const e = allEvents().find((x) => x.type === type)
  if (e === undefined) throw new Error(`no ${type} in the catalogue`)
  return e
}
/** The catalogue's event of `type` with some of its data replaced. */
const withData = (type: string, data: Readonly<Record<string, unknown>>): DomainEvent => {
  const e = first(type)
  return { ...e, data: { ...e.data, ...data } } as DomainEvent
}

const SOURCES: Readonly<Record<string, string>> = {
  OrderCreated: 'api_request',
  PaymentRequested: 'api_request',
  SubscriptionRequested: 'api_request',
  PaymentRequestAccepted: 'api_response',
  PaymentOutcomeUnknown: 'api_response',
  SubscriptionUpdated: 'api_response',
  SubscriptionCancelled: 'api_response',
  SubscriptionOutcomeUnknown: 'api_response',
  RefundLedgersOpened: 'operator',
  RedirectReceived: 'redirect',
  NotificationReceived: 'notification',
  SubscriptionActivated: 'notification',
  SubscriptionCharged: 'notification',
  SubscriptionChargeFailed: 'notification',
  SubscriptionSuspended: 'notification',
  QueryNotFound: 'query',
  ReconciliationRunStarted: 'reconciliation',
  ReconciliationItemsChecked: 'reconciliation',
  ReconciliationBreakDetected: 'reconciliation',
  ReconciliationBreakResolved: 'reconciliation',
  ReconciliationItemHealed: 'reconciliation',
  ReconciliationRunCompleted: 'reconciliation',
  ReconciliationRunSuperseded: 'reconciliation',
  ReconciliationBreakAcknowledged: 'operator',
  LedgerPeriodClosed: 'operator',
  ConsoleSignInLockedOut: 'api_request',
}

describe('eventSourceOf', () => {
  it('the fixed source of each event type', () => {
    for (const [type, source] of Object.entries(SOURCES)) expect([type, eventSourceOf(first(type))]).toStrictEqual([type, source])
  })

  it('a failed request: nothing left satang for validation and not_sent; the gateway rejected it; a query found nothing', () => {
    const reasons = { validation: 'api_request', not_sent: 'api_request', gateway_rejected: 'api_response', not_found_by_query: 'query' }
    for (const type of ['PaymentRequestFailed', 'SubscriptionRequestFailed'])
      for (const [reason, source] of Object.entries(reasons)) expect([type, reason, eventSourceOf(withData(type, { reason }))]).toStrictEqual([type, reason, source])
  })

  it('observations and reservations carry their own source', () => {
    for (const type of ['StatusObserved', 'RefundStatusObserved', 'RefundRecorded', 'RefundAmountReserved', 'DiscrepancyObserved'])
      for (const source of ['notification', 'query']) expect([type, eventSourceOf(withData(type, { source }))]).toStrictEqual([type, source])
    expect(eventSourceOf(withData('DiscrepancyObserved', { source: 'redirect' }))).toBe('redirect')
    for (const resolvedBy of ['api_response', 'notification']) expect(eventSourceOf(withData('SubscriptionCreated', { resolvedBy }))).toBe(resolvedBy)
  })

  it('a refund tracked by the merchant came with an API request; else by what tracked it', () => {
    expect(eventSourceOf(withData('RefundTracked', { trackedBy: 'merchant' }))).toBe('api_request')
    for (const trackedBy of ['notification', 'query']) expect(eventSourceOf(withData('RefundTracked', { trackedBy }))).toBe(trackedBy)
  })

  it('a rejected or quarantined callback: a redirect for the two redirect kinds, else a notification', () => {
    const kinds = { payment_notification: 'notification', refund_notification: 'notification', subscription_notification: 'notification', notification: 'notification', checkout_redirect: 'redirect', subscription_redirect: 'redirect' }
    for (const type of ['CallbackRejected', 'CallbackQuarantined'])
      for (const [callback, source] of Object.entries(kinds)) expect([type, callback, eventSourceOf(withData(type, { callback }))]).toStrictEqual([type, callback, source])
  })
})

describe('naturalKeyOf', () => {
  it("routes each shared or stand-alone event to its own stream's key", () => {
    const s = 'some-stream'
    const q = first('CallbackQuarantined')
    if (q.type !== 'CallbackQuarantined') throw new Error('fixture')
    expect(naturalKeyOf(s, q)).toBe(quarantineNaturalKey(s, q.data.fingerprint))
    for (const e of allEvents()) {
      if (e.type === 'RefundAmountReserved' || e.type === 'RefundLedgersOpened') expect(naturalKeyOf(s, e)).toBe(refundLedgerNaturalKey(s, e))
      if (e.type === 'LedgerPeriodClosed') expect(naturalKeyOf(s, e)).toBe(ledgerPeriodEventNaturalKey(s, e))
      if (e.type === 'ConsoleSignInLockedOut') expect(naturalKeyOf(s, e)).toBe(consoleSignInNaturalKey(s, e))
      if (e.type.startsWith('Subscription')) expect(naturalKeyOf(s, e)).toBe(subscriptionEventNaturalKey(s, e as Parameters<typeof subscriptionEventNaturalKey>[1]))
      if (e.type === 'ReconciliationBreakAcknowledged') expect(naturalKeyOf(s, e)).toBe(breakEventNaturalKey(s, e))
      if (e.type === 'ReconciliationRunStarted') expect(naturalKeyOf(s, e)).toBe(runEventNaturalKey(s, e))
    }
  })
})

describe('decoding for one aggregate', () => {
  it('an undecodable or unknown event is reported as such, not as belonging elsewhere', () => {
    expect(decodeOrderEvent('Nope', 1, {})).toStrictEqual(E.left({ _tag: 'UnknownEventType', type: 'Nope', schemaVersion: 1 }))
    expect(decodeRefundEvent('Nope', 2, {})).toStrictEqual(E.left({ _tag: 'UnknownEventType', type: 'Nope', schemaVersion: 2 }))
    expect(decodeSubscriptionEvent('Nope', 3, {})).toStrictEqual(E.left({ _tag: 'UnknownEventType', type: 'Nope', schemaVersion: 3 }))
  })

  it("another aggregate's event is an UnexpectedEventType naming what was expected; its own decodes", () => {
    const created = encodeDomainEvent(first('SubscriptionCreated'))
    expect(decodeOrderEvent(created.type, created.schemaVersion, created.data)).toStrictEqual(E.left({ _tag: 'UnexpectedEventType', type: 'SubscriptionCreated', expected: 'order' }))
    expect(decodeRefundEvent(created.type, created.schemaVersion, created.data)).toStrictEqual(E.left({ _tag: 'UnexpectedEventType', type: 'SubscriptionCreated', expected: 'refund' }))
    expect(E.isRight(decodeSubscriptionEvent(created.type, created.schemaVersion, created.data))).toBe(true)
  })
})

describe('describeEventDecodeError', () => {
  it('one line per kind of error', () => {
    expect(describeEventDecodeError({ _tag: 'UnknownEventType', type: 'Nope', schemaVersion: 4 })).toBe('unknown event type Nope (schema version 4)')
    expect(describeEventDecodeError({ _tag: 'UnknownSchemaVersion', type: 'OrderCreated', schemaVersion: 9, knownVersions: [1, 2] })).toBe('OrderCreated: unknown schema version 9 (known: 1, 2)')
    const invalid = decodeDomainEvent('QueryNotFound', 1, {})
    if (E.isRight(invalid)) throw new Error('expected a failure')
    const line = describeEventDecodeError(invalid.left)
    expect(line.startsWith('QueryNotFound v1: invalid data: ')).toBe(true)
    expect(line).not.toContain('\n')
    expect(line.split('; ').length).toBeGreaterThan(1)
  })
})
