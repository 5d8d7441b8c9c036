import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Everything the suite sent and what was answered: per route the requests and their statuses, and the
 * writes satang acknowledged (which must all be in the log at the end), the payer data and forgeries
 * it sent (which must never show in a log line, nor change anything).
 */
export type RouteTally = { sent: number; acknowledged: number; readonly statuses: Record<string, number> }

export type OrderPlan = 'unpaid' | 'paid' | 'failed' | 'probe'

export type SentOrder = {
  readonly moid: string
  readonly plan: OrderPlan
  /** The last 2xx answer to its create. */
  ack?: { readonly status: number; readonly phase: string | null }
  gatewayOrderId?: string
  refundId?: string
}

export type Traffic = {
  readonly routes: Map<string, RouteTally>
  readonly orders: Map<string, SentOrder>
  /** merchant_refund_ids whose POST /v1/refunds was answered 2xx. */
  readonly refundsTracked: Set<string>
  /** Genuine (gateway-signed) notifications the suite delivered itself and satang answered 200 SUCCESS. */
  readonly notificationsAcked: Array<Readonly<Record<string, string>>>
  /**
   * Forged callbacks: what was sent and answered. `acknowledged`: answered 2xx as if accepted (a body
   * that is no notification at all may be acknowledged as refused, with `x-satang-callback: rejected`,
   * so that a gateway stops sending it: that is not an acknowledgement).
   */
  readonly forgeries: Array<{ readonly kind: string; readonly status: number; readonly acknowledged: boolean; readonly body: string }>
  /** Payer personal data sent, with what it is. */
  readonly pii: Array<{ readonly what: string; readonly value: string }>
  /** Answers the suite did not expect (a create refused, a forgery acknowledged…). */
  readonly unexpected: string[]
}

export const newTraffic = (): Traffic => ({ routes: new Map(), orders: new Map(), refundsTracked: new Set(), notificationsAcked: [], forgeries: [], pii: [], unexpected: [] })

export type Answer = { readonly status: number; readonly text: string; readonly json: unknown; readonly headers: Readonly<Record<string, string>> }

const tallyOf = (traffic: Traffic, route: string): RouteTally => {
  const found = traffic.routes.get(route)
  if (found !== undefined) return found
  const fresh: RouteTally = { sent: 0, acknowledged: 0, statuses: {} }
  traffic.routes.set(route, fresh)
  return fresh
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (e) {
    if (e instanceof SyntaxError) return null
    throw e
  }
}

/** ` [request <id>]` of an answer that carries satang's `x-request-id`: how the report finds its log lines. */
export const requestIdOf = (a: Answer): string => (a.headers['x-request-id'] === undefined ? '' : ` [request ${a.headers['x-request-id']}]`)

/** The log lines of every request named ` [request <id>]` in `unexpected`, each cut to 800 characters. */
export const logLinesOfRequests = (unexpected: ReadonlyArray<string>, logs: ReadonlyArray<{ readonly name: string; readonly text: string }>): ReadonlyArray<string> => {
  const ids = new Set(unexpected.flatMap((u) => [...u.matchAll(/\[request ([0-9a-f-]{36})\]/g)].map((m) => m[1] ?? '')))
  if (ids.size === 0) return []
  return logs.flatMap((l) => l.text.split('\n').filter((line) => [...ids].some((id) => line.includes(id))).map((line) => `${l.name}: ${line.slice(0, 800)}`))
}

/** One HTTP request, counted under `route`; status 0 when there was no answer (refused, reset, timed out). */
export const request = async (traffic: Traffic, route: string, url: string, init: { readonly method: string; readonly headers?: Record<string, string>; readonly body?: string; readonly timeoutMs?: number }): Promise<Answer> => {
  const tally = tallyOf(traffic, route)
  tally.sent += 1
  const answer = await fetch(url, {
    method: init.method,
    ...(init.headers === undefined ? {} : { headers: init.headers }),
    ...(init.body === undefined ? {} : { body: init.body }),
    signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
  }).then(
    async (r): Promise<Answer> => {
      const text = await r.text()
      return { status: r.status, text, json: parse(text), headers: Object.fromEntries(r.headers) }
    },
    (): Answer => ({ status: 0, text: '', json: null, headers: {} }),
  )
  const key = String(answer.status)
  tally.statuses[key] = (tally.statuses[key] ?? 0) + 1
  if (answer.status >= 200 && answer.status < 300) tally.acknowledged += 1
  return answer
}

/** Answers a client sends again with the same body: no answer, a restarting or unavailable service. */
export const RETRIABLE: ReadonlySet<number> = new Set([0, 429, 502, 503, 504])

/**
 * A write sent until it is answered (same body every time, as the API's idempotency allows), for at most
 * `patienceMs`; the last answer.
 */
export const sendUntilAnswered = async (
  traffic: Traffic,
  route: string,
  url: string,
  init: { readonly method: string; readonly headers?: Record<string, string>; readonly body?: string },
  patienceMs = 180_000,
  stopped: () => boolean = () => false,
): Promise<Answer> => {
  const deadline = Date.now() + patienceMs
  for (let attempt = 1; ; attempt++) {
    const answer = await request(traffic, route, url, init)
    if (!RETRIABLE.has(answer.status) || Date.now() > deadline || stopped()) return answer
    await sleep(Math.min(1_000, 50 * 2 ** Math.min(attempt, 5)))
  }
}
