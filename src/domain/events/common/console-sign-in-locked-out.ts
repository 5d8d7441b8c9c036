import * as t from 'io-ts'
import { bangkokDateOf, formatCalendarDate } from '../../bangkok-time.ts'
import { escapeRefusedCharacters } from '../../gateway/text-rules.ts'
import { oneOf } from '../../gateway/text-codecs.ts'
import { Instant, nullable, PositiveInt } from '../codecs.ts'
import { defineEvent, type DomainEventOf } from '../define-event.ts'
import { keyOf } from '../natural-key.ts'

/**
 * The console refused sign-ins for a while: too many wrong tokens or passwords came from a client
 * address (`lockedBy` address), or too many wrong passwords for one account from anywhere (`lockedBy`
 * account): `failures` of them, each within `windowSeconds` of the one before (until the release after
 * 2026-11-29, within `windowSeconds` of the first). Kept in the stream of its Bangkok day
 * (`console-sign-in-<YYYY-MM-DD>`), apart from every order, refund and reconciliation stream.
 * v2 names the user (the account locked, or the known user whose wrong password locked the address;
 * null when none was named) and what was locked.
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

const V2 = t.strict(
  {
    address: t.string,
    user: nullable(t.string),
    lockedBy: oneOf('LockedBy', ['address', 'account'] as const),
    failures: PositiveInt,
    windowSeconds: PositiveInt,
    lockedAt: Instant,
    lockedUntil: Instant,
  },
  'ConsoleSignInLockedOutV2',
)

export const consoleSignInLockedOut = defineEvent('ConsoleSignInLockedOut', { 1: V1, 2: V2 }, { 1: (d) => ({ ...d, user: null, lockedBy: 'address' as const }) })
export type ConsoleSignInLockedOutData = t.TypeOf<typeof V2>
export type ConsoleSignInLockedOut = DomainEventOf<'ConsoleSignInLockedOut', ConsoleSignInLockedOutData>

/** `console-sign-in-<YYYY-MM-DD>`, the day in Asia/Bangkok. */
export const consoleSignInStreamName = (at: Date): string => `console-sign-in-${formatCalendarDate(bangkokDateOf(at))}`

/** One event per address (or account) and moment of lockout. */
export const consoleSignInNaturalKey = (stream: string, e: ConsoleSignInLockedOut): string =>
  e.data.lockedBy === 'address' ? keyOf(stream, e.type, e.data.address, e.data.lockedAt.toISOString()) : keyOf(stream, e.type, 'account', e.data.user ?? '', e.data.lockedAt.toISOString())

/** What is kept of a client address, at most (an IPv6 address with a zone fits). */
const ADDRESS_LIMIT = 64

/** A client address as events keep it: the refused characters escaped, at most ADDRESS_LIMIT characters. */
export const keptAddress = (raw: string): string => escapeRefusedCharacters(raw).slice(0, ADDRESS_LIMIT)

export const signInLockedOut = (l: {
  readonly address: string
  readonly user?: string | null
  readonly lockedBy?: 'address' | 'account'
  readonly failures: number
  readonly windowSeconds: number
  readonly lockedAt: Date
  readonly lockedUntil: Date
}): ConsoleSignInLockedOut => {
  return consoleSignInLockedOut.make({
    address: keptAddress(l.address),
    user: l.user ?? null,
    lockedBy: l.lockedBy ?? 'address',
    failures: Math.max(1, Math.floor(l.failures)),
    windowSeconds: Math.max(1, Math.floor(l.windowSeconds)),
    lockedAt: l.lockedAt,
    lockedUntil: l.lockedUntil,
  })
}
