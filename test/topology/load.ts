import { setTimeout as sleep } from 'node:timers/promises'

/**
 * The load of a topology run, as merchants' backends and the gateway put it on satang: payments created
 * through the balancer, some of them paid at the gateway (the sandbox then notifies satang through the
 * balancer), some of those refunded (tracked through the API, refunded at the gateway, notified). A
 * client retries what failed without an answer (a killed process, a 502 or 503 from the balancer) with
 * the same body, as the API's idempotency allows; only an answered request counts as acknowledged.
 */
export type LoadPlan = {
  readonly orders: number
  readonly concurrency: number
  /** Every `payEvery`-th order is not paid (stays pending); the others are paid at the gateway. */
  readonly unpaidEvery: number
  /** Every `refundEvery`-th order (of those paid) is refunded in part. */
  readonly refundEvery: number
  readonly orderIdOf: (i: number) => string
  readonly refundIdOf: (i: number) => string
  /** Called with the number of orders done after each one (to trigger the kills). */
  readonly progress: (done: number) => Promise<void> | void
}

export type LoadTargets = {
  readonly balancerUrl: string
  readonly sandboxUrl: string
  readonly token: string
  readonly merchantId: string
}

/** What the load sent and what was acknowledged. */
export type LoadResult = {
  readonly requests: number
  readonly retries: number
  /** merchant_order_ids whose create was answered 201, 200 (replayed) or 202 (outcome pending or unknown). */
  readonly paymentsAcknowledged: ReadonlyArray<string>
  /** merchant_order_ids whose create an api recorded but never sent (killed in between), so not paid. */
  readonly neverSent: ReadonlyArray<string>
  /** merchant_order_ids paid at the gateway. */
  readonly paid: ReadonlyArray<string>
  /** merchant_refund_ids tracked through the API (201 or 200). */
  readonly refundsTracked: ReadonlyArray<string>
  /** merchant_refund_ids refunded at the gateway. */
  readonly refunded: ReadonlyArray<string>
  readonly statuses: Readonly<Record<string, number>>
}

type Answer = { readonly status: number; readonly json: unknown }

const RETRIABLE = new Set([502, 503, 504])

export const runLoad = async (targets: LoadTargets, plan: LoadPlan): Promise<LoadResult> => {
  let requests = 0
  let retries = 0
  const statuses: Record<string, number> = {}
  const paymentsAcknowledged: string[] = []
  const paid: string[] = []
  const refundsTracked: string[] = []
  const refunded: string[] = []
  const neverSent: string[] = []

  /** One request, retried (same body) while it has no answer or a retriable one; the last answer. */
  const send = async (url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const deadline = Date.now() + 90_000
    for (let attempt = 1; ; attempt++) {
      requests += 1
      const answer = await fetch(url, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      }).then(
        async (r): Promise<Answer> => ({ status: r.status, json: await r.json().catch(() => null) }),
        (): Answer => ({ status: 0, json: null }),
      )
      const key = String(answer.status)
      statuses[key] = (statuses[key] ?? 0) + 1
      if (!RETRIABLE.has(answer.status) && answer.status !== 0) return answer
      if (Date.now() > deadline) return answer
      retries += 1
      await sleep(Math.min(2_000, 50 * 2 ** Math.min(attempt, 6)))
    }
  }
  const api = (method: string, path: string, body?: unknown): Promise<Answer> => send(`${targets.balancerUrl}${path}`, method, body, { authorization: `Bearer ${targets.token}` })
  const sandbox = (method: string, path: string, body?: unknown): Promise<Answer> => send(`${targets.sandboxUrl}${path}`, method, body)

  /**
   * The gateway's order id of a merchant order, from the sandbox (known even when satang's create outcome
   * is not); undefined when the create never reached the gateway (recorded, then its process was killed
   * before sending: satang resolves it as failed by query and never sends it again).
   */
  const gatewayOrderId = async (moid: string): Promise<string | undefined> => {
    for (let i = 0; i < 30; i++) {
      const r = await sandbox('GET', `/_sandbox/orders?merchant_id=${targets.merchantId}&merchant_order_id=${encodeURIComponent(moid)}`)
      const orders = (r.json as { orders?: ReadonlyArray<{ orderId: string }> } | null)?.orders ?? []
      const first = orders[0]
      if (first !== undefined) return first.orderId
      await sleep(100)
    }
    return undefined
  }

  const one = async (i: number): Promise<void> => {
    const moid = plan.orderIdOf(i)
    const created = await api('POST', '/v1/payments', {
      service: 'svc.thaiqr.pay',
      merchant_order_id: moid,
      order_amount: `${String(100 + (i % 50))}.00`,
      order_currency: 'THB',
      order_desc: 'topology',
      payment_method: 'THAI_QR',
      customer: { merchant_user_id: `u-${String(i % 17)}` },
    })
    if (![200, 201, 202].includes(created.status)) throw new Error(`POST /v1/payments ${moid}: ${String(created.status)} ${JSON.stringify(created.json)}`)
    paymentsAcknowledged.push(moid)
    if (i % plan.unpaidEvery === 0) return
    const orderId = await gatewayOrderId(moid)
    if (orderId === undefined) {
      neverSent.push(moid)
      return
    }
    const pay = await sandbox('POST', `/_sandbox/orders/${orderId}/pay`)
    if (pay.status !== 200) throw new Error(`sandbox pay ${orderId}: ${String(pay.status)} ${JSON.stringify(pay.json)}`)
    paid.push(moid)
    if (i % plan.refundEvery !== 1) return
    const mrid = plan.refundIdOf(i)
    const tracked = await api('POST', '/v1/refunds', { merchant_refund_id: mrid, merchant_order_id: moid })
    if (![200, 201].includes(tracked.status)) throw new Error(`POST /v1/refunds ${mrid}: ${String(tracked.status)} ${JSON.stringify(tracked.json)}`)
    refundsTracked.push(mrid)
    const refund = await sandbox('POST', '/_sandbox/refunds', { order_id: orderId, merchant_refund_id: mrid, refund_amount: '10.00' })
    if (![200, 201].includes(refund.status)) throw new Error(`sandbox refund ${mrid}: ${String(refund.status)} ${JSON.stringify(refund.json)}`)
    refunded.push(mrid)
  }

  let nextIndex = 0
  let done = 0
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = nextIndex++
      if (i >= plan.orders) return
      await one(i)
      done += 1
      await plan.progress(done)
    }
  }
  await Promise.all(Array.from({ length: plan.concurrency }, worker))
  return { requests, retries, paymentsAcknowledged, neverSent, paid, refundsTracked, refunded, statuses }
}
