import { randomInt } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { loadPrivateKey, makeSigner, signedForm, type Signer } from '../../src/domain/gateway/signing.ts'
import { MERCHANT_ID } from './stack.ts'
import { request, requestIdOf, sendUntilAnswered, type Traffic } from './traffic.ts'

/**
 * Callback chaos beside the load: genuine notifications (as the sandbox signed and sent them) delivered
 * again, several at once, and out of order (an order's REFUND before its PAYMENT); the sandbox's own
 * notification faults (duplicate, reorder) armed again and again; and forgeries: a genuine notification
 * with a field changed, a "paid" notification for an unpaid order signed with a key the gateway never
 * had (carrying payer data, which must be redacted and never logged), one about an order satang never
 * created, one forgery replayed several times, and bodies that are not notifications at all.
 */
export type Notification = {
  readonly id: string
  readonly kind: string
  readonly fields: Readonly<Record<string, string>>
  readonly state: string
}

export const CALLBACK_KINDS = ['callback-duplicate', 'callback-reorder', 'sandbox-duplicate', 'sandbox-reorder', 'forged-tampered', 'forged-wrong-key', 'forged-unknown-order', 'forged-replay', 'forged-junk'] as const
export type CallbackKind = (typeof CALLBACK_KINDS)[number]

export type CallbackChaos = {
  /**
   * Per kind: how many were injected, and how many were handled as they should be (acknowledged, or
   * refused); null for the sandbox's own faults, whose handling only the end checks show (nothing lost,
   * nothing recorded twice).
   */
  readonly counts: () => ReadonlyMap<CallbackKind, { readonly injected: number; readonly handled: number | null }>
  readonly stop: () => Promise<void>
}

export type CallbackTargets = { readonly satangUrl: string; readonly sandboxUrl: string; readonly forgerPrivatePem: string; readonly tag: string }

const NOTIFY_PATH = '/callbacks/notifications'

export const startCallbackChaos = (t: CallbackTargets, traffic: Traffic, everyMs: number): CallbackChaos => {
  const key = loadPrivateKey(t.forgerPrivatePem)
  if (E.isLeft(key)) throw new Error(`the forger key does not load: ${key.left.message}`)
  const forger: Signer = makeSigner(satangCanonicalV1, key.right)
  const counts = new Map<CallbackKind, { injected: number; handled: number | null }>(CALLBACK_KINDS.map((k) => [k, { injected: 0, handled: k.startsWith('sandbox-') ? null : 0 }]))
  const count = (k: CallbackKind, injected: number, handled: number | null): void => {
    const c = counts.get(k)
    if (c !== undefined) {
      c.injected += injected
      c.handled = c.handled === null || handled === null ? null : c.handled + handled
    }
  }
  let genuine: ReadonlyArray<Notification> = []
  let fetchedAt = 0
  let stopping = false
  let ghosts = 0

  const refreshGenuine = async (): Promise<void> => {
    if (Date.now() - fetchedAt < 4_000) return
    fetchedAt = Date.now()
    const r = await request(traffic, 'sandbox control', `${t.sandboxUrl}/_sandbox/notifications`, { method: 'GET' })
    const list = (r.json as { notifications?: ReadonlyArray<Notification> } | null)?.notifications
    if (list !== undefined) genuine = list.filter((n) => n.state === 'delivered' || n.state === 'failed')
  }
  const pick = <A>(xs: ReadonlyArray<A>): A | undefined => xs[randomInt(Math.max(1, xs.length))]

  /** A genuine notification delivered by the suite: it must be acknowledged (and then be in the log). */
  const deliverGenuine = async (fields: Readonly<Record<string, string>>): Promise<boolean> => {
    const a = await sendUntilAnswered(traffic, 'POST /callbacks/notifications (genuine, again)', `${t.satangUrl}${NOTIFY_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) }, 120_000, () => stopping)
    if (a.status === 200 && a.text === 'SUCCESS') {
      traffic.notificationsAcked.push(fields)
      return true
    }
    if (a.status !== 0 && a.status !== 503) traffic.unexpected.push(`genuine ${fields['notify_type'] ?? '?'} notification for ${fields['merchant_order_id'] ?? '?'} answered ${String(a.status)} ${a.text.slice(0, 200)}${requestIdOf(a)}`)
    return false
  }

  /** A forgery: it must be refused (never 2xx). */
  const forge = async (kind: CallbackKind, body: string, times = 1): Promise<void> => {
    for (let i = 0; i < times; i++) {
      const a = await request(traffic, 'POST /callbacks/notifications (forged)', `${t.satangUrl}${NOTIFY_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      const acknowledged = a.status >= 200 && a.status < 300 && a.headers['x-satang-callback'] !== 'rejected'
      traffic.forgeries.push({ kind, status: a.status, acknowledged, body })
      if (acknowledged) traffic.unexpected.push(`${kind}: a forged callback was acknowledged: ${String(a.status)} ${a.text.slice(0, 200)}`)
      count(kind, 1, acknowledged ? 0 : 1)
    }
  }

  const sandboxOrder = async (moid: string): Promise<Record<string, unknown> | undefined> => {
    const r = await request(traffic, 'sandbox control', `${t.sandboxUrl}/_sandbox/orders?merchant_id=${MERCHANT_ID}&merchant_order_id=${encodeURIComponent(moid)}`, { method: 'GET' })
    return (r.json as { orders?: ReadonlyArray<Record<string, unknown>> } | null)?.orders?.[0]
  }

  const actions: ReadonlyArray<() => Promise<void>> = [
    // the same genuine notification three times at once
    async () => {
      const n = pick(genuine)
      if (n === undefined) return
      const acked = await Promise.all([deliverGenuine(n.fields), deliverGenuine(n.fields), deliverGenuine(n.fields)])
      count('callback-duplicate', 3, acked.filter(Boolean).length)
    },
    // an order's REFUND notification before its PAYMENT notification
    async () => {
      const refunds = genuine.filter((n) => n.kind === 'REFUND')
      const r = pick(refunds)
      const p = r === undefined ? undefined : genuine.find((n) => n.kind === 'PAYMENT' && n.fields['merchant_order_id'] === r.fields['merchant_order_id'])
      if (r === undefined || p === undefined) return
      const first = await deliverGenuine(r.fields)
      const second = await deliverGenuine(p.fields)
      count('callback-reorder', 1, first && second ? 1 : 0)
    },
    // the sandbox delivers its next notifications twice, and holds one back behind the next
    async () => {
      const a = await request(traffic, 'sandbox control', `${t.sandboxUrl}/_sandbox/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ notifications: { duplicate: 2 } }) })
      if (a.status === 200) count('sandbox-duplicate', 2, null)
    },
    async () => {
      const a = await request(traffic, 'sandbox control', `${t.sandboxUrl}/_sandbox/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ notifications: { reorder: true } }) })
      if (a.status === 200) count('sandbox-reorder', 1, null)
    },
    // a genuine notification with its amount changed, the signature kept
    async () => {
      const n = pick(genuine.filter((x) => x.kind === 'PAYMENT'))
      if (n === undefined) return
      await forge('forged-tampered', JSON.stringify({ ...n.fields, order_amount: '1.00' }))
    },
    // "paid" for an order nobody paid, signed with a key the gateway never had, with payer data in it
    async () => {
      const unpaid = [...traffic.orders.values()].filter((o) => o.plan === 'unpaid' && o.ack !== undefined)
      const o = pick(unpaid)
      const gw = o === undefined ? undefined : await sandboxOrder(o.moid)
      if (o === undefined || gw === undefined) return
      const phone = `09${String(randomInt(10_000_000, 99_999_999))}`
      const buyer = `buyer-${String(randomInt(1e9, 9e9))}`
      traffic.pii.push({ what: `payer phone in a forged notification for ${o.moid}`, value: phone }, { what: `buyer identity code in a forged notification for ${o.moid}`, value: buyer })
      const fields = signedForm(forger, {
        merchant_id: MERCHANT_ID,
        merchant_order_id: o.moid,
        order_id: String(gw['orderId']),
        order_amount: String(gw['amount']),
        order_status: 'PS',
        order_currency: 'THB',
        order_desc: 'chaos',
        create_time: String(gw['createTime']),
        payment_method: 'THAI_QR',
        complete_time: String(gw['createTime']),
        mobile_number: phone,
        buyer_identity_code: buyer,
        notify_type: 'PAYMENT',
      })
      await forge('forged-wrong-key', JSON.stringify(fields))
    },
    // about an order satang never created
    async () => {
      ghosts += 1
      const fields = signedForm(forger, { merchant_id: MERCHANT_ID, merchant_order_id: `CH-${t.tag}-ghost-${String(ghosts)}`, order_id: `99${String(randomInt(1e9, 9e9))}`, order_amount: '500.00', order_status: 'PS', order_currency: 'THB', notify_type: 'PAYMENT' })
      await forge('forged-unknown-order', JSON.stringify(fields))
    },
    // one forgery, replayed
    async () => {
      const n = pick(genuine.filter((x) => x.kind === 'REFUND'))
      if (n === undefined) return
      await forge('forged-replay', JSON.stringify({ ...n.fields, refund_amount: '999.00' }), 5)
    },
    // not a notification at all
    async () => {
      await forge('forged-junk', pick(['[]', '"SUCCESS"', '{"notify_type":', '{}', 'null']) ?? '[]')
    },
  ]

  const loop = (async () => {
    let i = 0
    while (!stopping) {
      await refreshGenuine()
      const action = actions[i % actions.length]
      i += 1
      if (action !== undefined) await action()
      await sleep(everyMs)
    }
  })()

  return {
    counts: () => counts,
    stop: async () => {
      stopping = true
      await loop
    },
  }
}
