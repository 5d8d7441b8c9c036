import { Client, type Pool } from 'pg'
import type { Logger } from '../../logger.ts'

/**
 * Wake-ups for live subscribers, at most one per `minIntervalMs`. A NOTIFY inside every append would
 * take PostgreSQL's global notify lock at each commit and serialise the writers; instead the first
 * append after a quiet spell sends it from its own statement (`claim`: delivered at its commit, no
 * round trip after), and appends that finish while a notification is due or in flight are covered
 * by one `pg_notify` sent on its own afterwards (coalescing). Subscribers in this
 * process are woken directly. One LISTEN connection per store serves all its subscriptions; when
 * it is down, the subscribers' polling fallback still finds every event.
 *
 * While no subscriber listens in another session (`othersListen`, looked up by the store at most once
 * per `listenerLookupMs`), nothing is sent at all: a notification nobody hears still takes the notify
 * lock at commit and, when coalesced, a statement of its own. A subscriber whose LISTEN connection
 * has just opened is not yet known to appenders elsewhere, so for `startupWindowMs` it looks for new
 * events every STARTUP_POLL_MS itself (unless a notification came meanwhile), instead of every `pollIntervalMs`.
 */
export type Wakeups = {
  /** The channel notified. */
  readonly channel: string
  /**
   * Before an append: whether it should send the next notification itself, in its own statement
   * (delivered at its commit, no round trip after it). True when one is due now; it then counts as
   * sent, and appends finishing meanwhile are covered by one more afterwards, as after a send.
   */
  readonly claim: () => boolean
  /** Call after an append committed; `notifiedAtCommit` when it had claimed the notification and sent it. */
  readonly appended: (notifiedAtCommit?: boolean) => void
  /**
   * Registers a subscriber's wake function; returns its unregister function. A wake-up from another
   * process passes the notification's payload (an announcement, announcements.ts, or empty); one from
   * this process's own appends passes nothing.
   */
  readonly register: (wake: (payload?: string) => void) => () => void
  /** The backend pid of this store's LISTEN connection while it is up (so that it is not counted as a listener elsewhere). */
  readonly listenerPid: () => number | undefined
  readonly close: () => Promise<void>
}

const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5_000
/** How often a subscriber whose LISTEN connection has just opened looks for new events, until appenders elsewhere can know of it. */
export const STARTUP_POLL_MS = 20

export type WakeupsConfig = {
  /** The channel notified. */
  readonly channel: string
  /** At most one notification per this interval. */
  readonly minIntervalMs: number
  /** The application_name of the LISTEN connection, by which appenders elsewhere see that someone listens. */
  readonly listenerName: string
  /** Whether a subscriber listens in another session, as last looked up; nothing is sent while not. */
  readonly othersListen: () => boolean
  /** How long after its LISTEN connection opened a subscriber polls every STARTUP_POLL_MS: longer than appenders elsewhere take to look it up. */
  readonly startupWindowMs: number
}

export const makeWakeups = (deps: { readonly pool: Pool; readonly log: Logger }, config: WakeupsConfig): Wakeups => {
  const { channel, minIntervalMs, listenerName, othersListen, startupWindowMs } = config
  const log = deps.log
  const subscribers = new Set<(payload?: string) => void>()
  let closed = false

  const wakeAll = (payload?: string): void => {
    for (const wake of subscribers) wake(payload)
  }

  // Outgoing: at most one notification per `minIntervalMs`. The first append after a quiet spell
  // notifies at once; later ones are covered by one notification at the end of the interval.
  let sending: Promise<void> | undefined
  let pending = false
  let timer: NodeJS.Timeout | undefined
  let lastSentAt = Number.NEGATIVE_INFINITY
  const later = (): void => {
    timer = setTimeout(() => {
      timer = undefined
      sending = send()
    }, Math.max(0, lastSentAt + minIntervalMs - performance.now()))
  }
  const send = async (): Promise<void> => {
    pending = false
    lastSentAt = performance.now()
    try {
      await deps.pool.query({ name: 'satang_es_notify', text: 'select pg_notify($1, $2)', values: [channel, ''] })
    } catch (err) {
      // Not fatal: subscribers elsewhere still poll. Losing this wake-up only delays them.
      log.warn({ err }, 'could not notify subscribers; they fall back to polling')
    }
    sending = undefined
    if (pending && !closed) later()
  }
  const claim = (): boolean => {
    if (closed || sending !== undefined || timer !== undefined || !othersListen()) return false
    if (performance.now() - lastSentAt < minIntervalMs) return false
    lastSentAt = performance.now()
    return true
  }
  const appended = (notifiedAtCommit = false): void => {
    wakeAll()
    if (closed || notifiedAtCommit || !othersListen()) return
    if (sending !== undefined || timer !== undefined) {
      pending = true
      return
    }
    if (performance.now() - lastSentAt >= minIntervalMs) sending = send()
    else later()
  }

  // Incoming: one LISTEN connection while anyone is subscribed, reconnected with backoff.
  let listener: Client | undefined
  let pid: number | undefined
  let connecting: Promise<void> | undefined
  let reconnectTimer: NodeJS.Timeout | undefined
  let startupTimer: NodeJS.Timeout | undefined
  let backoff = RECONNECT_MIN_MS

  // Notifications heard on the LISTEN connection so far.
  let heard = 0
  // Until appenders elsewhere have looked this listener up, their appends wake nobody: every
  // STARTUP_POLL_MS, look for new events unless a notification came meanwhile (then appenders do
  // notify, and their announcements call for a read when an append they do not cover is older).
  const pollWhileUnknown = (client: Client, until: number, heardBefore: number): void => {
    if (startupTimer !== undefined) clearTimeout(startupTimer)
    startupTimer = setTimeout(() => {
      startupTimer = undefined
      if (closed || listener !== client || performance.now() > until) return
      if (heard === heardBefore) wakeAll()
      pollWhileUnknown(client, until, heard)
    }, STARTUP_POLL_MS)
    startupTimer.unref()
  }

  const scheduleReconnect = (): void => {
    if (closed || subscribers.size === 0 || reconnectTimer !== undefined) return
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined
      void listen()
    }, backoff)
    backoff = Math.min(backoff * 2, RECONNECT_MAX_MS)
  }

  const listen = (): Promise<void> => {
    if (listener !== undefined || connecting !== undefined || closed || subscribers.size === 0) return connecting ?? Promise.resolve()
    const client = new Client({ ...deps.pool.options, application_name: listenerName })
    const lost = (err?: Error): void => {
      if (listener !== client) return
      listener = undefined
      pid = undefined
      if (!closed) log.warn({ err }, 'LISTEN connection lost; subscribers poll until it is back')
      client.end().catch((e: unknown) => log.debug({ err: e }, 'closing a failed LISTEN connection'))
      scheduleReconnect()
    }
    client.on('notification', (msg) => {
      if (msg.channel !== channel) return
      heard += 1
      wakeAll(msg.payload)
    })
    client.on('error', lost)
    client.on('end', () => lost())
    connecting = (async () => {
      try {
        await client.connect()
        await client.query(`listen "${channel}"`)
        pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid
        listener = client
        backoff = RECONNECT_MIN_MS
        // Anything committed while we were not listening is found by this extra read.
        wakeAll()
        pollWhileUnknown(client, performance.now() + startupWindowMs, heard)
        if (closed || subscribers.size === 0) await stopListening()
      } catch (err) {
        log.warn({ err }, 'could not LISTEN for new events; retrying')
        await client.end().catch((e: unknown) => log.debug({ err: e }, 'closing a failed LISTEN connection'))
        scheduleReconnect()
      } finally {
        connecting = undefined
      }
    })()
    return connecting
  }

  const stopListening = async (): Promise<void> => {
    if (reconnectTimer !== undefined) clearTimeout(reconnectTimer)
    reconnectTimer = undefined
    if (startupTimer !== undefined) clearTimeout(startupTimer)
    startupTimer = undefined
    const client = listener
    listener = undefined
    pid = undefined
    if (client !== undefined) await client.end().catch((err: unknown) => log.warn({ err }, 'closing the LISTEN connection failed'))
  }

  const register = (wake: (payload?: string) => void): (() => void) => {
    subscribers.add(wake)
    void listen()
    return () => {
      subscribers.delete(wake)
      if (subscribers.size === 0) void stopListening()
    }
  }

  const close = async (): Promise<void> => {
    closed = true
    subscribers.clear()
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    await connecting
    await stopListening()
    await sending
  }

  return { channel, claim, appended, register, listenerPid: () => pid, close }
}
