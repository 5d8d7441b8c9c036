import { Histogram, type Registry } from 'prom-client'
import type { EventPublisher } from '../../application/ports/event-publisher.ts'
import type { RecordedEvent } from '../../application/ports/event-store.ts'
import { inSpan, linksTo, SpanKind, SpanStatusCode, tracingOn } from './tracing.ts'

const PUBLISH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** The `traceparent` an event's metadata holds (the request that caused it), when it holds one. */
export const traceparentOf = (e: RecordedEvent): string | undefined => {
  const tp = e.metadata['traceparent']
  return typeof tp === 'string' ? tp : undefined
}

/**
 * The relay's publisher with each publish measured (`satang_relay_publish_duration_seconds`) and, while
 * tracing is on, a producer span of its own (a new trace: one publish carries the events of many
 * requests) linked to the span of each request whose events it carries.
 */
export const observedPublisher = (publisher: EventPublisher, registry: Registry, topic: string): EventPublisher => {
  const duration = new Histogram({
    name: 'satang_relay_publish_duration_seconds',
    help: 'time from handing a batch of events to the broker to its acknowledgement, by outcome (ok, failed)',
    labelNames: ['outcome'],
    buckets: PUBLISH_BUCKETS,
    registers: [registry],
  })
  const measured: EventPublisher['publish'] = (events) => async () => {
    const end = duration.startTimer()
    const result = await publisher.publish(events)()
    end({ outcome: result._tag === 'Left' ? 'failed' : 'ok' })
    return result
  }
  if (!tracingOn()) return { ...publisher, publish: measured }
  return {
    ...publisher,
    publish: (events) => () =>
      inSpan(
        `publish ${topic}`,
        {
          kind: SpanKind.PRODUCER,
          root: true,
          links: linksTo(events.map(traceparentOf)),
          attributes: { 'messaging.system': 'kafka', 'messaging.operation.type': 'send', 'messaging.destination.name': topic, 'messaging.batch.message_count': events.length },
        },
        async (span) => {
          const result = await measured(events)()
          if (result._tag === 'Left') span?.setStatus({ code: SpanStatusCode.ERROR, message: result.left.kind })
          return result
        },
      ),
  }
}
