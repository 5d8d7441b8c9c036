import * as E from 'fp-ts/lib/Either.js'
import { decodeDomainEvent, describeEventDecodeError } from '../domain/events/registry.ts'
import { CHARACTER_RULES } from '../domain/gateway/text-rules.ts'
import { decideAcknowledge, evolveBreakState, initialBreakState, type AcknowledgeBreak, type AcknowledgeRejection } from '../domain/reconciliation/acknowledge.ts'
import { isBreakEvent, type BreakEvent } from '../domain/reconciliation/events/index.ts'
import { breakEventNaturalKey, breakStreamName } from '../domain/reconciliation/stream.ts'
import type { Violation } from '../domain/violations.ts'
import { describeHandleError, handleCommand } from './command-handler.ts'
import type { Cause } from './deps.ts'
import { streamCodec } from './streams.ts'
import type { EventStore, RecordedEvent } from './ports/event-store.ts'
import type { ReconciliationQueries } from './ports/read-models.ts'
import { conflict, invalid, notFound, ok, unavailable, type UseCaseResult } from './results.ts'

export type AcknowledgeDeps = {
  readonly store: EventStore
  readonly queries: ReconciliationQueries
  readonly merchantId: string
  readonly now: () => Date
}

export const MAX_REASON_LENGTH = 1000
export const MAX_ACTOR_LENGTH = 200
const BREAK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const decodeBreakEvent = (r: RecordedEvent): E.Either<string, BreakEvent> => {
  const decoded = decodeDomainEvent(r.type, r.schemaVersion, r.data)
  if (E.isLeft(decoded)) return E.left(describeEventDecodeError(decoded.left))
  return isBreakEvent(decoded.right) ? E.right(decoded.right) : E.left(`${r.type} is not an event of a break stream`)
}

const describeRejection = (r: AcknowledgeRejection): string => r._tag

/** The character rules every text satang keeps obeys (the gateway messages' own: text-rules.ts), broken by `s` at `path`. */
const characterViolations = (path: string, s: string): ReadonlyArray<Violation> => CHARACTER_RULES.flatMap((rule) => rule(s) ?? []).map((rule) => ({ path, rule }))

/** The rules of an acknowledgement's input: a break id, an actor, a reason (every broken rule listed). */
export const acknowledgementViolations = (breakId: string, actor: string, reason: string): ReadonlyArray<Violation> => [
  ...(BREAK_ID.test(breakId) ? [] : [{ path: 'break_id', rule: 'must be a break id (a lowercase UUID, as reconciliation_breaks.break_id shows it)' }]),
  ...(actor.trim() === '' ? [{ path: 'actor', rule: 'must not be empty' }] : []),
  ...(actor.length > MAX_ACTOR_LENGTH ? [{ path: 'actor', rule: `must be at most ${String(MAX_ACTOR_LENGTH)} characters` }] : []),
  ...characterViolations('actor', actor),
  ...characterViolations('reason', reason),
  ...(reason.trim() === '' ? [{ path: 'reason', rule: 'must say why the break is closed' }] : []),
  ...(reason.length > MAX_REASON_LENGTH ? [{ path: 'reason', rule: `must be at most ${String(MAX_REASON_LENGTH)} characters` }] : []),
]

/**
 * A person closes a break with a reason (`satang reconcile ack`, `POST /v1/reconciliation/breaks/{id}/acknowledge`).
 * The actor and the reason become a `ReconciliationBreakAcknowledged` event on the break's own stream.
 * Acknowledging again changes nothing (200 with the first acknowledgement); a resolved break cannot be.
 */
export const acknowledgeBreak = async (deps: AcknowledgeDeps, breakId: string, actor: string, reason: string, cause: Cause): Promise<UseCaseResult> => {
  const violations = acknowledgementViolations(breakId, actor, reason)
  if (violations.length > 0) return invalid(violations)
  const current = await deps.queries.breakStatus(breakId)()
  if (E.isLeft(current)) return unavailable(current.left.missing ? 'the reconciliation read models do not exist yet: run satang migrate' : 'the reconciliation read model could not be read')
  const row = current.right
  if (row === undefined || row.merchantId !== deps.merchantId) return notFound(`no break ${breakId}`)
  const stream = breakStreamName(deps.merchantId, breakId)
  const command: AcknowledgeBreak = { type: 'AcknowledgeBreak', breakId, current: { class: row.class, status: row.status }, actor: actor.trim(), reason, at: deps.now() }
  const done = await handleCommand(
    deps.store,
    stream,
    { initialState: initialBreakState, evolve: evolveBreakState, decide: decideAcknowledge },
    streamCodec(decodeBreakEvent, (e) => breakEventNaturalKey(stream, e), { cause: { ...cause, actor: actor.trim() } }, deps.now()),
    () => command,
  )()
  if (E.isLeft(done)) {
    const e = done.left
    if (e._tag === 'Rejected') {
      switch (e.rejection._tag) {
        case 'NoSuchBreak':
          return notFound(`no break ${breakId}`)
        case 'BreakResolved':
          return conflict(`break ${breakId} is resolved: a later run found its item consistent`)
        case 'ReasonRequired':
          return invalid([{ path: 'reason', rule: 'must say why the break is closed' }])
      }
    }
    return unavailable(`the event store could not record it: ${describeHandleError(e, describeRejection)}`)
  }
  const ack = done.right.state.acknowledged
  return ok({
    break_id: breakId,
    class: row.class,
    status: 'acknowledged',
    acknowledged_by: ack?.actor ?? actor.trim(),
    reason: ack?.reason ?? reason.trim(),
    acknowledged_at: (ack?.acknowledgedAt ?? deps.now()).toISOString(),
    already_acknowledged: done.right.appended.length === 0,
  })
}
