import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { ReadItem } from '../../src/application/ports/event-store.ts'
import { readablePrefix } from '../../src/jobs/relay/relay.ts'
import { catalogueEventNo, positionNo } from '../adapters/kafka/events.ts'

describe('readablePrefix (never skip an event the store could not read)', () => {
  it('hands on every event when the store read all of them, those with data their codec refuses included (the publisher checks data)', () => {
    const events = [catalogueEventNo(0), { ...catalogueEventNo(1), type: 'OrderCreated', schemaVersion: 1, data: { amount: '4.20' } }, catalogueEventNo(2)]
    expect(readablePrefix(events.map((e) => E.right(e)))).toEqual({ events, stop: null })
  })

  it('stops before an undecodable envelope, naming it; nothing after it is handed on', () => {
    const undecodable: ReadItem = E.left({ _tag: 'UndecodableEvent', stream: 's', position: positionNo(5), streamRevision: 3n, eventId: 'e', reason: 'metadata is not an object' })
    const first = catalogueEventNo(0)
    expect(readablePrefix([E.right(first), undecodable, E.right(catalogueEventNo(2))])).toEqual({ events: [first], stop: `s revision 3 at position ${positionNo(5)}: undecodable event e: metadata is not an object` })
    expect(readablePrefix([undecodable])).toEqual({ events: [], stop: `s revision 3 at position ${positionNo(5)}: undecodable event e: metadata is not an object` })
  })
})
