import { readFileSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decodeDomainEvent, encodeDomainEvent } from '../../../src/domain/events/index.ts'
import { fold, isPaid, statusObserved } from '../../../src/domain/order/index.ts'
import { anAcceptedCheckout } from '../order/builders.ts'
import { sat } from '../support/values.ts'

type Fixture = { readonly type: string; readonly schemaVersion: number; readonly data: unknown }

const fixture = (name: string): Fixture => {
  const parsed: unknown = JSON.parse(readFileSync(new URL(`../../fixtures/events/${name}`, import.meta.url), 'utf8'))
  if (typeof parsed !== 'object' || parsed === null || !('type' in parsed) || !('schemaVersion' in parsed) || !('data' in parsed)) throw new Error(`bad fixture ${name}`)
  const { type, schemaVersion, data } = parsed
  if (typeof type !== 'string' || typeof schemaVersion !== 'number') throw new Error(`bad fixture ${name}`)
  return { type, schemaVersion, data }
}

describe('StatusObserved: version 1 (frozen fixture) is read as version 2', () => {
  const v1 = fixture('status-observed.v1.json')

  it('decodes with the v1 codec and upcasts: Bangkok wall times become the same instants, `notified` becomes `source`', () => {
    const decoded = decodeDomainEvent(v1.type, v1.schemaVersion, v1.data)
    expect(decoded).toEqual(
      E.right(
        statusObserved.make({
          merchantId: '140000000000000001',
          merchantOrderId: 'ORDER-2026_0001',
          gatewayOrderId: '202601010000000001',
          statusCode: 'PS',
          classification: { code: 'PS', meaning: 'paid', outcome: 'succeeded', final: true, needsReview: false },
          amount: sat(10000n),
          currency: 'THB',
          observationKey: 'notification:140000000000000001:ORDER-2026_0001:202601010000000001:PS',
          traceId: null,
          completeTime: new Date('2026-01-01T03:04:00.000Z'),
          source: 'notification',
          observedAt: new Date('2026-01-01T03:05:00.000Z'),
        }),
      ),
    )
  })
  it('is written back at version 2 only (stored events are never rewritten; new ones are newest)', () => {
    const decoded = decodeDomainEvent(v1.type, v1.schemaVersion, v1.data)
    if (E.isLeft(decoded)) throw new Error('expected to decode')
    const encoded = encodeDomainEvent(decoded.right)
    expect(encoded.schemaVersion).toBe(2)
    expect(encoded.data).toMatchObject({ source: 'notification', observedAt: '2026-01-01T03:05:00.000Z', completeTime: '2026-01-01T03:04:00.000Z' })
    expect(encoded.data).not.toHaveProperty('notified')
  })
  it('an order folded from an upcast event is paid like one from a new event', () => {
    const decoded = decodeDomainEvent(v1.type, v1.schemaVersion, v1.data)
    if (E.isLeft(decoded) || decoded.right.type !== 'StatusObserved') throw new Error('expected a StatusObserved')
    expect(isPaid(fold([...anAcceptedCheckout(), decoded.right]))).toBe(true)
  })
  it('the v2 fixture decodes and encodes back to itself', () => {
    const v2 = fixture('status-observed.v2.json')
    const decoded = decodeDomainEvent(v2.type, v2.schemaVersion, v2.data)
    if (E.isLeft(decoded)) throw new Error('expected to decode')
    expect(encodeDomainEvent(decoded.right)).toEqual(v2)
  })
  it('v1 data is not v2 data, and the other way round: each version is read with its own codec', () => {
    const v2 = fixture('status-observed.v2.json')
    expect(decodeDomainEvent('StatusObserved', 2, v1.data)).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidEventData', schemaVersion: 2 } })
    expect(decodeDomainEvent('StatusObserved', 1, v2.data)).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidEventData', schemaVersion: 1 } })
  })
})
