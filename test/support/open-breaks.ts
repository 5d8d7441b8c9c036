import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { bangkokDateOf, formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { toStoreMetadata } from '../../src/domain/events/metadata.ts'
import { encodeDomainEvent, eventSourceOf } from '../../src/domain/events/registry.ts'
import { runStreamName, type RunCommand } from '../../src/domain/reconciliation/index.ts'
import { runEventsOf } from '../domain/reconciliation/run-events.ts'

/**
 * Appends a completed reconciliation run of today that detected `count` amount_mismatch breaks of
 * `merchantId`, each with a break id as real runs make them (a UUID), as any run appends its stream.
 * Returns the break ids; the projector shows them as open breaks once it has applied the run.
 */
export const appendOpenBreaks = async (store: EventStore, merchantId: string, count: number): Promise<ReadonlyArray<string>> => {
  const runId = randomUUID()
  const at = new Date()
  const day = formatCalendarDate(bangkokDateOf(at))
  const breaks = Array.from({ length: count }, (_, i) => ({ id: `ACK-${runId.slice(0, 8)}-${String(i)}`, breakId: randomUUID() }))
  const commands: ReadonlyArray<RunCommand> = [
    {
      type: 'StartRun',
      started: {
        runId,
        merchantId,
        scope: { kind: 'days', from: day, to: day },
        parameters: { concurrency: 1, asOf: at, notFoundGraceMs: 0, stalePendingMs: 0, chargeGraceMs: 0 },
        startedBy: { trigger: 'cli', actor: 'test' },
        itemsInScope: count,
        startedAt: at,
      },
    },
    {
      type: 'RecordItems',
      at,
      items: breaks.map((b) => ({
        checked: { kind: 'payment', id: b.id, day, outcome: 'break', breakClass: 'amount_mismatch', breakId: b.breakId, amount: 10000n, atStake: 100n },
        detect: {
          runId,
          breakId: b.breakId,
          class: 'amount_mismatch',
          status: 'new',
          item: { kind: 'payment', id: b.id, merchantOrderId: b.id, merchantRefundId: null, merchantSubscribeId: null, stream: `order-${merchantId}-${b.id}` },
          day,
          satangView: { status: 'PS', amount_satang: '10000' },
          gatewayView: { status: 'PS', amount_satang: '10100' },
          amountAtStake: 100n,
          detail: 'seeded amount mismatch',
          firstSeenAt: at,
          firstSeenRunId: runId,
          detectedAt: at,
          evidence: { traceId: `trace-${b.id}`, observationKey: null },
        },
        resolve: [],
        healed: null,
      })),
    },
    { type: 'CompleteRun', days: [day], at },
  ]
  const appended = await store.append(
    runStreamName(merchantId, runId),
    runEventsOf(commands).map((e) => {
      const s = encodeDomainEvent(e)
      return { eventId: randomUUID(), type: s.type, schemaVersion: s.schemaVersion, data: s.data, metadata: toStoreMetadata({ correlationId: runId, causationId: runId, recordedAt: at.toISOString(), source: eventSourceOf(e) }) }
    }),
    'no_stream',
  )()
  if (E.isLeft(appended)) throw new Error(`appending the run failed: ${appended.left._tag}`)
  return breaks.map((b) => b.breakId)
}
