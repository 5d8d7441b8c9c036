/**
 * Announcements: live delivery without a read after the notification.
 *
 * An append made in one statement of its own transaction may notify its own events (`announce`,
 * migration 0006) instead of a bare wake-up. The payload is the HMAC-SHA-256 of its body (64 hex
 * digits, with the installation's key, read from `<schema>.announce_key`), then the body, JSON:
 *   t  the appending transaction's id X;
 *   x  the xmax of a snapshot S taken after X's insert, in X;
 *   r  the ids running at S that are older than X;
 *   m  the (tx id, position) of the last event older than X visible at S, or null;
 *   e  X's events, in position order, as rows (position, stream, revision, id, type, schema version,
 *      data, metadata, recorded at in epoch ms).
 * A body with only `t` is a bare wake-up (the events did not fit in a notification).
 *
 * When a subscriber may deliver X's events straight from the payload. It keeps `resolvedBelow`: every
 * event of a transaction below it that will ever commit has been delivered (or lies at or before its
 * starting position). A complete read below a horizon H sets it to H; delivering X's events from an
 * announcement sets it to X + 1. X's events are next in the global order, (tx id, position), when:
 *   - X ≥ resolvedBelow, and X's events are past the cursor;
 *   - every id in r is below resolvedBelow, and so is every id in [x, X) (ids at or above a snapshot's
 *     xmax are not in its list of running ids, yet may still be running);
 *   - m is null or below resolvedBelow.
 * Why nothing older than X can still be missing: take a transaction W < X with events, W ≥ resolvedBelow.
 * W had its id before X, so at S it was either running (then it is in r or in [x, X), all below
 * resolvedBelow: a contradiction) or ended; if it committed, its events are visible at S, so m ≥ W ≥
 * resolvedBelow: a contradiction again. So X's events come right after everything delivered so far.
 * An id of r or of [x, X) may also be known empty (KnownEmpty): a subscriber that must wait asks which
 * of those ids had ended, before a snapshot of its own, with no event in the log (a transaction of
 * another database, a session that wrote elsewhere: they never announce, and each new one would
 * otherwise cost a read). Such an id is no W of the argument above, so it need not be below
 * resolvedBelow. Anything else (a transaction not known to have ended, a payload not signed by the
 * key, a bare wake-up) falls back to a read below the horizon, as before: an announcement only ever
 * saves a read.
 */
// One namespace import: `crypto.hash` is looked up at run time (older Node has none).
import * as crypto from 'node:crypto'
import { inspect } from 'node:util'

export type Announcement = {
  readonly tx: bigint
  readonly xmax: bigint
  /** The largest id running at S that is older than X, or -1 when none was. */
  readonly newestRunning: bigint
  /** Every id running at S that is older than X (`r`). */
  readonly running: ReadonlyArray<bigint>
  /** The transaction id of the last older event visible at S, or null. */
  readonly lastOlderTx: bigint | null
  /** X's events as rows in the shape of a read: [tx id, position, stream, revision, id, type, schema version, data, metadata, recorded ms]. */
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
}

/** What the subscriber knows: every transaction below `resolvedBelow` is done with; its cursor's transaction and position. */
export type FollowState = { readonly resolvedBelow: bigint; readonly cursorTx: bigint; readonly cursorPosition: bigint }

export type Verdict = 'deliver' | 'stale' | 'wait'

const MAC_HEX = 64
const DIGITS = /^\d{1,20}$/

const isDigits = (v: unknown): v is string => typeof v === 'string' && DIGITS.test(v)

const isRow = (v: unknown): v is ReadonlyArray<unknown> =>
  Array.isArray(v) && v.length === 9 && isDigits(v[0]) && typeof v[1] === 'string' && isDigits(v[2]) && typeof v[3] === 'string' && typeof v[4] === 'string' && isDigits(v[8])

/** SHA-256's block size: an HMAC key is zero-padded to it (RFC 2104). */
const BLOCK = 64

/**
 * The installation's key made ready for checking payloads: its HMAC pads (RFC 2104), computed once.
 * Checking then takes two one-shot SHA-256 digests (`crypto.hash`, Node 20.12 and later; `createHmac`
 * before), not an HMAC object per notification: about 25 µs instead of 40 for a notification that
 * arrives after the process slept (docs/development.md "Live delivery on a shared machine").
 */
export type AnnouncementKey = { readonly ipad: Buffer; readonly opad: Buffer; readonly raw: Buffer }

export const announcementKeyOf = (key: Buffer): AnnouncementKey => {
  const padded = Buffer.alloc(BLOCK)
  ;(key.length > BLOCK ? crypto.createHash('sha256').update(key).digest() : key).copy(padded)
  const prepared = { ipad: Buffer.from(padded.map((b) => b ^ 0x36)), opad: Buffer.from(padded.map((b) => b ^ 0x5c)), raw: Buffer.from(key) }
  // Key material (the key XOR a constant is the key): an object holding it that reaches a log line or
  // JSON shows this instead, as a KeyObject would.
  const hidden = (): string => '[announcement key]'
  Object.defineProperty(prepared, 'toJSON', { value: hidden })
  Object.defineProperty(prepared, inspect.custom, { value: hidden })
  return prepared
}

const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined
// Scratch for the inner digest's input (ipad, then the body) and the outer's (opad, then the inner
// digest), reused: checking is synchronous, and each worker thread has its own module.
let inner = Buffer.allocUnsafe(4 * 1024)
const outer = Buffer.alloc(BLOCK + 32)

/** HMAC-SHA-256 of `body` (UTF-8) with `key`. */
export const macOf = (body: string, key: AnnouncementKey): Buffer => {
  if (oneShot === undefined) return crypto.createHmac('sha256', key.raw).update(body, 'utf8').digest()
  const length = BLOCK + Buffer.byteLength(body, 'utf8')
  if (inner.length < length) inner = Buffer.allocUnsafe(length)
  key.ipad.copy(inner)
  inner.write(body, BLOCK, 'utf8')
  key.opad.copy(outer)
  oneShot('sha256', inner.subarray(0, length), 'buffer').copy(outer, BLOCK)
  return oneShot('sha256', outer, 'buffer')
}

/**
 * The announcement in a notification's payload, or undefined for anything else: an empty payload, a
 * bare wake-up, a payload whose signature does not match `key`, or a body not of the shape above.
 * (Prepare the key once with `announcementKeyOf`; raw bytes are prepared at every call.)
 */
export const readAnnouncement = (payload: string, key: Buffer | AnnouncementKey): Announcement | undefined => {
  if (payload.length <= MAC_HEX) return undefined
  const body = payload.slice(MAC_HEX)
  const expected = macOf(body, Buffer.isBuffer(key) ? announcementKeyOf(key) : key)
  const given = Buffer.from(payload.slice(0, MAC_HEX), 'hex')
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined
  const b = parsed as { t?: unknown; x?: unknown; r?: unknown; m?: unknown; e?: unknown }
  if (!isDigits(b.t) || !isDigits(b.x) || !Array.isArray(b.r) || !Array.isArray(b.e) || b.e.length === 0) return undefined
  if (!b.r.every(isDigits)) return undefined
  if (b.m !== null && !(Array.isArray(b.m) && b.m.length === 2 && isDigits(b.m[0]) && isDigits(b.m[1]))) return undefined
  if (!b.e.every(isRow)) return undefined
  const tx = b.t
  let newestRunning = -1n
  const running: bigint[] = []
  for (const r of b.r) {
    const id = BigInt(r)
    running.push(id)
    if (id > newestRunning) newestRunning = id
  }
  const lastOlder = b.m === null ? null : BigInt(b.m[0] as string)
  return { tx: BigInt(tx), xmax: BigInt(b.x), newestRunning, running, lastOlderTx: lastOlder, rows: b.e.map((row: ReadonlyArray<unknown>) => [tx, ...row]) }
}

/** The last position among an announcement's rows. */
export const lastPosition = (a: Announcement): bigint => BigInt(String(a.rows.at(-1)?.[1] ?? '0'))

/**
 * Ids known never to hold an event: each had ended, with no event in the log, as a snapshot taken
 * after its end showed (a transaction of another database, a session that wrote elsewhere, one rolled
 * back). An announcement need not wait for them: a transaction W < X with events is never among them,
 * so the module comment's argument holds with them counted as resolved.
 */
export type KnownEmpty = { readonly has: (id: bigint) => boolean }

const NONE_KNOWN: KnownEmpty = { has: () => false }

/** The most ids of [x, X) a subscriber asks about (`blockersOf`); a wider range waits as before. */
export const MAX_BLOCKER_SPAN = 64n

/**
 * The ids `a` waits for that are not resolved nor known empty: those of r, and of [x, X), at or above
 * `resolvedBelow`. Undefined when it waits for something else (its own transaction's cursor, an older
 * event, a range wider than MAX_BLOCKER_SPAN): asking about ids would not settle it.
 */
export const blockersOf = (a: Announcement, s: FollowState, known: KnownEmpty = NONE_KNOWN): ReadonlyArray<bigint> | undefined => {
  if (a.tx === s.cursorTx || (a.lastOlderTx !== null && a.lastOlderTx >= s.resolvedBelow)) return undefined
  const ids: bigint[] = []
  if (a.newestRunning >= s.resolvedBelow) for (const id of a.running) if (id >= s.resolvedBelow && !known.has(id)) ids.push(id)
  if (a.xmax < a.tx && a.tx > s.resolvedBelow) {
    const from = a.xmax > s.resolvedBelow ? a.xmax : s.resolvedBelow
    if (a.tx - from > MAX_BLOCKER_SPAN) return undefined
    for (let id = from; id < a.tx; id++) if (!known.has(id) && !ids.includes(id)) ids.push(id)
  }
  return ids
}

/** Whether the subscriber may deliver `a` now, has delivered its events already, or must wait (see the module comment). */
export const verdictOf = (a: Announcement, s: FollowState, known: KnownEmpty = NONE_KNOWN): Verdict => {
  if (a.tx < s.resolvedBelow) return 'stale'
  if (a.tx < s.cursorTx || (a.tx === s.cursorTx && lastPosition(a) <= s.cursorPosition)) return 'stale'
  if (a.tx === s.cursorTx) return 'wait'
  if (a.lastOlderTx !== null && a.lastOlderTx >= s.resolvedBelow) return 'wait'
  const running = a.newestRunning >= s.resolvedBelow
  const unnamed = a.xmax < a.tx && a.tx > s.resolvedBelow
  if (!running && !unnamed) return 'deliver'
  const blockers = blockersOf(a, s, known)
  return blockers !== undefined && blockers.length === 0 ? 'deliver' : 'wait'
}
