import * as E from 'fp-ts/lib/Either.js'
import { Position, type RecordedEvent } from '../../../src/application/ports/event-store.ts'

// Stored events for the Kafka adapter's unit tests: Thai text, nested data, seven streams.

const position = (n: number): Position => {
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
  position: position(i + 1),
  recordedAt: new Date(Date.UTC(2026, 0, 1, 3, 0, 0, i)),
  ...over,
})
