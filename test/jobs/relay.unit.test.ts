import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { Position, type ReadItem, type RecordedEvent } from '../../src/application/ports/event-store.ts'
import { encodeDomainEvent } from '../../src/domain/events/registry.ts'
import { readablePrefix } from '../../src/jobs/relay/relay.ts'
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

describe('readablePrefix (never skip an event the store could not read)', () => {
  it('hands on every event when the store read all of them, those with data their codec refuses included (the publisher checks data)', () => {
    const events = [stored(0), { ...stored(1), type: 'OrderCreated', schemaVersion: 1, data: { amount: '4.20' } }, stored(2)]
    expect(readablePrefix(events.map((e) => E.right(e)))).toEqual({ events, stop: null })
  })

  it('stops before an undecodable envelope, naming it; nothing after it is handed on', () => {
    const undecodable: ReadItem = E.left({ _tag: 'UndecodableEvent', stream: 's', position: position(5), streamRevision: 3n, eventId: 'e', reason: 'metadata is not an object' })
    const first = stored(0)
    expect(readablePrefix([E.right(first), undecodable, E.right(stored(2))])).toEqual({ events: [first], stop: `s revision 3 at position ${position(5)}: undecodable event e: metadata is not an object` })
    expect(readablePrefix([undecodable])).toEqual({ events: [], stop: `s revision 3 at position ${position(5)}: undecodable event e: metadata is not an object` })
  })
})
