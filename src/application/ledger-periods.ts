import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { decodeDomainEvent, describeEventDecodeError } from '../domain/events/registry.ts'
import type { LedgerPeriodClosedData } from '../domain/ledger/events/ledger-period-closed.ts'
import {
  decideClose,
  evolvePeriods,
  initialPeriodsState,
  isLedgerPeriodEvent,
  ledgerPeriodEventNaturalKey,
  ledgerPeriodsStreamName,
  type ClosePeriod,
  type LedgerPeriodEvent,
  type PeriodRejection,
} from '../domain/ledger/period.ts'
import { POSTING_RULE_BOOK, type RuleBook } from '../domain/ledger/rules.ts'
import { describeHandleError, handleCommand } from './command-handler.ts'
import type { Cause } from './deps.ts'
import { streamCodec } from './streams.ts'
import type { EventStore, RecordedEvent } from './ports/event-store.ts'

export type ClosePeriodDeps = {
  readonly store: EventStore
  readonly merchantId: string
  readonly now: () => Date
  /** The posting rules in force where the command runs: the closed days are booked by its current version. */
  readonly rules?: RuleBook
}

export type ClosePeriodInput = { readonly date: string; readonly closedBy: string; readonly reason: string | null }

export type ClosePeriodFailure = PeriodRejection | { readonly _tag: 'NotRecorded'; readonly message: string }

const decodePeriodEvent = (r: RecordedEvent): E.Either<string, LedgerPeriodEvent> => {
  const decoded = decodeDomainEvent(r.type, r.schemaVersion, r.data)
  if (E.isLeft(decoded)) return E.left(describeEventDecodeError(decoded.left))
  return isLedgerPeriodEvent(decoded.right) ? E.right(decoded.right) : E.left(`${r.type} is not an event of a ledger periods stream`)
}

/**
 * Closes the ledger through a Bangkok business day (`satang ledger close`): a `LedgerPeriodClosed` on
 * the merchant's periods stream, naming who closed it and the posting rules it is booked by. The
 * ledger projection freezes those days when it meets the event.
 */
export const closeLedgerPeriod =
  (deps: ClosePeriodDeps, input: ClosePeriodInput, cause: Cause): TE.TaskEither<ClosePeriodFailure, LedgerPeriodClosedData> =>
  async () => {
    const stream = ledgerPeriodsStreamName(deps.merchantId)
    const at = deps.now()
    const command: ClosePeriod = { type: 'ClosePeriod', merchantId: deps.merchantId, date: input.date, ruleVersion: (deps.rules ?? POSTING_RULE_BOOK).current.version, closedBy: input.closedBy, reason: input.reason, at }
    const done = await handleCommand(
      deps.store,
      stream,
      { initialState: initialPeriodsState, evolve: evolvePeriods, decide: decideClose },
      streamCodec(decodePeriodEvent, (e) => ledgerPeriodEventNaturalKey(stream, e), { cause: { ...cause, actor: input.closedBy.trim() } }, at),
      () => command,
    )()
    if (E.isLeft(done)) {
      const e = done.left
      return E.left(e._tag === 'Rejected' ? e.rejection : { _tag: 'NotRecorded', message: describeHandleError(e, (r: PeriodRejection) => r._tag) })
    }
    const closed = done.right.appended[0]
    return closed === undefined ? E.left({ _tag: 'NotRecorded', message: 'nothing was decided' }) : E.right(closed.data)
  }

/** One line for people: why a close was refused. */
export const describeCloseFailure = (f: ClosePeriodFailure): string => {
  switch (f._tag) {
    case 'InvalidClose':
      return f.violations.map((v) => `${v.path}: ${v.rule}`).join('; ')
    case 'PeriodNotOver':
      return `${f.date} is not over in Asia/Bangkok yet (it ends at ${f.endsAt.toISOString()}): a day is closed once it has ended`
    case 'PeriodAlreadyClosed':
      return `the ledger is closed through ${f.closedThrough} already: ${f.date} cannot be closed again (closed periods never reopen)`
    case 'RuleVersionBehind':
      return `this satang posts by rules version ${String(f.ruleVersion)}, older than the version ${String(f.lastClosedWith)} of the last close: upgrade it first`
    case 'NotRecorded':
      return `the close could not be recorded (${f.message})`
  }
}
