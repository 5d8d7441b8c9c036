import * as E from 'fp-ts/lib/Either.js'
import { parseCalendarDate } from '../domain/bangkok-time.ts'
import { paymentView } from '../domain/order/view.ts'
import { orderStreamName } from '../domain/order/stream.ts'
import { refundStreamName } from '../domain/refund/stream.ts'
import { subscriptionStreamName } from '../domain/subscription/stream.ts'
import type { EventStore, JsonObject, Position } from './ports/event-store.ts'
import { refundView } from './refunds.ts'
import { notFound, ok, unavailable, type UseCaseResult } from './results.ts'
import { decodeFor, orderKind, refundKind, subscriptionKind } from './streams.ts'
import { subscriptionView } from './subscriptions.ts'

/*
 * "As of": the state of the log at a past instant or global position. A request names one or the
 * other; an instant must carry its offset (`2026-11-20T17:00:00+07:00` or `…Z`), since a wall-clock
 * time alone would be ambiguous between Bangkok and UTC. Anything else is taken for a position as the
 * store prints it (the audit trail's `position`, a report's `log_position`).
 */

export type AsOfRequest =
  | { readonly _tag: 'Instant'; readonly at: Date; readonly text: string }
  | { readonly _tag: 'Position'; readonly position: Position; readonly text: string }

const INSTANT = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/
const POSITION = /^[0-9A-Za-z:/_-]{1,100}$/
const INSTANT_RULE = 'must be an ISO-8601 instant with its offset, such as 2026-11-20T17:00:00+07:00 or 2026-11-20T10:00:00Z'

/**
 * The rules an ISO-8601 instant breaks, its calendar date read by the one date parser that `--date`
 * options use (`Date` would roll 2026-02-30 over into March).
 */
const instantRules = (text: string): ReadonlyArray<string> => {
  const m = INSTANT.exec(text)
  if (m === null) return [INSTANT_RULE]
  const [date, hour, minute, second, , , offsetHours, offsetMinutes] = m.slice(1)
  const day = parseCalendarDate(date ?? '')
  return [
    ...(E.isLeft(day) ? day.left : []),
    ...(Number(hour) > 23 ? ['hour must be 00 to 23'] : []),
    ...(Number(minute) > 59 ? ['minute must be 00 to 59'] : []),
    ...(second !== undefined && Number(second) > 59 ? ['second must be 00 to 59'] : []),
    ...(offsetHours !== undefined && (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) ? ['offset must be at most ±23:59'] : []),
  ]
}

/** The rule an ISO-8601 instant with its offset breaks, or the instant. */
export const parseInstant = (text: string): E.Either<string, Date> => {
  const rules = instantRules(text)
  const at = new Date(text)
  if (rules.length === 0 && Number.isNaN(at.getTime())) return E.left(INSTANT_RULE)
  return rules.length > 0 ? E.left(rules.join('; ')) : E.right(at)
}

/** What an as-of text must be. */
export const AS_OF_RULE = 'must be an ISO-8601 instant with its offset (2026-11-20T17:00:00+07:00) or a global log position as satang prints it'

/** The rule an as-of text breaks, or the request. */
export const parseAsOf = (text: string): E.Either<string, AsOfRequest> => {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    // A date alone is no position (those are two 20-digit numbers) and no instant.
    const day = parseCalendarDate(text)
    return E.left(E.isLeft(day) ? day.left.join('; ') : `a date alone is not an instant: give one with its offset, such as ${text}T23:59:59+07:00 (the end of that Bangkok day)`)
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    const at = parseInstant(text)
    if (E.isLeft(at)) return E.left(at.left === INSTANT_RULE ? `${INSTANT_RULE}, or a global log position` : at.left)
    return E.right({ _tag: 'Instant', at: at.right, text })
  }
  if (!POSITION.test(text)) return E.left(AS_OF_RULE)
  return E.right({ _tag: 'Position', position: text as Position, text })
}

/** An as-of request resolved: the last position it includes (null: the log was empty) and the instant ages are measured at. */
export type AsOf = { readonly position: Position | null; readonly instant: Date; readonly requested: string }

export type StreamKind = 'order' | 'refund' | 'subscription'

/** The stream of an order, refund or subscription of the merchant. */
export const streamOfKind = (kind: StreamKind, merchantId: string, id: string): string =>
  kind === 'order' ? orderStreamName(merchantId, id) : kind === 'refund' ? refundStreamName(merchantId, id) : subscriptionStreamName(merchantId, id)

/**
 * The view of an order, refund or subscription as it stood at `asOf`: its stream's events up to that
 * position folded by the aggregate's own `evolve` (the answer a rebuild stopped there would give).
 */
export const viewAsOf = async (store: EventStore, kind: StreamKind, stream: string, asOf: AsOf): Promise<UseCaseResult> => {
  const read = await store.readStream(stream)()
  if (E.isLeft(read)) return unavailable('the event store could not be read', `event store ${read.left.operation} failed`)
  const upTo = asOf.position
  const recorded = read.right.flatMap((i) => (E.isRight(i) && upTo !== null && i.right.position <= upTo ? [i.right] : []))
  const stamp: JsonObject = { as_of: { requested: asOf.requested, position: asOf.position, instant: asOf.instant.toISOString() }, served_from: 'event_log', events_applied: recorded.length }
  const fold = <S, Ev>(decode: (r: (typeof recorded)[number]) => E.Either<string, Ev>, initial: S, evolve: (s: S, e: Ev) => S): { readonly state: S; readonly events: ReadonlyArray<Ev> } | string => {
    const events: Ev[] = []
    for (const r of recorded) {
      const d = decode(r)
      if (E.isLeft(d)) return `${stream} revision ${String(r.streamRevision)}: ${d.left}`
      events.push(d.right)
    }
    return { state: events.reduce(evolve, initial), events }
  }
  const none = notFound(`no such ${kind} as of ${asOf.requested}`)
  switch (kind) {
    case 'order': {
      const f = fold(decodeFor(orderKind), orderKind.decider.initialState, orderKind.decider.evolve)
      if (typeof f === 'string') return unavailable('the event store holds an event that cannot be read', f)
      return f.state._tag === 'Order' ? ok({ ...paymentView(f.state, f.events), ...stamp }) : none
    }
    case 'refund': {
      const f = fold(decodeFor(refundKind), refundKind.decider.initialState, refundKind.decider.evolve)
      if (typeof f === 'string') return unavailable('the event store holds an event that cannot be read', f)
      return f.state._tag === 'Refund' ? ok({ ...refundView(f.state), ...stamp }) : none
    }
    case 'subscription': {
      const f = fold(decodeFor(subscriptionKind), subscriptionKind.decider.initialState, subscriptionKind.decider.evolve)
      if (typeof f === 'string') return unavailable('the event store holds an event that cannot be read', f)
      return f.state._tag === 'Subscription' ? ok({ ...subscriptionView(f.state), ...stamp }) : none
    }
  }
}
