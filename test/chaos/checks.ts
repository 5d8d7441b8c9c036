import { paymentObservationKey } from '../../src/domain/order/stream.ts'
import { refundObservationKey } from '../../src/domain/refund/stream.ts'

/**
 * The end-of-run checks that need only what was sent and what the log holds (pure, unit-tested in
 * chaos-checks.unit.test.ts): acknowledged writes missing from the log, facts recorded twice, state
 * moved by a callback whose signature did not verify, and secrets or payer data found in log lines.
 */
export type LoggedEvent = {
  readonly streamName: string
  readonly type: string
  readonly eventId: string
  readonly data: unknown
  readonly metadata: unknown
}

export type AckedWrites = {
  readonly merchantId: string
  /** merchant_order_id → the status of the 2xx answer to its create. */
  readonly creates: ReadonlyMap<string, number>
  readonly refundsTracked: ReadonlySet<string>
  /** Notifications answered 200 SUCCESS (the sandbox's deliveries and the suite's own). */
  readonly notifications: ReadonlyArray<Readonly<Record<string, string>>>
}

export type Lost = { readonly what: string; readonly id: string; readonly missing: string }

const field = (o: unknown, k: string): unknown => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined)

const byStream = (log: ReadonlyArray<LoggedEvent>): Map<string, LoggedEvent[]> => {
  const m = new Map<string, LoggedEvent[]>()
  for (const e of log) {
    const list = m.get(e.streamName)
    if (list === undefined) m.set(e.streamName, [e])
    else list.push(e)
  }
  return m
}

/** Every acknowledged write, looked up in the log: what is not there was lost. */
export const lostWrites = (log: ReadonlyArray<LoggedEvent>, acked: AckedWrites): ReadonlyArray<Lost> => {
  const streams = byStream(log)
  const has = (stream: string, type: string, key?: string): boolean =>
    (streams.get(stream) ?? []).some((e) => e.type === type && (key === undefined || field(e.data, 'observationKey') === key))
  const lost: Lost[] = []
  for (const [moid, status] of acked.creates) {
    const stream = `order-${acked.merchantId}-${moid}`
    const needed = ['OrderCreated', 'PaymentRequested', ...(status === 201 ? ['PaymentRequestAccepted'] : [])]
    for (const type of needed) if (!has(stream, type)) lost.push({ what: `payment create answered ${String(status)}`, id: moid, missing: `${type} in ${stream}` })
  }
  for (const mrid of acked.refundsTracked) {
    const stream = `refund-${acked.merchantId}-${mrid}`
    if (!has(stream, 'RefundTracked')) lost.push({ what: 'refund tracking answered 2xx', id: mrid, missing: `RefundTracked in ${stream}` })
  }
  const seen = new Set<string>()
  for (const n of acked.notifications) {
    const kind = n['notify_type']
    const id = kind === 'REFUND' ? (n['merchant_refund_id'] ?? '') : (n['merchant_order_id'] ?? '')
    const stream = kind === 'REFUND' ? `refund-${acked.merchantId}-${id}` : `order-${acked.merchantId}-${id}`
    const key =
      kind === 'REFUND'
        ? refundObservationKey('notification', { merchant_id: n['merchant_id'] ?? '', merchant_refund_id: id, refund_order_id: n['refund_order_id'] ?? '', refund_status: n['refund_status'] ?? '' })
        : paymentObservationKey('notification', { merchant_id: n['merchant_id'] ?? '', merchant_order_id: id, order_id: n['order_id'] ?? '', order_status: n['order_status'] ?? '' })
    if (seen.has(key)) continue
    seen.add(key)
    if (!has(stream, 'NotificationReceived', key)) lost.push({ what: `${kind ?? '?'} notification answered 200 SUCCESS`, id, missing: `NotificationReceived ${key} in ${stream}` })
  }
  return lost
}

export type Duplicate = { readonly stream: string; readonly fact: string; readonly events: number }

/** Facts that happen once per stream (the create's request cycle, a refund tracked or recorded). */
const ONCE_PER_STREAM: ReadonlySet<string> = new Set(['OrderCreated', 'PaymentRequested', 'PaymentRequestAccepted', 'PaymentRequestFailed', 'PaymentOutcomeUnknown', 'RefundTracked', 'RefundRecorded', 'SubscriptionRequested', 'SubscriptionCreated'])
/** Observations: one per observation key (source + gateway ids + status), however often it arrives. */
const ONCE_PER_OBSERVATION: ReadonlySet<string> = new Set(['StatusObserved', 'NotificationReceived', 'RedirectReceived', 'RefundStatusObserved', 'DiscrepancyObserved', 'QueryNotFound'])

/** The same fact recorded more than once (by a second event id), and event ids stored twice. */
export const duplicateEvents = (log: ReadonlyArray<LoggedEvent>): ReadonlyArray<Duplicate> => {
  const counts = new Map<string, { stream: string; fact: string; n: number }>()
  const bump = (stream: string, fact: string): void => {
    const k = `${stream}\u0000${fact}`
    const c = counts.get(k)
    if (c === undefined) counts.set(k, { stream, fact, n: 1 })
    else c.n += 1
  }
  for (const e of log) {
    bump('(log)', `event id ${e.eventId}`)
    if (ONCE_PER_STREAM.has(e.type)) bump(e.streamName, e.type)
    else if (ONCE_PER_OBSERVATION.has(e.type)) bump(e.streamName, `${e.type} ${String(field(e.data, 'observationKey'))}`)
  }
  return [...counts.values()].filter((c) => c.n > 1).map((c) => ({ stream: c.stream, fact: c.fact, events: c.n }))
}

/** Events that change state (a status, a refund) recorded from a callback whose signature did not verify. */
const STATE_CHANGES: ReadonlySet<string> = new Set(['StatusObserved', 'RefundStatusObserved', 'RefundRecorded', 'SubscriptionActivated', 'SubscriptionCharged', 'SubscriptionChargeFailed', 'SubscriptionSuspended'])

export const forgedStateChanges = (log: ReadonlyArray<LoggedEvent>): ReadonlyArray<LoggedEvent> =>
  log.filter((e) => STATE_CHANGES.has(e.type) && field(field(e.metadata, 'signature'), 'verified') === false)

/**
 * How often one rejected callback was recorded: the events per distinct callback. A quarantined
 * callback is known by its fingerprint (a hash of what arrived), so a replayed forgery must be one
 * event (issue 17 part 1); a `CallbackRejected` of an older log by its stream and payload.
 */
export const rejectedReplays = (log: ReadonlyArray<LoggedEvent>): { readonly events: number; readonly distinctBodies: number } => {
  const rejected = log.filter((e) => e.type === 'CallbackRejected' || e.type === 'CallbackQuarantined')
  const bodies = new Set(rejected.map((e) => (e.type === 'CallbackQuarantined' ? `q\u0000${String(field(e.data, 'fingerprint'))}` : `${e.streamName}\u0000${JSON.stringify(field(e.data, 'payload') ?? null)}`)))
  return { events: rejected.length, distinctBodies: bodies.size }
}

export type Needle = { readonly what: string; readonly value: string }
export type Leak = { readonly what: string; readonly where: string; readonly line: number }

/** The strings that identify a PEM private key in a log: each full line of its base64 body. */
export const pemNeedles = (what: string, pem: string): ReadonlyArray<Needle> =>
  pem
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length >= 40 && !l.startsWith('-----'))
    .map((value) => ({ what, value }))

/** Needles shorter than this are not sought (too many innocent matches). */
const LEAK_KEY = 6

/**
 * Every needle found in a log: where (file and line). A value that is all digits must stand alone
 * (no digit right before or after it), so that a phone number is not "found" inside a longer number.
 */
export const findLeaks = (logs: ReadonlyArray<{ readonly name: string; readonly text: string }>, needles: ReadonlyArray<Needle>): ReadonlyArray<Leak> => {
  const usable = needles.filter((n) => n.value.length >= LEAK_KEY)
  if (usable.length === 0) return []
  // Needles by their first LEAK_KEY characters: each line is walked once, looking each window up, so the
  // cost grows with the log's length, not with log length × needles (a full run seeks ~15,000 needles
  // in megabytes of logs; one regular expression of them all took minutes).
  const byKey = new Map<string, Array<{ readonly n: Needle; readonly digits: boolean }>>()
  for (const n of usable) {
    const key = n.value.slice(0, LEAK_KEY)
    const entry = { n, digits: /^\d+$/.test(n.value) }
    const list = byKey.get(key)
    if (list === undefined) byKey.set(key, [entry])
    else list.push(entry)
  }
  const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9'
  const leaks: Leak[] = []
  for (const log of logs) {
    log.text.split('\n').forEach((line, i) => {
      const found = new Set<Needle>()
      for (let at = 0; at + LEAK_KEY <= line.length; at++) {
        const candidates = byKey.get(line.slice(at, at + LEAK_KEY))
        if (candidates === undefined) continue
        for (const { n, digits } of candidates) {
          if (found.has(n) || !line.startsWith(n.value, at)) continue
          // a number counts only as a whole number, not as digits inside a longer one
          if (digits && (isDigit(line[at - 1]) || isDigit(line[at + n.value.length]))) continue
          found.add(n)
        }
      }
      if (found.size > 0) for (const n of usable) if (found.has(n)) leaks.push({ what: n.what, where: log.name, line: i + 1 })
    })
  }
  return leaks
}

/** min / median / max of a list of durations (ms); null when empty. */
export const spread = (xs: ReadonlyArray<number>): { readonly min: number; readonly median: number; readonly max: number } | null => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  const median = s.length % 2 === 1 ? (s[mid] ?? 0) : Math.round(((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2)
  return { min: s[0] ?? 0, median, max: s.at(-1) ?? 0 }
}
