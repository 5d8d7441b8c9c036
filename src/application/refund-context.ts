import * as E from 'fp-ts/lib/Either.js'
import { readCategoryUpToHead } from './category-reads.ts'
import type { AppendError, EventStore, EventStoreFailure, ExpectedRevision } from './ports/event-store.ts'
import { decodeDomainEvent, describeEventDecodeError, type DomainEvent } from '../domain/events/registry.ts'
import { orderStreamName } from '../domain/order/index.ts'
import {
  decide as decideRefund,
  emptyRefundLedger,
  evolveRefundLedger,
  parseRefundStreamName,
  refundableStreamName,
  refundAmountReserved,
  refundLedgerNaturalKey,
  refundLedgersOpened,
  refundLedgersOpenedStreamName,
  refundOrderContext,
  reservedByOthers,
  type RefundCommand,
  type RefundEvent,
  type RefundLedger,
  type RefundOrderContext,
  type RefundRecorded,
  type RefundRejection,
  type RefundState,
} from '../domain/refund/index.ts'
import type { Current, HandleError, Handled } from './command-handler.ts'
import type { RecordingDeps } from './deps.ts'
import { appendEvents, load, orderKind, record, refundKind, type AggregateKind, type Provenance } from './streams.ts'

/*
 * Refund decisions that cannot overdraw an order. What an order can still refund is kept in its
 * refundable ledger (`refundable-<merchant_id>-<merchant_order_id>`, domain/refund/ledger.ts): one
 * `RefundAmountReserved` per refund that took money back. A decision that would record a refund first
 * appends the refund's reservation to the ledger with the ledger's expected revision, then records the
 * refund; a concurrent decision on the same order finds the ledger moved, reads it again and decides
 * again against the new total. The ledger is a few events per order, read whole: no scan of the
 * merchant's refunds. A crash between the two appends leaves a reservation whose refund is recorded by
 * the next delivery or query of the same refund (its own reservation never counts against it).
 */

export type RefundDecisionDeps = Pick<RecordingDeps, 'store' | 'now' | 'newId'>

/** The reservation of a recorded refund's amount on its order's refundable ledger. */
const reservationOf = (d: RefundRecorded['data'], basis: 'decided' | 'carried_over') =>
  refundAmountReserved.make({ merchantId: d.merchantId, merchantOrderId: d.merchantOrderId, merchantRefundId: d.merchantRefundId, amount: d.amount, currency: d.currency, basis, source: d.source, reservedAt: d.observedAt })

/** The decision would record the refund, and its amount is not reserved yet. */
type NeedsReservation = { readonly _tag: 'NeedsReservation'; readonly recorded: RefundRecorded }

/** How many times a decision reads the ledger again after losing a race for it. */
const MAX_LEDGER_ATTEMPTS = 16

const failure = (operation: string, cause: unknown): EventStoreFailure => ({ _tag: 'EventStoreFailure', operation, retriable: true, cause })

type ReadLedger = { readonly ledger: RefundLedger; readonly revision: bigint | undefined }

const readLedger = async (store: EventStore, stream: string): Promise<E.Either<EventStoreFailure, ReadLedger>> => {
  const read = await store.readStream(stream)()
  if (E.isLeft(read)) return read
  let ledger = emptyRefundLedger
  let revision: bigint | undefined
  for (const item of read.right) {
    if (E.isLeft(item)) return E.left(failure(`read ${stream}`, new Error(item.left.reason)))
    const decoded = decodeDomainEvent(item.right.type, item.right.schemaVersion, item.right.data)
    if (E.isLeft(decoded)) return E.left(failure(`read ${stream}`, new Error(describeEventDecodeError(decoded.left))))
    if (decoded.right.type === 'RefundAmountReserved') ledger = evolveRefundLedger(ledger, decoded.right)
    revision = item.right.streamRevision
  }
  return E.right({ ledger, revision })
}

const appendLedgerEvent = (deps: RefundDecisionDeps, stream: string, e: DomainEvent & { readonly type: 'RefundAmountReserved' | 'RefundLedgersOpened' }, expected: ExpectedRevision, correlationId: string): Promise<E.Either<AppendError, unknown>> =>
  appendEvents(deps, stream, [{ event: e, naturalKey: refundLedgerNaturalKey(stream, e) }], { cause: { correlationId, causationId: correlationId } }, expected)()

/** Merchants whose ledgers are known to be open, per store (a permanent fact, so a cache). */
const opened = new WeakMap<EventStore, Set<string>>()

/**
 * The upgrade from before refundable ledgers, once per merchant: every refund already recorded
 * (`RefundRecorded` in the merchant's refund streams, the only scan of them) is carried over into its
 * order's ledger, then `RefundLedgersOpened` marks the merchant done. Idempotent (ids from natural
 * keys), so two processes may both run it.
 */
export const openRefundLedgers = async (deps: RefundDecisionDeps, merchantId: string): Promise<E.Either<EventStoreFailure | AppendError, void>> => {
  const known = opened.get(deps.store) ?? new Set<string>()
  opened.set(deps.store, known)
  if (known.has(merchantId)) return E.right(undefined)
  const marker = refundLedgersOpenedStreamName(merchantId)
  const kept = await deps.store.readStream(marker, { maxCount: 1 })()
  if (E.isLeft(kept)) return kept
  if (kept.right.length > 0) {
    known.add(merchantId)
    return E.right(undefined)
  }
  // Every refund recorded up to the log's head (a PostgreSQL reader sees the newest events only once
  // older transactions of the cluster have ended: the read waits until it has read up to the head).
  const carried: RefundRecorded[] = []
  const read = await readCategoryUpToHead(deps.store, `refund-${merchantId}-`, {}, (item): E.Either<EventStoreFailure, void> => {
    if (E.isLeft(item) || item.right.type !== 'RefundRecorded') return E.right(undefined)
    const e = decodeDomainEvent(item.right.type, item.right.schemaVersion, item.right.data)
    if (E.isLeft(e)) return E.left(failure(`read ${item.right.streamName}`, new Error(describeEventDecodeError(e.left))))
    if (e.right.type === 'RefundRecorded' && parseRefundStreamName(item.right.streamName) !== null) carried.push(e.right)
    return E.right(undefined)
  })
  if (E.isLeft(read)) return E.left(read.left._tag === 'EventStoreFailure' ? read.left : failure('readCategory', read.left))
  if (read.right._tag === 'ShortOfHead') return E.left(failure('open refund ledgers', new Error('the event log could not be read up to its head in time; try again')))
  const correlationId = `refundable-ledgers-${merchantId}`
  for (const r of carried) {
    const d = r.data
    const reserved = reservationOf(d, 'carried_over')
    const done = await appendLedgerEvent(deps, refundableStreamName(d.merchantId, d.merchantOrderId), reserved, 'any', correlationId)
    if (E.isLeft(done)) return done
  }
  const orders = new Set(carried.map((r) => r.data.merchantOrderId)).size
  const done = await appendLedgerEvent(deps, marker, refundLedgersOpened.make({ merchantId, refundsCarried: carried.length, ordersCarried: orders, openedAt: deps.now() }), 'any', correlationId)
  if (E.isLeft(done)) return done
  known.add(merchantId)
  return E.right(undefined)
}

/** The refund aggregate, refusing to record a refund whose amount the ledger does not hold yet. */
const guardedBy = (ledger: RefundLedger): AggregateKind<RefundCommand, RefundState, RefundEvent, RefundRejection | NeedsReservation> => ({
  ...refundKind,
  decider: {
    ...refundKind.decider,
    decide: (c, s) => {
      const decided = decideRefund(c, s)
      if (E.isLeft(decided)) return decided
      const recorded = decided.right.find((e): e is RefundRecorded => e.type === 'RefundRecorded')
      return recorded !== undefined && !ledger.reserved.has(recorded.data.merchantRefundId) ? E.left({ _tag: 'NeedsReservation', recorded }) : decided
    },
  },
})

/**
 * Decides a refund command against one consistent state of its order: the order's paid amount and,
 * from the order's refundable ledger, what the order's other refunds took back. `command` gets that
 * context (and the refund stream as loaded) and is called again on every retry.
 */
export const recordRefundDecision = async (
  deps: RefundDecisionDeps,
  refundStream: string,
  merchantOrderId: string,
  command: (order: RefundOrderContext, current: Current<RefundState>) => RefundCommand,
  provenance: Provenance,
): Promise<E.Either<HandleError<RefundRejection>, Handled<RefundState, RefundEvent>>> => {
  const ids = parseRefundStreamName(refundStream)
  if (ids === null) return E.left(failure('recordRefundDecision', new Error(`${refundStream} is not a refund stream`)))
  const ready = await openRefundLedgers(deps, ids.merchantId)
  if (E.isLeft(ready)) return E.left(ready.left._tag === 'WrongExpectedVersion' ? failure('open refund ledgers', ready.left) : ready.left)
  const ledgerStream = refundableStreamName(ids.merchantId, merchantOrderId)
  for (let attempt = 1; attempt <= MAX_LEDGER_ATTEMPTS; attempt++) {
    const read = await readLedger(deps.store, ledgerStream)
    if (E.isLeft(read)) return read
    const order = await load(deps, orderKind, orderStreamName(ids.merchantId, merchantOrderId))()
    if (E.isLeft(order)) return order
    const context: RefundOrderContext = { ...refundOrderContext(order.right.state, []), refundedByOthers: reservedByOthers(read.right.ledger, ids.merchantRefundId) }
    const done = await record(deps, guardedBy(read.right.ledger))(refundStream, (l) => command(context, l), provenance)()
    if (E.isRight(done)) return done
    const e = done.left
    if (e._tag !== 'Rejected') return E.left(e)
    const rejection = e.rejection
    if (rejection._tag !== 'NeedsReservation') return E.left({ _tag: 'Rejected', rejection })
    const d = rejection.recorded.data
    const reserved = reservationOf(d, 'decided')
    const appended = await appendLedgerEvent(deps, ledgerStream, reserved, read.right.revision ?? 'no_stream', provenance.cause.correlationId)
    // Reserved, or another decision moved the ledger first: either way, read it again and decide again.
    if (E.isLeft(appended) && appended.left._tag !== 'WrongExpectedVersion') return E.left(appended.left)
  }
  return E.left({ _tag: 'TooMuchContention', stream: ledgerStream, attempts: MAX_LEDGER_ATTEMPTS })
}
