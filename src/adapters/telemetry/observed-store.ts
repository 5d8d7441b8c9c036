import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { Histogram, type Registry } from 'prom-client'
import type { AppendError, EventStore, EventToAppend } from '../../application/ports/event-store.ts'
import { currentTraceparent, inSpan, SpanStatusCode, tracingOn } from './tracing.ts'

/** Seconds: an append is a few milliseconds; a slow disk or a lock wait shows in the upper buckets. */
const APPEND_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/** The category of a stream: its name up to the first `-` (`order`, `refund`, `subscription`, …). */
export const streamCategory = (stream: string): string => {
  const dash = stream.indexOf('-')
  return dash > 0 ? stream.slice(0, dash) : stream
}

const outcomeOf = (e: AppendError | undefined): string => (e === undefined ? 'ok' : e._tag === 'WrongExpectedVersion' ? 'wrong_expected_version' : e._tag === 'EventIdConflict' ? 'event_id_conflict' : e._tag === 'InvalidAppend' ? 'invalid' : 'failed')

/** Each event with the `traceparent` of the span current now in its metadata (unless it has one). */
const withTraceparent = (events: ReadonlyArray<EventToAppend>, traceparent: string | undefined): ReadonlyArray<EventToAppend> =>
  traceparent === undefined ? events : events.map((e) => (e.metadata['traceparent'] === undefined ? { ...e, metadata: { ...e.metadata, traceparent } } : e))

/**
 * The event store with its appends measured (`satang_eventstore_append_duration_seconds`) and, while
 * tracing is on, traced: a span per append (stream category, event count), and the W3C `traceparent`
 * of the request that caused the events kept in their metadata, so the projector and the relay link
 * their own spans to it and every Kafka message carries it.
 */
export const observedEventStore = (store: EventStore, registry: Registry): EventStore => {
  const duration = new Histogram({
    name: 'satang_eventstore_append_duration_seconds',
    help: 'time to append one batch of events to a stream, by stream category and outcome (ok, wrong_expected_version, event_id_conflict, invalid, failed)',
    labelNames: ['category', 'outcome'],
    buckets: APPEND_BUCKETS,
    registers: [registry],
  })
  const measured = (stream: string, events: ReadonlyArray<EventToAppend>, expected: Parameters<EventStore['append']>[2]): ReturnType<EventStore['append']> => {
    const category = streamCategory(stream)
    return () => {
      const end = duration.startTimer({ category })
      return pipe(
        store.append(stream, events, expected),
        TE.bimap(
          (e) => {
            end({ outcome: outcomeOf(e) })
            return e
          },
          (r) => {
            end({ outcome: outcomeOf(undefined) })
            return r
          },
        ),
      )()
    }
  }
  if (!tracingOn()) return { ...store, append: measured }
  return {
    ...store,
    append: (stream, events, expected) => () =>
      inSpan('append ' + streamCategory(stream), { attributes: { 'satang.stream.category': streamCategory(stream), 'satang.event.count': events.length } }, async (span) => {
        const result = await measured(stream, withTraceparent(events, currentTraceparent()), expected)()
        if (result._tag === 'Left') span?.setStatus({ code: SpanStatusCode.ERROR, message: outcomeOf(result.left) })
        span?.setAttribute('satang.append.outcome', outcomeOf(result._tag === 'Left' ? result.left : undefined))
        return result
      }),
  }
}
