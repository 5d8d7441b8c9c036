import * as E from 'fp-ts/lib/Either.js'
import { Position, type RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { encodeDomainEvent } from '../../../src/domain/events/registry.ts'
import { allEvents } from '../../domain/events/catalogue.ts'

// Stored events for the Kafka adapter's and the relay's unit tests: Thai text, nested data, seven
// streams (`eventNo`); every event type of the domain with valid data (`catalogueEventNo`).

/** The log position of the nth test event. */
export const positionNo = (n: number): Position => {
  const d = Position.decode(`00000000000000000123-${String(n).padStart(20, '0')}`)
  if (E.isLeft(d)) throw new Error('bad position')
  return d.right
}

export const eventNo = (i: number, over: Partial<RecordedEvent> = {}): RecordedEvent => ({
  eventId: `0f8fad5b-d9cb-469f-a165-${String(i).padStart(12, '0')}`,
  type: 'OrderCreated',
  schemaVersion: 1,
  data: { merchantId: '140000000000000001', merchantOrderId: `A-${String(i)}`, amount: String(42_000 + i), note: 'หม้อหุงข้าว 1.8 ลิตร', nested: { list: [1, 2.5, null, true], empty: {} } },
  metadata: { correlationId: `corr-${String(i)}`, causationId: 'cause-1', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request' },
  streamName: `order-140000000000000001-A-${String(i % 7)}`,
  streamRevision: BigInt(i),
  position: positionNo(i + 1),
  recordedAt: new Date(Date.UTC(2026, 0, 1, 3, 0, 0, i)),
  ...over,
})

/**
 * The nth event of the domain's catalogue (every event type, valid data at its schema version; past
 * the end it starts again) as stored: stream `stream-<n>`, revision n, position n.
 */
export const catalogueEventNo = (n: number): RecordedEvent => {
  const all = allEvents()
  const e = all[n % all.length]
  if (e === undefined) throw new Error('the catalogue has no events')
  return {
    eventId: `7c9e6679-7425-40de-944b-${String(n).padStart(12, '0')}`,
    ...encodeDomainEvent(e),
    metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T00:00:00.000Z', source: 'api_request' },
    streamName: `stream-${String(n)}`,
    streamRevision: BigInt(n),
    position: positionNo(n),
    recordedAt: new Date(Date.UTC(2026, 0, 1, n)),
  }
}

/** Every event type of the catalogue once, as stored (`catalogueEventNo` 0, 1, …). */
export const catalogueEvents = (): RecordedEvent[] => allEvents().map((_, n) => catalogueEventNo(n))
