import * as E from 'fp-ts/lib/Either.js'
import type { FastifyInstance, FastifyReply } from 'fastify'
import * as t from 'io-ts'
import { formatBangkokDateTime, parseBangkokDateTime } from '../domain/bangkok-time.ts'
import { HttpUrl, MerchantRefundId, StatusCode } from '../domain/gateway/fields.ts'
import { text } from '../domain/gateway/text-codecs.ts'
import { AmountText } from '../domain/money.ts'
import { decodeAll } from '../domain/violations.ts'
import { loadPublicKey } from '../domain/gateway/signing.ts'
import type { ActionError } from './action-error.ts'
import { authoriseSubscription, setChargeOutcomes } from './billing.ts'
import { closedRecord } from './closed-record.ts'
import type { SandboxClock } from './clock.ts'
import type { SandboxContext, SandboxSettings } from './context.ts'
import { GatewayFaultsInput, type GatewayFaults } from './gateway-faults.ts'
import { GATEWAY_PUBLIC_KEY_PATH } from './keys.ts'
import type { MerchantRegistry } from './merchants.ts'
import type { NotificationKind, Notifier } from './notifier.ts'
import { failOrder, forceOrder, payOrder } from './payments.ts'
import type { RateLimiter } from './rate-limit.ts'
import { createRefund } from './refunds.ts'
import { seedOrders } from './seed.ts'
import { ChargeOutcome } from './state.ts'

/** The prefix of the control API; everything under it is the sandbox's own, not the gateway's. */
export const CONTROL_PREFIX = '/_sandbox'

export type ControlDeps = {
  readonly ctx: SandboxContext
  readonly clock: SandboxClock
  readonly notifier: Notifier
  readonly faults: GatewayFaults
  readonly merchants: MerchantRegistry
  readonly rateLimiter: RateLimiter
  readonly publicKeyPem: string
  readonly updateSettings: (s: Partial<SandboxSettings>) => SandboxSettings
  /** Forgets every order, refund, subscription, notification and fault. */
  readonly reset: () => void
}

type IdParams = { readonly id: string }

/** The control API's routes, served by `GET /_sandbox` so that the sandbox documents itself. */
export const CONTROL_ROUTES: ReadonlyArray<{ readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE'; readonly path: string; readonly body?: string; readonly effect: string }> = [
  { method: 'GET', path: '/_sandbox', effect: 'overview: URLs, merchants, clock, settings, counts, these routes' },
  { method: 'GET', path: '/_sandbox/keys/gateway.pem', effect: 'the gateway public key (PEM) that verifies redirect forms, notifications and answers' },
  { method: 'GET', path: '/_sandbox/merchants', effect: 'registered merchant ids' },
  { method: 'POST', path: '/_sandbox/merchants', body: '{ merchant_id, public_key_pem }', effect: 'register (or replace) a merchant and its public key' },
  { method: 'GET', path: '/_sandbox/settings', effect: 'current settings' },
  { method: 'PUT', path: '/_sandbox/settings', body: '{ payImmediately?, qrExpireSec?, linkExpireSec?, failedStatus?, rateLimit?: { perSecond, burst } }', effect: 'change settings' },
  { method: 'GET', path: '/_sandbox/orders?merchant_id=&merchant_order_id=', effect: 'orders (direct and checkout), filtered' },
  { method: 'POST', path: '/_sandbox/orders', body: '{ orders: [{ merchant_id, merchant_order_id, order_amount, order_currency?, order_status? }] }', effect: 'create orders in bulk as if made elsewhere (silently; default THB, PS): for benchmarks and reconciliation tests' },
  { method: 'GET', path: '/_sandbox/orders/{order_id}', effect: 'one order with its refunds' },
  { method: 'POST', path: '/_sandbox/orders/{order_id}/pay', effect: 'the payer pays: PS, complete_time, PAYMENT notification' },
  { method: 'POST', path: '/_sandbox/orders/{order_id}/fail', effect: 'the payment fails: status PF (settings.failedStatus), PAYMENT notification' },
  { method: 'POST', path: '/_sandbox/orders/{order_id}/force', body: '{ order_status?, order_amount?, notify? }', effect: 'set what the gateway says, silently unless notify: true' },
  { method: 'GET', path: '/_sandbox/refunds', effect: 'all refunds' },
  { method: 'POST', path: '/_sandbox/refunds', body: '{ order_id, merchant_refund_id, refund_amount, refund_reason?, notify_url? }', effect: 'refund a paid order (at most what is left): RS, REFUND notification' },
  { method: 'GET', path: '/_sandbox/subscriptions', effect: 'all subscriptions with their charges' },
  { method: 'GET', path: '/_sandbox/subscriptions/{recurring_bill_id}', effect: 'one subscription: plan, charge state, charges, outcomes still set' },
  { method: 'POST', path: '/_sandbox/subscriptions/{recurring_bill_id}/authorise', effect: 'the payer authorises (as the page does); answers the endpoint 9 form' },
  { method: 'PUT', path: '/_sandbox/subscriptions/{recurring_bill_id}/outcomes', body: '{ outcomes: ["SUCCESS"|"FAIL", …] }', effect: 'outcomes of the next charges (then SUCCESS)' },
  { method: 'GET', path: '/_sandbox/clock', effect: 'sandbox time (ISO and Bangkok) and its offset from real time' },
  { method: 'POST', path: '/_sandbox/clock/advance', body: '{ days?, hours?, minutes?, seconds?, ms? }', effect: 'move time forward; runs due charges; answers the charges made' },
  { method: 'POST', path: '/_sandbox/clock/set', body: '{ to: ISO-8601 | "yyyy-MM-dd HH:mm:ss" (Bangkok) }', effect: 'move time forward to an instant (never back)' },
  { method: 'GET', path: '/_sandbox/faults', effect: 'faults still armed' },
  { method: 'PUT', path: '/_sandbox/faults', body: '{ gateway?: { latencyMs?, http5xx?: { count, status?, phase? }, hang?: { count, phase? }, services? }, notifications?: { drop?, duplicate?, reorder?, delayMs? } }', effect: 'arm faults' },
  { method: 'DELETE', path: '/_sandbox/faults', effect: 'clear every fault' },
  { method: 'GET', path: '/_sandbox/notifications?url=&kind=', effect: 'notifications with every delivery attempt' },
  { method: 'GET', path: '/_sandbox/notifications/{id}', effect: 'one notification' },
  { method: 'POST', path: '/_sandbox/notifications/wait', body: '{ timeoutMs? }', effect: 'answers when no notification is pending (504 after timeoutMs, default 30000)' },
  { method: 'POST', path: '/_sandbox/reset', effect: 'forget orders, refunds, subscriptions, notifications and faults (not the clock, keys or merchants; ids keep counting)' },
]

const Int = (min: number, max: number) => t.refinement(t.number, (n) => Number.isInteger(n) && n >= min && n <= max, `a whole number from ${String(min)} to ${String(max)}`)
const NonNegative = t.refinement(t.number, (n) => Number.isFinite(n) && n >= 0, 'a number of at least 0')

const OrderForce = closedRecord('order force', {}, { order_status: StatusCode, order_amount: AmountText, notify: t.boolean })
const RefundInput = closedRecord(
  'refund',
  { order_id: t.string, merchant_refund_id: MerchantRefundId, refund_amount: AmountText },
  { refund_reason: text('refund_reason', 256), notify_url: HttpUrl },
)
const SeedInput = closedRecord(
  'orders',
  { orders: t.array(closedRecord('order', { merchant_id: t.string, merchant_order_id: t.string, order_amount: AmountText }, { order_currency: t.string, order_status: StatusCode })) },
  {},
)
const OutcomesInput = closedRecord('outcomes', { outcomes: t.array(ChargeOutcome) }, {})
const AdvanceInput = closedRecord('clock advance', {}, { ms: NonNegative, seconds: NonNegative, minutes: NonNegative, hours: NonNegative, days: NonNegative })
const SetInput = closedRecord('clock set', { to: t.string }, {})
const NotificationFaultsInput = closedRecord(
  'notification faults',
  {},
  { drop: Int(0, 1_000_000), duplicate: Int(0, 1_000_000), reorder: t.boolean, delayMs: t.refinement(NonNegative, (n) => n <= 600_000, 'at most 600000') },
)
const FaultsInput = closedRecord('faults', {}, { gateway: GatewayFaultsInput, notifications: NotificationFaultsInput })
const SettingsInput = closedRecord(
  'settings',
  {},
  {
    payImmediately: t.boolean,
    qrExpireSec: Int(1, 99_999_999),
    linkExpireSec: Int(1, 99_999_999),
    failedStatus: StatusCode,
    rateLimit: closedRecord('rateLimit', { perSecond: NonNegative, burst: Int(1, 1_000_000) }, {}),
  },
)
const MerchantInput = closedRecord('merchant', { merchant_id: t.string, public_key_pem: t.string }, {})
const NotificationKindInput = t.keyof({ PAYMENT: null, REFUND: null, SUBSCRIPTION: null })
const WaitInput = closedRecord('wait', {}, { timeoutMs: Int(1, 600_000) })

const DAY_MS = 86_400_000

const sendError = (reply: FastifyReply, e: ActionError): FastifyReply => reply.code(e.status).send({ error: e.message })

/** Decodes a body; on failure answers 400 with every violation and returns undefined. */
const bodyOf = <A>(codec: t.Type<A, unknown, unknown>, body: unknown, reply: FastifyReply): A | undefined => {
  const decoded = decodeAll(codec, body ?? {})
  if (E.isRight(decoded)) return decoded.right
  void reply.code(400).send({ error: 'invalid body', violations: decoded.left })
  return undefined
}

const answer = <A>(reply: FastifyReply, result: E.Either<ActionError, A>): FastifyReply => (E.isLeft(result) ? sendError(reply, result.left) : reply.send(result.right))

const clockView = (clock: SandboxClock) => {
  const now = clock.now()
  return { now: now.toISOString(), bangkok: formatBangkokDateTime(now), offset_ms: clock.offsetMs() }
}

/** `to` of clock/set: an ISO-8601 instant, or a gateway timestamp (Bangkok wall time). */
const instantOf = (to: string): Date | undefined => {
  const bangkok = parseBangkokDateTime(to)
  if (E.isRight(bangkok)) return bangkok.right
  const iso = /^\d{4}-\d{2}-\d{2}T/.test(to) ? new Date(to) : undefined
  return iso !== undefined && Number.isFinite(iso.getTime()) ? iso : undefined
}

/** The sandbox's control API (docs/merchant-api.md "Control API"): JSON in, JSON out, under `/_sandbox`. */
export const registerControlApi = (app: FastifyInstance, deps: ControlDeps): void => {
  const { ctx, clock, notifier } = deps
  const p = CONTROL_PREFIX

  /** Moves the clock, then reports the subscription charges the move made. */
  const moveClock = async (reply: FastifyReply, move: () => Promise<void>): Promise<FastifyReply> => {
    const before = new Map(ctx.store.subscriptions().map((s) => [s.recurringBillId, s.charges.length]))
    try {
      await move()
    } catch (e) {
      if (e instanceof RangeError) return reply.code(400).send({ error: e.message })
      throw e
    }
    const charges = ctx.store.subscriptions().flatMap((s) => s.charges.slice(before.get(s.recurringBillId) ?? 0).map((c) => ({ recurring_bill_id: s.recurringBillId, ...c })))
    return reply.send({ ...clockView(clock), charges })
  }

  app.get(p, async () => ({
    gateway: `${ctx.baseUrl()}/gateway`,
    control: `${ctx.baseUrl()}${p}`,
    gateway_public_key: `${ctx.baseUrl()}${GATEWAY_PUBLIC_KEY_PATH}`,
    merchants: deps.merchants.ids(),
    clock: clockView(clock),
    settings: { ...ctx.settings(), rateLimit: deps.rateLimiter.limit() },
    counts: { orders: ctx.store.orders().length, refunds: ctx.store.refunds().length, subscriptions: ctx.store.subscriptions().length, notifications: notifier.list().length },
    routes: CONTROL_ROUTES,
  }))

  app.get(GATEWAY_PUBLIC_KEY_PATH, async (_req, reply) => reply.type('application/x-pem-file').send(deps.publicKeyPem))

  app.get(`${p}/merchants`, async () => ({ merchants: deps.merchants.ids() }))
  app.post(`${p}/merchants`, async (req, reply) => {
    const input = bodyOf(MerchantInput, req.body, reply)
    if (input === undefined) return reply
    const key = loadPublicKey(input.public_key_pem)
    if (E.isLeft(key)) return reply.code(400).send({ error: `public_key_pem: ${key.left.message}` })
    const registered = deps.merchants.register(input.merchant_id, key.right)
    return E.isLeft(registered) ? reply.code(400).send({ error: registered.left }) : reply.code(201).send({ merchants: deps.merchants.ids() })
  })

  app.get(`${p}/settings`, async () => ({ ...ctx.settings(), rateLimit: deps.rateLimiter.limit() }))
  app.put(`${p}/settings`, async (req, reply) => {
    const input = bodyOf(SettingsInput, req.body, reply)
    if (input === undefined) return reply
    const { rateLimit, ...rest } = input
    if (rateLimit !== undefined) deps.rateLimiter.configure(rateLimit)
    return { ...deps.updateSettings(rest), rateLimit: deps.rateLimiter.limit() }
  })

  app.get<{ Querystring: { merchant_id?: string; merchant_order_id?: string } }>(`${p}/orders`, async (req) => ({
    orders: ctx.store
      .orders()
      .filter((o) => (req.query.merchant_id === undefined || o.merchantId === req.query.merchant_id) && (req.query.merchant_order_id === undefined || o.merchantOrderId === req.query.merchant_order_id)),
  }))
  app.post(`${p}/orders`, async (req, reply) => {
    const input = bodyOf(SeedInput, req.body, reply)
    if (input === undefined) return reply
    const seeded = seedOrders(
      ctx,
      input.orders.map((o) => ({ merchantId: o.merchant_id, merchantOrderId: o.merchant_order_id, amount: o.order_amount, currency: o.order_currency ?? 'THB', status: o.order_status ?? 'PS' })),
    )
    return E.isLeft(seeded) ? sendError(reply, seeded.left) : reply.code(201).send({ order_ids: seeded.right })
  })
  app.get<{ Params: IdParams }>(`${p}/orders/:id`, async (req, reply) => {
    const o = ctx.store.order(req.params.id)
    return o === undefined ? sendError(reply, { status: 404, message: `no order with order_id ${req.params.id}` }) : { ...o, refunds: ctx.store.refundsOfOrder(o.orderId) }
  })
  app.post<{ Params: IdParams }>(`${p}/orders/:id/pay`, async (req, reply) => answer(reply, payOrder(ctx, req.params.id)))
  app.post<{ Params: IdParams }>(`${p}/orders/:id/fail`, async (req, reply) => answer(reply, failOrder(ctx, req.params.id)))
  app.post<{ Params: IdParams }>(`${p}/orders/:id/force`, async (req, reply) => {
    const input = bodyOf(OrderForce, req.body, reply)
    if (input === undefined) return reply
    return answer(
      reply,
      forceOrder(ctx, req.params.id, {
        ...(input.order_status === undefined ? {} : { status: input.order_status }),
        ...(input.order_amount === undefined ? {} : { amount: input.order_amount }),
        ...(input.notify === undefined ? {} : { notify: input.notify }),
      }),
    )
  })

  app.get(`${p}/refunds`, async () => ({ refunds: ctx.store.refunds() }))
  app.post(`${p}/refunds`, async (req, reply) => {
    const input = bodyOf(RefundInput, req.body, reply)
    if (input === undefined) return reply
    const refund = createRefund(ctx, {
      orderId: input.order_id,
      merchantRefundId: input.merchant_refund_id,
      amount: input.refund_amount,
      ...(input.refund_reason === undefined ? {} : { reason: input.refund_reason }),
      ...(input.notify_url === undefined ? {} : { notifyUrl: input.notify_url }),
    })
    return E.isLeft(refund) ? sendError(reply, refund.left) : reply.code(201).send(refund.right)
  })

  app.get(`${p}/subscriptions`, async () => ({ subscriptions: ctx.store.subscriptions() }))
  app.get<{ Params: IdParams }>(`${p}/subscriptions/:id`, async (req, reply) => {
    const s = ctx.store.subscription(req.params.id)
    return s === undefined ? sendError(reply, { status: 404, message: `no subscription with recurring_bill_id ${req.params.id}` }) : s
  })
  app.post<{ Params: IdParams }>(`${p}/subscriptions/:id/authorise`, async (req, reply) => answer(reply, authoriseSubscription(ctx, req.params.id)))
  app.put<{ Params: IdParams }>(`${p}/subscriptions/:id/outcomes`, async (req, reply) => {
    const input = bodyOf(OutcomesInput, req.body, reply)
    if (input === undefined) return reply
    return answer(reply, setChargeOutcomes(ctx, req.params.id, input.outcomes))
  })

  app.get(`${p}/clock`, async () => clockView(clock))
  app.post(`${p}/clock/advance`, async (req, reply) => {
    const input = bodyOf(AdvanceInput, req.body, reply)
    if (input === undefined) return reply
    const ms = (input.ms ?? 0) + (input.seconds ?? 0) * 1000 + (input.minutes ?? 0) * 60_000 + (input.hours ?? 0) * 3_600_000 + (input.days ?? 0) * DAY_MS
    return moveClock(reply, () => clock.advance(ms))
  })
  app.post(`${p}/clock/set`, async (req, reply) => {
    const input = bodyOf(SetInput, req.body, reply)
    if (input === undefined) return reply
    const to = instantOf(input.to)
    if (to === undefined) return reply.code(400).send({ error: 'to must be an ISO-8601 instant or yyyy-MM-dd HH:mm:ss (Asia/Bangkok)' })
    return moveClock(reply, () => clock.set(to))
  })

  const faultsView = () => ({ gateway: deps.faults.state(), notifications: notifier.faults() })
  app.get(`${p}/faults`, async () => faultsView())
  app.put(`${p}/faults`, async (req, reply) => {
    const input = bodyOf(FaultsInput, req.body, reply)
    if (input === undefined) return reply
    if (input.gateway !== undefined) deps.faults.set(input.gateway)
    if (input.notifications !== undefined) notifier.setFaults(input.notifications)
    return faultsView()
  })
  app.delete(`${p}/faults`, async () => {
    deps.faults.clear()
    notifier.setFaults({ drop: 0, duplicate: 0, reorder: false, delayMs: 0 })
    return faultsView()
  })

  app.get<{ Querystring: { url?: string; kind?: string } }>(`${p}/notifications`, async (req, reply) => {
    const { url, kind } = req.query
    if (kind !== undefined && !NotificationKindInput.is(kind)) return reply.code(400).send({ error: 'kind must be PAYMENT, REFUND or SUBSCRIPTION' })
    const filter: { url?: string; kind?: NotificationKind } = { ...(url === undefined ? {} : { url }), ...(kind === undefined ? {} : { kind }) }
    return { notifications: notifier.list(filter) }
  })
  app.get<{ Params: IdParams }>(`${p}/notifications/:id`, async (req, reply) => {
    const n = notifier.get(req.params.id)
    return n === undefined ? sendError(reply, { status: 404, message: `no notification ${req.params.id}` }) : n
  })
  app.post(`${p}/notifications/wait`, async (req, reply) => {
    const input = bodyOf(WaitInput, req.body, reply)
    if (input === undefined) return reply
    const timeoutMs = input.timeoutMs ?? 30_000
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs)
    })
    const late = await Promise.race([notifier.idle().then(() => false), timedOut])
    clearTimeout(timer)
    const pending = notifier.list().filter((n) => n.state === 'pending').length
    return late ? reply.code(504).send({ error: `notifications still pending after ${String(timeoutMs)} ms`, pending }) : { pending }
  })

  app.post(`${p}/reset`, async () => {
    deps.reset()
    return { reset: true, clock: clockView(clock) }
  })
}
