import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import type { EventStore, Position, RecordedEvent } from '../../src/application/ports/event-store.ts'
import { eventSourceOf, toEventToAppend } from '../../src/domain/events/registry.ts'
import { freshEventStoreDatabase, type EventStoreDatabase } from '../adapters/http/database.ts'
import { runCli } from '../support/cli.ts'
import type { ConsumedMessage } from '../support/kafka.ts'
import { orderEventsOf, orderPlanArb } from '../projections/scenarios.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/**
 * The environment of a `satang relay` process (or `satang relay --status`) of a relay test: its log's
 * database, the broker and the topic, warnings only, and the test's own `settings` (batch sizes,
 * retry intervals) on top; nothing else of SATANG_* from the test's own environment.
 */
export const relayEnv = (db: { readonly url: string }, brokers: ReadonlyArray<string>, topic: string, settings: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv =>
  envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: db.url, SATANG_KAFKA_BROKERS: brokers.join(','), SATANG_KAFKA_TOPIC: topic, ...settings })

/**
 * A database of its own for a relay test: the event store (`freshEventStoreDatabase`), then what
 * `satang migrate` adds (the read models, `relay_checkpoints` among them), run as an operator runs it.
 */
export const migratedLog = async (label: string): Promise<EventStoreDatabase> => {
  const db = await freshEventStoreDatabase(label)
  const migrated = await runCli(['migrate'], { env: envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: db.url }) })
  if (migrated.code !== 0) {
    await db.drop()
    throw new Error(`satang migrate exited with ${String(migrated.code)}: ${migrated.stderr}`)
  }
  return db
}

/** Every event of the log, in log order. */
export const readWholeLog = async (store: EventStore): Promise<ReadonlyArray<RecordedEvent>> => {
  const out: RecordedEvent[] = []
  let from: Position | undefined
  for (;;) {
    const page = await store.readAll({ ...(from === undefined ? {} : { from }), maxCount: 5_000 })()
    if (E.isLeft(page)) throw new Error(`readAll failed: ${page.left._tag}`)
    for (const item of page.right) {
      if (E.isLeft(item)) throw new Error(`undecodable event in the log: ${item.left.reason}`)
      out.push(item.right)
    }
    const last = page.right.at(-1)
    if (last === undefined) return out
    from = E.isRight(last) ? last.right.position : last.left.position
  }
}

/** Appends whole order streams (each in one append) until the log has at least `events` more events. Returns how many. */
export const appendOrders = async (store: EventStore, events: number, label: string = randomUUID().slice(0, 8)): Promise<number> => {
  const plans = fc.sample(orderPlanArb, { numRuns: 200, seed: 14 })
  let appended = 0
  for (let i = 0; appended < events; i++) {
    const o = orderEventsOf(i + 1, plans[i % plans.length] ?? { amount: 10_000n, service: 'qr_promptpay', observations: [] })
    const stream = `${o.stream}-${label}`
    const batch = o.events.map((e) => toEventToAppend(e, randomUUID(), { correlationId: `test-${label}`, causationId: `test-${label}`, recordedAt: new Date().toISOString(), source: eventSourceOf(e) }))
    const r = await store.append(stream, batch, 'no_stream')()
    if (E.isLeft(r)) throw new Error(`append to ${stream} failed: ${r.left._tag}`)
    appended += batch.length
  }
  return appended
}

/** How the messages on the topic compare with the log. */
export type DeliveryCheck = {
  readonly eventsInLog: number
  readonly messages: number
  /** Messages whose `ce_id` was already received (at least once, so consumers dedupe). */
  readonly redeliveries: number
  /** Events of the log no message carried. */
  readonly missing: ReadonlyArray<string>
  /** A message of a key whose revision skips ahead of the next expected one (a gap or a reorder). */
  readonly outOfOrder: ReadonlyArray<string>
  /** Messages that do not match their event (unknown id, wrong key, subject, revision, position or value). */
  readonly mismatched: ReadonlyArray<string>
}

/**
 * Checks the consumed messages (each partition in its order) against the log: after dedupe by `ce_id`
 * every event exactly once; per key the revisions arrive as 0, 1, 2, … (a redelivery may repeat
 * revisions already seen, never skip one); each message carries its event's stream, revision, position
 * and stored data.
 */
export const checkDelivery = (log: ReadonlyArray<RecordedEvent>, messages: ReadonlyArray<ConsumedMessage>): DeliveryCheck => {
  const byId = new Map(log.map((e) => [e.eventId, e]))
  const seen = new Set<string>()
  const nextRevision = new Map<string, bigint>()
  const outOfOrder: string[] = []
  const mismatched: string[] = []
  let redeliveries = 0
  for (const m of messages) {
    const id = m.headers['ce_id'] ?? ''
    const e = byId.get(id)
    if (e === undefined) {
      mismatched.push(`unknown ce_id ${id} (key ${m.key})`)
      continue
    }
    if (m.key !== e.streamName || m.headers['ce_subject'] !== e.streamName || m.headers['ce_streamrevision'] !== e.streamRevision.toString() || m.headers['ce_satangposition'] !== e.position || m.value !== JSON.stringify(e.data)) {
      mismatched.push(`${id}: message does not match the stored event (${e.streamName} revision ${e.streamRevision.toString()})`)
    }
    if (seen.has(id)) redeliveries += 1
    seen.add(id)
    const expected = nextRevision.get(m.key) ?? 0n
    if (e.streamRevision === expected) nextRevision.set(m.key, expected + 1n)
    else if (e.streamRevision > expected) outOfOrder.push(`${m.key}: revision ${e.streamRevision.toString()} arrived while ${expected.toString()} was expected`)
  }
  return { eventsInLog: log.length, messages: messages.length, redeliveries, missing: log.filter((e) => !seen.has(e.eventId)).map((e) => `${e.streamName}@${e.streamRevision.toString()}`), outOfOrder, mismatched }
}

/** Polls `check` until it returns true (or throws after `timeoutMs` with `what`). */
export const eventually = async (what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out after ${String(timeoutMs)} ms waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}
