import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { StatusCode } from './fields.ts'
import { oneOf, textWith } from './text-codecs.ts'

/*
 * States: the spec names only WP, PI and PS for payments and RS for refunds ("complete list: not
 * shown"). Our default (ARCHITECTURE.md): any other code is kept as observed and classified by a
 * configurable table; a code the table does not know is non-final and flagged for review, never dropped.
 */

/** Where a status leaves the money: still open, or final one way or the other. */
export const StatusOutcome = oneOf('StatusOutcome', ['pending', 'succeeded', 'failed'])
export type StatusOutcome = t.TypeOf<typeof StatusOutcome>

export const StatusEntry = t.type({ meaning: textWith('meaning', [], true), outcome: StatusOutcome }, 'StatusEntry')
export type StatusEntry = t.TypeOf<typeof StatusEntry>

/** Status code (2 characters) → meaning and outcome. */
export type StatusTable = Readonly<Record<string, StatusEntry>>

const isStatusTable = (u: unknown): u is StatusTable =>
  t.UnknownRecord.is(u) && Object.entries(u).every(([code, entry]) => StatusCode.is(code) && StatusEntry.is(entry))

/**
 * Codec for a configured table of extra codes. Written out because `t.record` with a refined key
 * silently drops keys that fail, where a configuration error must be reported.
 */
export const StatusTableCodec = new t.Type<StatusTable, StatusTable, unknown>(
  'StatusTable',
  isStatusTable,
  (u, c) => {
    if (!t.UnknownRecord.is(u)) return t.failure(u, c, 'must be an object')
    const errors: t.ValidationError[] = []
    const table: Record<string, StatusEntry> = {}
    for (const [code, entry] of Object.entries(u)) {
      const context = t.appendContext(c, code, StatusEntry, entry)
      if (!StatusCode.is(code)) errors.push({ value: code, context, message: 'must be a 2-character status code such as WP or PS' })
      const decoded = StatusEntry.validate(entry, context)
      if (E.isLeft(decoded)) errors.push(...decoded.left)
      else if (StatusCode.is(code)) table[code] = decoded.right
    }
    return errors.length > 0 ? t.failures(errors) : t.success(table)
  },
  t.identity,
)

export type StatusClassification = {
  readonly code: string
  readonly meaning: string
  readonly outcome: StatusOutcome
  /** A final status never regresses (ARCHITECTURE.md). */
  readonly final: boolean
  /** The table does not know this code: keep it, treat it as non-final, and have a person look at it. */
  readonly needsReview: boolean
}

/** Payment statuses the spec defines (States, "Payment status"). */
export const DEFAULT_PAYMENT_STATUS_TABLE: StatusTable = {
  WP: { meaning: 'waiting for payment (after a direct payment create)', outcome: 'pending' },
  PI: { meaning: 'checkout created (after checkout apply)', outcome: 'pending' },
  PS: { meaning: 'paid', outcome: 'succeeded' },
}

/** Refund statuses the spec defines (States, "Refund status"). */
export const DEFAULT_REFUND_STATUS_TABLE: StatusTable = {
  RS: { meaning: 'refund succeeded', outcome: 'succeeded' },
}

const classify = (table: StatusTable, code: string): StatusClassification => {
  // Object.hasOwn: a code such as "__proto__" or "constructor" must not find Object.prototype members.
  const entry = Object.hasOwn(table, code) ? table[code] : undefined
  if (entry === undefined) return { code, meaning: 'unknown status code', outcome: 'pending', final: false, needsReview: true }
  return { code, meaning: entry.meaning, outcome: entry.outcome, final: entry.outcome !== 'pending', needsReview: false }
}

/** Classifies an observed `order_status` with `table` (e.g. `DEFAULT_PAYMENT_STATUS_TABLE`). */
export const classifyPaymentStatus = (table: StatusTable, code: string): StatusClassification => classify(table, code)

/** Classifies an observed `refund_status` with `table` (e.g. `DEFAULT_REFUND_STATUS_TABLE`). */
export const classifyRefundStatus = (table: StatusTable, code: string): StatusClassification => classify(table, code)

/**
 * `defaults` plus configured codes. The codes the spec defines keep their meaning: redefining one is an
 * error (one message per code), so a configuration cannot turn `PS` into a non-final status.
 */
export const extendStatusTable = (defaults: StatusTable, extra: StatusTable): E.Either<ReadonlyArray<string>, StatusTable> => {
  const clashes = Object.keys(extra).filter((code) => Object.hasOwn(defaults, code))
  return clashes.length > 0
    ? E.left(clashes.map((code) => `status ${code} is defined by the gateway spec and cannot be redefined`))
    : E.right({ ...defaults, ...extra })
}

/** States, "Subscription status" (`recurring_bill_status`, up to 8 characters). */
export const SubscriptionStatus = oneOf('SubscriptionStatus', ['CREATED', 'ACTIVE', 'SUSPEND'])
export type SubscriptionStatus = t.TypeOf<typeof SubscriptionStatus>

export const SUBSCRIPTION_STATUS_MEANINGS: Readonly<Record<SubscriptionStatus, string>> = {
  CREATED: 'created by subscription create',
  ACTIVE: 'active (the status an accepted update reports)',
  SUSPEND: 'suspended after 3 consecutive failed charges (retry = Y)',
}
