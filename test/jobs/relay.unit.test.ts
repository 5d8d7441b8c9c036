import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { Position, type ReadItem, type RecordedEvent } from '../../src/application/ports/event-store.ts'
import { encodeDomainEvent } from '../../src/domain/events/registry.ts'
import { publishablePrefix } from '../../src/jobs/relay/relay.ts'
import { allEvents } from '../domain/events/catalogue.ts'

const position = (n: number): Position => {
  const d = Position.decode(`${String(n).padStart(20, '0')}-${String(n).padStart(20, '0')}`)
  if (E.isLeft(d)) throw new Error('bad position')
  return d.right
}

const stored = (n: number): RecordedEvent => {
  const e = allEvents()[n % allEvents().length]
  if (e === undefined) throw new Error('no events')
  return { eventId: randomUUID(), ...encodeDomainEvent(e), metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'api_request' }, streamName: `order-x-${String(n)}`, streamRevision: 0n, position: position(n), recordedAt: new Date(0) }
}

describe('publishablePrefix (never skip an event the relay cannot publish)', () => {
  it('publishes every event when all decode', () => {
    const items: ReadItem[] = [0, 1, 2, 3].map((n) => E.right(stored(n)))
    expect(publishablePrefix(items)).toEqual({ events: items.map((i) => (E.isRight(i) ? i.right : undefined)), stop: null })
  })

  it('stops before an event whose data its codec refuses, naming it; nothing after it is published', () => {
    const bad = { ...stored(1), type: 'OrderCreated', schemaVersion: 1, data: { amount: '4.20' } }
    const result = publishablePrefix([E.right(stored(0)), E.right(bad), E.right(stored(2))])
    expect(result.events).toHaveLength(1)
    expect(result.stop).toContain(`order-x-1 revision 0 at position ${position(1)}: OrderCreated v1: invalid data`)
  })

  it('stops before an unknown type or version, and before an undecodable envelope', () => {
    expect(publishablePrefix([E.right({ ...stored(0), type: 'InvoiceIssued' })]).stop).toContain('unknown event type InvoiceIssued')
    expect(publishablePrefix([E.right({ ...stored(0), type: 'OrderCreated', schemaVersion: 9 })]).stop).toContain('OrderCreated: unknown schema version 9 (known: 1)')
    const undecodable: ReadItem = E.left({ _tag: 'UndecodableEvent', stream: 's', position: position(5), streamRevision: 3n, eventId: 'e', reason: 'metadata is not an object' })
    expect(publishablePrefix([E.right(stored(0)), undecodable])).toMatchObject({ events: [stored(0)].map(() => expect.anything()), stop: `s revision 3 at position ${position(5)}: undecodable event e: metadata is not an object` })
  })
})
