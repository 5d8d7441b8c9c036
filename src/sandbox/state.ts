import * as t from 'io-ts'

/*
 * What the sandbox remembers: orders (direct and checkout), refunds and subscriptions. Records are
 * immutable values replaced whole by `put…`; every change is announced to the listeners (the state
 * file, which journals it). The codecs are the shape of `--state FILE` and its journal, decoded when
 * they are loaded.
 */

const Fields = t.UnknownRecord

export const SandboxOrder = t.intersection([
  t.type({
    kind: t.keyof({ direct: null, checkout: null }),
    merchantId: t.string,
    merchantOrderId: t.string,
    orderId: t.string,
    status: t.string,
    /** Two decimals; what queries answer (a forced amount replaces it). */
    amount: t.string,
    /** The amount the merchant asked for, as two decimals. */
    requestedAmount: t.string,
    currency: t.string,
    description: t.string,
    createTime: t.string,
    /** Sandbox time (epoch ms) of creation, for expiries. */
    createdAtMs: t.number,
  }),
  t.partial({
    service: t.string,
    productCode: t.string,
    paymentMethod: t.string,
    customer: Fields,
    products: t.array(Fields),
    notifyUrl: t.string,
    redirectUrl: t.string,
    cancelUrl: t.string,
    /** The `Referer` of the first visit of the checkout page: the default `cancel_url`. */
    referer: t.string,
    completeTime: t.string,
    /** Sandbox time (epoch ms) after which the payer can no longer pay on the page or by QR. */
    expiresAtMs: t.number,
    linkUrl: t.string,
    qrCode: t.string,
  }),
])
export type SandboxOrder = t.TypeOf<typeof SandboxOrder>

export const SandboxRefund = t.intersection([
  t.type({
    merchantId: t.string,
    merchantRefundId: t.string,
    merchantOrderId: t.string,
    orderId: t.string,
    refundOrderId: t.string,
    amount: t.string,
    currency: t.string,
    status: t.string,
    createTime: t.string,
  }),
  t.partial({ reason: t.string, notifyUrl: t.string, completeTime: t.string }),
])
export type SandboxRefund = t.TypeOf<typeof SandboxRefund>

const CalendarDateRecord = t.type({ year: t.number, month: t.number, day: t.number })

/** subscription-schedule.ts `ChargeState`. */
export const ChargeStateRecord = t.intersection([
  t.type({
    termsCharged: t.number,
    consecutiveFailures: t.number,
    status: t.keyof({ ACTIVE: null, SUSPEND: null, COMPLETED: null, CANCELLED: null }),
    nextAttempt: t.union([CalendarDateRecord, t.null]),
  }),
  t.partial({ termsSkipped: t.number }),
])

export const ChargeOutcome = t.keyof({ SUCCESS: null, FAIL: null })
export type ChargeOutcome = t.TypeOf<typeof ChargeOutcome>

/** One deduction attempt of a subscription. */
export const SubscriptionCharge = t.type({
  /** 1-based cycle of the plan the attempt was for. */
  cycle: t.number,
  /** The billing date the attempt ran for (`yyyy-MM-dd`). */
  date: t.string,
  /** Sandbox time of the attempt. */
  at: t.string,
  outcome: ChargeOutcome,
  type: t.string,
})
export type SubscriptionCharge = t.TypeOf<typeof SubscriptionCharge>

export const SandboxSubscription = t.intersection([
  t.type({
    merchantId: t.string,
    merchantSubscribeId: t.string,
    recurringBillId: t.string,
    /** `recurring_bill_status` on the wire: CREATED, ACTIVE or SUSPEND. */
    status: t.keyof({ CREATED: null, ACTIVE: null, SUSPEND: null }),
    planName: t.string,
    intervalType: t.keyof({ DAILY: null, WEEKLY: null, MONTHLY: null, YEARLY: null }),
    interval: t.number,
    totalTerms: t.number,
    billingAmount: t.string,
    billingCurrency: t.string,
    retry: t.keyof({ Y: null, N: null }),
    /** The start of the current plan (`yyyy-MM-dd`); an update restarts the plan. */
    startDate: t.string,
    createTime: t.string,
    linkUrl: t.string,
    authorised: t.boolean,
    cancelled: t.boolean,
    charge: ChargeStateRecord,
    /** Outcomes of the next charges, set through the control API; empty means SUCCESS. */
    outcomes: t.array(ChargeOutcome),
    charges: t.array(SubscriptionCharge),
  }),
  t.partial({
    storeId: t.string,
    planDesc: t.string,
    customer: Fields,
    notifyUrl: t.string,
    redirectUrl: t.string,
    updateTime: t.string,
    cancelTime: t.string,
  }),
])
export type SandboxSubscription = t.TypeOf<typeof SandboxSubscription>

/** The content of `--state FILE`. */
export const SandboxSnapshot = t.intersection([
  t.type({
    format: t.literal('satang-sandbox-state-v1'),
    /** Sandbox time when saved (ISO-8601), restored so that schedules resume where they were. */
    clock: t.string,
    /** The last value of the sequence every id is made of (ids.ts). */
    sequence: t.number,
    orders: t.array(SandboxOrder),
    refunds: t.array(SandboxRefund),
    subscriptions: t.array(SandboxSubscription),
  }),
  t.partial({
    /** The last journal commit this snapshot includes (absent in files written before the journal: 0). */
    commit: t.number,
  }),
])
export type SandboxSnapshot = t.TypeOf<typeof SandboxSnapshot>

/** What changed in the store: one record replaced whole, the id sequence moved, or everything replaced. */
export type StoreChange =
  | { readonly kind: 'order'; readonly order: SandboxOrder }
  | { readonly kind: 'refund'; readonly refund: SandboxRefund }
  | { readonly kind: 'subscription'; readonly subscription: SandboxSubscription }
  | { readonly kind: 'sequence' }
  | { readonly kind: 'replaced' }

export type SandboxStore = {
  readonly orders: () => ReadonlyArray<SandboxOrder>
  readonly order: (orderId: string) => SandboxOrder | undefined
  readonly orderOf: (merchantId: string, merchantOrderId: string) => SandboxOrder | undefined
  readonly putOrder: (order: SandboxOrder) => void
  readonly refunds: () => ReadonlyArray<SandboxRefund>
  readonly refundOf: (merchantId: string, merchantRefundId: string) => SandboxRefund | undefined
  readonly refundsOfOrder: (orderId: string) => ReadonlyArray<SandboxRefund>
  readonly putRefund: (refund: SandboxRefund) => void
  readonly subscriptions: () => ReadonlyArray<SandboxSubscription>
  readonly subscription: (recurringBillId: string) => SandboxSubscription | undefined
  readonly subscriptionOf: (merchantId: string, merchantSubscribeId: string) => SandboxSubscription | undefined
  readonly putSubscription: (subscription: SandboxSubscription) => void
  /** The next value of the sequence shared by every generated id. */
  readonly nextSequence: () => number
  /** The last value `nextSequence` gave. */
  readonly sequence: () => number
  readonly snapshot: (clock: Date) => SandboxSnapshot
  readonly restore: (snapshot: SandboxSnapshot) => void
  /** Forgets every order, refund and subscription; the id sequence goes on, so no id is ever issued twice. */
  readonly reset: () => void
  /** Called after every change, with what changed. */
  readonly onChange: (listener: (change: StoreChange) => void) => void
}

const key = (merchantId: string, id: string): string => `${merchantId}\u0000${id}`

/** What identifies a refund: its merchant and `merchant_refund_id`. */
export const refundKeyOf = (r: Pick<SandboxRefund, 'merchantId' | 'merchantRefundId'>): string => key(r.merchantId, r.merchantRefundId)

/** The in-memory store. */
export const makeSandboxStore = (): SandboxStore => {
  const orders = new Map<string, SandboxOrder>()
  const orderIds = new Map<string, string>()
  const refunds = new Map<string, SandboxRefund>()
  const subscriptions = new Map<string, SandboxSubscription>()
  const subscriptionIds = new Map<string, string>()
  const listeners: Array<(change: StoreChange) => void> = []
  let sequence = 0
  const changed = (change: StoreChange): void => listeners.forEach((l) => l(change))

  const putOrder = (o: SandboxOrder): void => {
    orders.set(o.orderId, o)
    orderIds.set(key(o.merchantId, o.merchantOrderId), o.orderId)
  }
  const putRefund = (r: SandboxRefund): void => {
    refunds.set(refundKeyOf(r), r)
  }
  const putSubscription = (s: SandboxSubscription): void => {
    subscriptions.set(s.recurringBillId, s)
    subscriptionIds.set(key(s.merchantId, s.merchantSubscribeId), s.recurringBillId)
  }
  const clear = (): void => {
    orders.clear()
    orderIds.clear()
    refunds.clear()
    subscriptions.clear()
    subscriptionIds.clear()
  }

  return {
    orders: () => [...orders.values()],
    order: (id) => orders.get(id),
    orderOf: (m, id) => {
      const orderId = orderIds.get(key(m, id))
      return orderId === undefined ? undefined : orders.get(orderId)
    },
    putOrder: (o) => {
      putOrder(o)
      changed({ kind: 'order', order: o })
    },
    refunds: () => [...refunds.values()],
    refundOf: (m, id) => refunds.get(key(m, id)),
    refundsOfOrder: (orderId) => [...refunds.values()].filter((r) => r.orderId === orderId),
    putRefund: (r) => {
      putRefund(r)
      changed({ kind: 'refund', refund: r })
    },
    subscriptions: () => [...subscriptions.values()],
    subscription: (id) => subscriptions.get(id),
    subscriptionOf: (m, id) => {
      const billId = subscriptionIds.get(key(m, id))
      return billId === undefined ? undefined : subscriptions.get(billId)
    },
    putSubscription: (s) => {
      putSubscription(s)
      changed({ kind: 'subscription', subscription: s })
    },
    nextSequence: () => {
      sequence += 1
      changed({ kind: 'sequence' })
      return sequence
    },
    sequence: () => sequence,
    snapshot: (clock) => ({
      format: 'satang-sandbox-state-v1',
      clock: clock.toISOString(),
      sequence,
      orders: [...orders.values()],
      refunds: [...refunds.values()],
      subscriptions: [...subscriptions.values()],
    }),
    restore: (s) => {
      clear()
      sequence = s.sequence
      s.orders.forEach(putOrder)
      s.refunds.forEach(putRefund)
      s.subscriptions.forEach(putSubscription)
      changed({ kind: 'replaced' })
    },
    reset: () => {
      clear()
      changed({ kind: 'replaced' })
    },
    onChange: (l) => {
      listeners.push(l)
    },
  }
}
