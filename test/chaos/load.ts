import { randomBytes, randomInt } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { MERCHANT_ID } from './stack.ts'
import { request, requestIdOf, sendUntilAnswered, type OrderPlan, type SentOrder, type Traffic } from './traffic.ts'

/**
 * Sustained load as merchants' backends, payers and the gateway put it on satang: payments created
 * through `/v1` (each with a payer's name, e-mail, phone and id number), most of them paid at the
 * gateway (the sandbox then notifies satang through `/callbacks`), some failed, some left unpaid, and
 * one in three paid ones refunded (tracked through `/v1/refunds`, refunded at the gateway, notified).
 * A write without an answer is sent again with the same body until it is answered.
 */
export type LoadTargets = {
  readonly satangUrl: string
  readonly sandboxUrl: string
  readonly token: string
  readonly tag: string
}

const letters = (n: number): string => Array.from({ length: n }, () => 'bcdfghjklmnpqrstvwxz'.charAt(randomInt(20))).join('')
const digits = (n: number): string => Array.from({ length: n }, () => String(randomInt(10))).join('')

/** A payer's personal data, different for every order and unlike anything else in a log line. */
const payer = (traffic: Traffic, moid: string): Record<string, string> => {
  const first = `${letters(1).toUpperCase()}${letters(7)}`
  const last = `${letters(1).toUpperCase()}${letters(9)}`
  const data = {
    full_name: `${first} ${last}`,
    email: `${letters(8)}.${letters(6)}@payer-mail.example`,
    phone: `08${digits(8)}`,
    id_no: `3${digits(12)}`,
  }
  traffic.pii.push({ what: `payer name of ${moid}`, value: data.full_name }, { what: `payer e-mail of ${moid}`, value: data.email }, { what: `payer phone of ${moid}`, value: data.phone }, { what: `payer id number of ${moid}`, value: data.id_no })
  return data
}

export type Load = {
  /** Creates one payment (the fault recovery probes use it); its last answer. */
  readonly create: (moid: string, plan: OrderPlan, patienceMs?: number) => Promise<number>
  readonly stop: () => Promise<void>
}

const planOf = (i: number): OrderPlan => (i % 10 === 0 || i % 10 === 5 ? 'unpaid' : i % 10 === 7 ? 'failed' : 'paid')

export const startLoad = (t: LoadTargets, traffic: Traffic, concurrency: number): Load => {
  let stopping = false
  const auth = { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }
  const json = { 'content-type': 'application/json' }

  const create = async (moid: string, plan: OrderPlan, patienceMs = 180_000): Promise<number> => {
    const order: SentOrder = traffic.orders.get(moid) ?? { moid, plan }
    traffic.orders.set(moid, order)
    const body = JSON.stringify({
      service: 'svc.thaiqr.pay',
      merchant_order_id: moid,
      order_amount: `${String(100 + randomInt(900))}.${digits(2)}`,
      order_currency: 'THB',
      order_desc: 'chaos',
      payment_method: 'THAI_QR',
      customer: { merchant_user_id: `u-${String(randomInt(50))}`, ...payer(traffic, moid) },
    })
    const a = await sendUntilAnswered(traffic, 'POST /v1/payments', `${t.satangUrl}/v1/payments`, { method: 'POST', headers: auth, body }, patienceMs)
    if (a.status >= 200 && a.status < 300) {
      const phase = (a.json as { request?: { phase?: unknown } } | null)?.request?.phase
      order.ack = { status: a.status, phase: typeof phase === 'string' ? phase : null }
    } else if (a.status !== 0 && a.status !== 503) traffic.unexpected.push(`POST /v1/payments ${moid}: ${String(a.status)} ${a.text.slice(0, 300)}${requestIdOf(a)}`)
    return a.status
  }

  /** The gateway's order id, from the sandbox: unknown when the create never reached the gateway. */
  const gatewayOrderId = async (moid: string): Promise<string | undefined> => {
    for (let i = 0; i < 20; i++) {
      const r = await request(traffic, 'sandbox control', `${t.sandboxUrl}/_sandbox/orders?merchant_id=${MERCHANT_ID}&merchant_order_id=${encodeURIComponent(moid)}`, { method: 'GET' })
      const first = (r.json as { orders?: ReadonlyArray<{ orderId: string }> } | null)?.orders?.[0]
      if (first !== undefined) return first.orderId
      await sleep(150)
    }
    return undefined
  }

  const one = async (i: number): Promise<void> => {
    const moid = `CH-${t.tag}-${String(i)}`
    const plan = planOf(i)
    const status = await create(moid, plan)
    const order = traffic.orders.get(moid)
    if (order === undefined || status < 200 || status >= 300 || plan === 'unpaid') return
    const orderId = await gatewayOrderId(moid)
    if (orderId === undefined) return
    order.gatewayOrderId = orderId
    const settled = await request(traffic, 'sandbox control', `${t.sandboxUrl}/_sandbox/orders/${orderId}/${plan === 'failed' ? 'fail' : 'pay'}`, { method: 'POST' })
    if (settled.status !== 200) traffic.unexpected.push(`sandbox ${plan === 'failed' ? 'fail' : 'pay'} ${orderId}: ${String(settled.status)} ${settled.text.slice(0, 200)}`)
    if (plan !== 'paid' || i % 3 !== 1 || settled.status !== 200) return
    const mrid = `CHR-${t.tag}-${String(i)}`
    const tracked = await sendUntilAnswered(traffic, 'POST /v1/refunds', `${t.satangUrl}/v1/refunds`, { method: 'POST', headers: auth, body: JSON.stringify({ merchant_refund_id: mrid, merchant_order_id: moid }) })
    if (tracked.status !== 200 && tracked.status !== 201) {
      traffic.unexpected.push(`POST /v1/refunds ${mrid}: ${String(tracked.status)} ${tracked.text.slice(0, 300)}${requestIdOf(tracked)}`)
      return
    }
    traffic.refundsTracked.add(mrid)
    order.refundId = mrid
    const refunded = await request(traffic, 'sandbox control', `${t.sandboxUrl}/_sandbox/refunds`, { method: 'POST', headers: json, body: JSON.stringify({ order_id: orderId, merchant_refund_id: mrid, refund_amount: '10.00' }) })
    if (refunded.status !== 200 && refunded.status !== 201) traffic.unexpected.push(`sandbox refund ${mrid}: ${String(refunded.status)} ${refunded.text.slice(0, 200)}`)
  }

  let next = 0
  const worker = async (): Promise<void> => {
    while (!stopping) {
      await one(next++)
      // a little jitter, so that the workers do not move in step
      await sleep(randomInt(20, 120))
    }
  }
  const workers = Array.from({ length: concurrency }, worker)
  return {
    create,
    stop: async () => {
      stopping = true
      await Promise.all(workers)
    },
  }
}

/** A unique tag for this run's ids (merchant_order_id allows letters, digits and dashes). */
export const runTag = (): string => randomBytes(3).toString('hex')
