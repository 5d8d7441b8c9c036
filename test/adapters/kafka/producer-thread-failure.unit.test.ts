import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { makeKafkaEventPublisher } from '../../../src/adapters/kafka/publisher.ts'
import { Position, type RecordedEvent } from '../../../src/application/ports/event-store.ts'
import { makeLogger } from '../../../src/logger.ts'
import { Writable } from 'node:stream'

// The producer thread can stop (a defect, an uncaught error, the thread ended): the publish waiting on
// it must fail like a broker failure (the relay retries from its checkpoint), never hang, and the next
// prepare must start a new thread. The threads here are stand-ins speaking the thread's protocol.

const position = Position.decode('00000000000000000001-00000000000000000001')
if (E.isLeft(position)) throw new Error('bad position')
const anEvent: RecordedEvent = {
  eventId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  type: 'OrderCreated',
  schemaVersion: 1,
  data: { merchantOrderId: 'A-1' },
  metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T03:00:00.000Z', source: 'api_request' },
  streamName: 'order-140000000000000001-A-1',
  streamRevision: 0n,
  position: position.right,
  recordedAt: new Date('2026-01-01T03:00:00.125Z'),
}

const publisherWith = (fixture: string) => {
  const lines: string[] = []
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      lines.push(chunk.toString('utf8'))
      done()
    },
  })
  const log = makeLogger({ level: 'debug' }, sink)
  const publisher = makeKafkaEventPublisher(
    { log },
    { brokers: ['127.0.0.1:1'], topic: 'satang.events', clientId: 'test', partitions: 1, replicationFactor: 1, source: '/satang', maxRequestBytes: 1_000_000, timeoutMs: 2_000, threadModule: new URL(`./fixtures/${fixture}`, import.meta.url) },
  )
  return { publisher, lines }
}

describe('the producer thread stops', () => {
  for (const [fixture, why] of [
    ['exiting-thread.ts', /stopped: it exited with code 3/],
    ['throwing-thread.ts', /stopped: the stand-in thread failed on purpose/],
  ] as const) {
    it(`${fixture}: the publish fails as unreachable and retriable, naming the topic; the next prepare and publish use a new thread`, async () => {
      const { publisher, lines } = publisherWith(fixture)
      try {
        expect(await publisher.prepare()()).toEqual(E.right({ description: 'a stand-in thread', partitions: 1, created: false }))
        const first = await publisher.publish([anEvent])()
        if (E.isRight(first)) throw new Error('expected the publish to fail')
        expect(first.left).toMatchObject({ _tag: 'PublishFailure', kind: 'unreachable', retriable: true })
        expect(first.left.message).toMatch(/the Kafka producer thread \(topic satang\.events on 127\.0\.0\.1:1\)/)
        expect(first.left.message).toMatch(why)
        if (fixture === 'throwing-thread.ts') expect(lines.join('')).toContain('the Kafka producer thread failed')
        // A new thread answers the next prepare; its first request ends it again.
        expect(E.isRight(await publisher.prepare()())).toBe(true)
        expect(E.isLeft(await publisher.publish([anEvent])())).toBe(true)
      } finally {
        await publisher.close()
      }
    })
  }

  it('close while a publish waits: the publish fails (the publisher was closed) instead of hanging', async () => {
    // A thread that never answers a request, as with a broker that does not acknowledge.
    const { publisher } = publisherWith('silent-thread.ts')
    expect(E.isRight(await publisher.prepare()())).toBe(true)
    const pending = publisher.publish([anEvent])()
    await publisher.close()
    const result = await pending
    if (E.isRight(result)) throw new Error('expected the publish to fail')
    expect(result.left.message).toMatch(/was closed/)
  })
})
