import * as t from 'io-ts'
import { bangkokDateOf, formatCalendarDate } from '../../bangkok-time.ts'
import { escapeRefusedCharacters } from '../../gateway/text-rules.ts'
import { Instant, PositiveInt } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import { keyOf } from '../natural-key.ts'

/**
 * The console refused sign-ins from a client address for a while: too many wrong tokens came from it
 * within `windowSeconds` (`failures` of them). Kept in the stream of its Bangkok day
 * (`console-sign-in-<YYYY-MM-DD>`), apart from every order, refund and reconciliation stream.
 */
const V1 = t.strict(
  {
    address: t.string,
    failures: PositiveInt,
    windowSeconds: PositiveInt,
    lockedAt: Instant,
    lockedUntil: Instant,
  },
  'ConsoleSignInLockedOutV1',
)

export const consoleSignInLockedOut = defineEvent('ConsoleSignInLockedOut', { 1: V1 })
export type ConsoleSignInLockedOutData = t.TypeOf<typeof V1>
export type ConsoleSignInLockedOut = DomainEventOf<'ConsoleSignInLockedOut', ConsoleSignInLockedOutData>

/** `console-sign-in-<YYYY-MM-DD>`, the day in Asia/Bangkok. */
export const consoleSignInStreamName = (at: Date): string => `console-sign-in-${formatCalendarDate(bangkokDateOf(at))}`

/** One event per address and moment of lockout. */
export const consoleSignInNaturalKey = (stream: string, e: ConsoleSignInLockedOut): string => keyOf(stream, e.type, e.data.address, e.data.lockedAt.toISOString())

/** What is kept of a client address, at most (an IPv6 address with a zone fits). */
const ADDRESS_LIMIT = 64

export const signInLockedOut = (l: { readonly address: string; readonly failures: number; readonly windowSeconds: number; readonly lockedAt: Date; readonly lockedUntil: Date }): ConsoleSignInLockedOut => {
  const address = escapeRefusedCharacters(l.address)
  return consoleSignInLockedOut.make({
    address: address.length <= ADDRESS_LIMIT ? address : address.slice(0, ADDRESS_LIMIT),
    failures: Math.max(1, Math.floor(l.failures)),
    windowSeconds: Math.max(1, Math.floor(l.windowSeconds)),
    lockedAt: l.lockedAt,
    lockedUntil: l.lockedUntil,
  })
}
