import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { Logger } from '../logger.ts'
import { signedForm, type Signer } from '../domain/gateway/signing.ts'

/*
 * Asynchronous notifications to `notify_url` (spec Events 1; payload and acknowledgement "not shown").
 * Our default (ARCHITECTURE.md): a JSON POST of the fields plus `notify_type`, with `sign_type` = RSA
 * and `sign` over all the other fields, signed with the gateway key. The receiver acknowledges with
 * HTTP 200 and the body `SUCCESS`; anything else is a failed attempt, retried with capped
 * exponential backoff. Faults (issue 3, point 9) make the sandbox drop, duplicate, reorder and delay
 * deliveries so that merchants can prove their receivers are idempotent and order-independent.
 */

export type NotificationKind = 'PAYMENT' | 'REFUND' | 'SUBSCRIPTION'

export type DeliveryAttempt = {
  /** When the attempt started, in sandbox time (ISO UTC). */
  readonly at: string
  readonly status: number | null
  /** The receiver's answer (the first 1000 characters). */
  readonly body: string | null
  readonly error: string | null
  readonly acknowledged: boolean
  readonly durationMs: number
  /** A second, identical POST sent by the `duplicate` fault. */
  readonly duplicate: boolean
  /** Not sent at all: lost by the `drop` fault. */
  readonly dropped: boolean
}

export type NotificationRecord = {
  readonly id: string
  readonly kind: NotificationKind
  readonly url: string
  /** The JSON body as sent: the fields, `notify_type`, `sign_type` and `sign`. */
  readonly fields: Readonly<Record<string, string>>
  readonly createdAt: string
  /** `dropped`: gave up, and the receiver never saw a single attempt (all lost to the drop fault). */
  readonly state: 'pending' | 'delivered' | 'failed' | 'dropped'
  readonly attempts: ReadonlyArray<DeliveryAttempt>
}

export type NotificationFaults = {
  /** The next N delivery attempts are silently not sent (each is one lost attempt; the retry still happens). */
  readonly drop?: number
  /** The next N notifications are delivered twice (a second identical POST after the acknowledged one). */
  readonly duplicate?: number
  /** Hold the next notification and send it after the one that follows (or after maxDelayMs if none follows). */
  readonly reorder?: boolean
  /** Latency added before every delivery attempt, until set back to 0. */
  readonly delayMs?: number
}

export type Notifier = {
  /** Records, signs and queues a notification; delivery is asynchronous. */
  readonly send: (n: { readonly kind: NotificationKind; readonly url: string; readonly fields: Readonly<Record<string, string | undefined>> }) => NotificationRecord
  /** Every notification in the order it was sent, optionally only those to one URL or of one kind. */
  readonly list: (filter?: { readonly url?: string; readonly kind?: NotificationKind }) => ReadonlyArray<NotificationRecord>
  readonly get: (id: string) => NotificationRecord | undefined
  /** Sets the faults named in `f`; faults not named keep their current setting. */
  readonly setFaults: (f: NotificationFaults) => void
  /** The faults still to come (counts left, whether a reorder is armed, the delay). */
  readonly faults: () => Required<NotificationFaults>
  /** Resolves when nothing is pending. */
  readonly idle: () => Promise<void>
  /** Forgets every notification and fault; deliveries in flight are abandoned. */
  readonly reset: () => void
  /** Abandons deliveries in flight and refuses new ones. */
  readonly close: () => Promise<void>
}

export type NotifierDeps = { readonly signer: Signer; readonly log: Logger; readonly now: () => Date }

export type NotifierConfig = {
  /** Attempts per notification, the first included. */
  readonly maxAttempts: number
  /** The wait after the first failed attempt; it doubles after each further failure… */
  readonly baseDelayMs: number
  /** …up to this cap. */
  readonly maxDelayMs: number
  /** How long one attempt may take, answer body included. */
  readonly timeoutMs: number
}

/**
 * Our defaults (the spec shows no retry policy): 6 attempts, waiting 1, 2, 4, 8 and 16 s between them
 * (about half a minute in all), 10 s per attempt.
 */
export const DEFAULT_NOTIFIER_CONFIG: NotifierConfig = { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000, timeoutMs: 10_000 }

/** The body a receiver must answer (with HTTP 200) to acknowledge a notification. */
export const ACKNOWLEDGEMENT = 'SUCCESS'

/** The wait after the `failedAttempts`-th consecutive failure: base × 2^(n−1), capped. */
export const backoffDelayMs = (config: NotifierConfig, failedAttempts: number): number =>
  Math.min(config.maxDelayMs, config.baseDelayMs * 2 ** Math.max(0, failedAttempts - 1))

const BODY_LIMIT = 1000

type Outcome = Omit<DeliveryAttempt, 'duplicate' | 'dropped'>

const describeError = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  // fetch reports network failures as TypeError('fetch failed') with the socket error as its cause.
  const cause = e.cause
  if (cause instanceof Error) {
    const code = 'code' in cause && typeof cause.code === 'string' ? `${cause.code}: ` : ''
    return `connection error: ${code}${cause.message}`
  }
  return `connection error: ${e.message}`
}

/** One POST. Resolves with what happened, or `stopped` when `stop` aborted it (reset or close). */
const postOnce = async (url: string, body: string, timeoutMs: number, stop: AbortSignal, now: () => Date): Promise<Outcome | 'stopped'> => {
  const at = now().toISOString()
  const started = performance.now()
  const timeout = AbortSignal.timeout(timeoutMs)
  const elapsed = (): number => Math.round(performance.now() - started)
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'satang-sandbox-notifier' },
      body,
      // A redirect is not an acknowledgement: the receiver must answer 200 itself.
      redirect: 'manual',
      signal: AbortSignal.any([stop, timeout]),
    })
    const text = await res.text()
    const acknowledged = res.status === 200 && text === ACKNOWLEDGEMENT
    return { at, status: res.status, body: text.slice(0, BODY_LIMIT), error: acknowledged ? null : `not acknowledged: expected HTTP 200 with body ${ACKNOWLEDGEMENT}`, acknowledged, durationMs: elapsed() }
  } catch (e) {
    if (stop.aborted) return 'stopped'
    const error = timeout.aborted ? `timeout: no complete answer within ${String(timeoutMs)} ms` : describeError(e)
    return { at, status: null, body: null, error, acknowledged: false, durationMs: elapsed() }
  }
}

/** Waits `ms`; false when `stop` aborted the wait. */
const pause = (ms: number, stop: AbortSignal): Promise<boolean> =>
  new Promise((resolve) => {
    if (stop.aborted) return resolve(false)
    const onAbort = (): void => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      stop.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    stop.addEventListener('abort', onAbort, { once: true })
  })

const nonNegative = (name: string, value: number, integer: boolean): number => {
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be ${integer ? 'a whole number' : 'a number'} of at least 0, got ${String(value)}`)
  }
  return value
}

const checkConfig = (c: NotifierConfig): void => {
  if (!Number.isInteger(c.maxAttempts) || c.maxAttempts < 1) throw new RangeError(`notifier: maxAttempts must be a whole number of at least 1, got ${String(c.maxAttempts)}`)
  nonNegative('notifier: baseDelayMs', c.baseDelayMs, false)
  if (!(c.maxDelayMs >= c.baseDelayMs)) throw new RangeError(`notifier: maxDelayMs (${String(c.maxDelayMs)}) must be at least baseDelayMs (${String(c.baseDelayMs)})`)
  if (!Number.isFinite(c.timeoutMs) || c.timeoutMs <= 0) throw new RangeError(`notifier: timeoutMs must be more than 0, got ${String(c.timeoutMs)}`)
}

const isHttpUrl = (url: string): boolean => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)

type Entry = {
  readonly record: Omit<NotificationRecord, 'state' | 'attempts'>
  state: NotificationRecord['state']
  readonly attempts: DeliveryAttempt[]
}

/** How one notification is delivered: gated (held by reorder), duplicated, releasing a held one. */
type Plan = {
  readonly gate: Promise<void> | undefined
  readonly duplicate: boolean
  readonly afterFirstAttempt: (() => void) | undefined
  readonly stop: AbortSignal
}

const NO_FAULTS: Required<NotificationFaults> = { drop: 0, duplicate: 0, reorder: false, delayMs: 0 }

/** The sandbox's notification sender (issue 3, points 4 and 9). Retries run on real timers. */
export const makeNotifier = (deps: NotifierDeps, config: NotifierConfig): Notifier => {
  checkConfig(config)
  const log = deps.log.child({ component: 'sandbox-notifier' })
  const entries = new Map<string, Entry>()
  const tasks = new Set<Promise<void>>()
  let faults = { ...NO_FAULTS }
  let stopper = new AbortController()
  let held: { readonly release: () => void; readonly timer: NodeJS.Timeout } | null = null
  let closed = false

  const snapshot = (e: Entry): NotificationRecord => ({ ...e.record, state: e.state, attempts: [...e.attempts] })

  const releaseHeld = (): void => {
    if (held === null) return
    clearTimeout(held.timer)
    held.release()
    held = null
  }

  const attempt = async (e: Entry, body: string, stop: AbortSignal): Promise<DeliveryAttempt | 'stopped'> => {
    if (faults.drop > 0) {
      faults.drop -= 1
      return { at: deps.now().toISOString(), status: null, body: null, error: 'dropped by fault injection: not sent', acknowledged: false, durationMs: 0, duplicate: false, dropped: true }
    }
    const outcome = await postOnce(e.record.url, body, config.timeoutMs, stop, deps.now)
    return outcome === 'stopped' ? outcome : { ...outcome, duplicate: false, dropped: false }
  }

  const deliver = async (e: Entry, plan: Plan): Promise<void> => {
    const { id, kind, url } = e.record
    try {
      if (plan.gate !== undefined) await plan.gate
      const body = JSON.stringify(e.record.fields)
      for (let n = 1; n <= config.maxAttempts; n++) {
        if (plan.stop.aborted) return
        if (faults.delayMs > 0 && !(await pause(faults.delayMs, plan.stop))) return
        const result = await attempt(e, body, plan.stop)
        if (n === 1) plan.afterFirstAttempt?.()
        if (result === 'stopped') return
        e.attempts.push(result)
        log.debug({ notificationId: id, kind, url, attempt: n, status: result.status, error: result.error }, 'notification attempt')
        if (result.acknowledged) {
          e.state = 'delivered'
          log.info({ notificationId: id, kind, url, attempts: n }, 'notification delivered')
          if (plan.duplicate) {
            const again = await postOnce(url, body, config.timeoutMs, plan.stop, deps.now)
            if (again !== 'stopped') e.attempts.push({ ...again, duplicate: true, dropped: false })
          }
          return
        }
        if (n < config.maxAttempts && !(await pause(backoffDelayMs(config, n), plan.stop))) return
      }
      e.state = e.attempts.every((a) => a.dropped) ? 'dropped' : 'failed'
      log.warn({ notificationId: id, kind, url, attempts: e.attempts.length, state: e.state }, 'notification given up')
    } finally {
      // A held notification waits for this one's first attempt; never leave it waiting.
      plan.afterFirstAttempt?.()
    }
  }

  const track = (task: Promise<void>): void => {
    tasks.add(task)
    void task.finally(() => tasks.delete(task))
  }

  const stopAll = (): void => {
    stopper.abort()
    stopper = new AbortController()
    releaseHeld()
  }

  return {
    send: ({ kind, url, fields }) => {
      if (closed) throw new Error('notifier is closed: no further notifications are sent')
      // Absent and empty fields are dropped before signing (satang-canonical-v1 skips them anyway; the body matches what is signed).
      const present = Object.fromEntries(Object.entries(fields).filter((kv): kv is [string, string] => kv[1] !== undefined && kv[1] !== ''))
      const signed = Object.freeze(signedForm(deps.signer, { ...present, notify_type: kind }))
      const e: Entry = { record: { id: randomUUID(), kind, url, fields: signed, createdAt: deps.now().toISOString() }, state: 'pending', attempts: [] }
      entries.set(e.record.id, e)

      if (!isHttpUrl(url)) {
        // Retrying cannot help an address no request can be sent to.
        e.attempts.push({ at: e.record.createdAt, status: null, body: null, error: 'notify_url is not an absolute http or https URL', acknowledged: false, durationMs: 0, duplicate: false, dropped: false })
        e.state = 'failed'
        return snapshot(e)
      }

      const duplicate = faults.duplicate > 0
      if (duplicate) faults.duplicate -= 1
      let gate: Promise<void> | undefined
      let afterFirstAttempt: (() => void) | undefined
      if (held !== null) {
        // This is the notification that follows a held one: the held one goes out after it.
        const h = held
        held = null
        clearTimeout(h.timer)
        afterFirstAttempt = h.release
      } else if (faults.reorder) {
        faults.reorder = false
        gate = new Promise<void>((resolve) => {
          held = { release: resolve, timer: setTimeout(releaseHeld, config.maxDelayMs) }
        })
      }
      track(deliver(e, { gate, duplicate, afterFirstAttempt, stop: stopper.signal }))
      return snapshot(e)
    },
    list: (filter = {}) =>
      [...entries.values()]
        .filter((e) => (filter.url === undefined || e.record.url === filter.url) && (filter.kind === undefined || e.record.kind === filter.kind))
        .map(snapshot),
    get: (id) => {
      const e = entries.get(id)
      return e === undefined ? undefined : snapshot(e)
    },
    setFaults: (f) => {
      const next = { ...faults }
      if (f.drop !== undefined) next.drop = nonNegative('faults.drop', f.drop, true)
      if (f.duplicate !== undefined) next.duplicate = nonNegative('faults.duplicate', f.duplicate, true)
      if (f.delayMs !== undefined) next.delayMs = nonNegative('faults.delayMs', f.delayMs, false)
      if (f.reorder !== undefined) next.reorder = f.reorder
      faults = next
      // Turning reorder off lets a held notification go at once.
      if (f.reorder === false) releaseHeld()
    },
    faults: () => ({ ...faults }),
    idle: async () => {
      while (tasks.size > 0) await Promise.all([...tasks])
    },
    reset: () => {
      stopAll()
      entries.clear()
      faults = { ...NO_FAULTS }
    },
    close: async () => {
      closed = true
      stopAll()
      while (tasks.size > 0) await Promise.all([...tasks])
    },
  }
}
