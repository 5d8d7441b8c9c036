import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { orderKind, record } from '../../src/application/streams.ts'
import { bangkokDateOf, formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { DEFAULT_PAYMENT_STATUS_TABLE } from '../../src/domain/gateway/statuses.ts'
import { orderStreamName } from '../../src/domain/order/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { clientFor, control, expectRight, MERCHANT_ID } from '../sandbox/support.ts'
import { runCli } from '../support/cli.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from '../support/satang-with-sandbox.ts'
import { sat } from '../domain/support/values.ts'

/**
 * Acceptance (issue 13): satang (in this process, on a fresh database) records payments, refunds and a
 * subscription through the sandbox over real HTTP; the sandbox is then made to disagree in every way
 * the issue names; `satang reconcile --json` runs as a real process and reports each item in its
 * class, heals the missed notifications (the payments then read PS and the ledger posts them), and a
 * second run after some fixes shows those breaks resolved and the others persisting, with their age.
 */

let t: SatangWithSandbox
let pool: Pool
let store: EventStore

const checkout = async (id: string, amount = '100'): Promise<string> => {
  const r = await t.api('POST', '/v1/checkouts', { merchant_order_id: id, order_amount: amount, order_currency: 'THB', order_desc: 'Rice cooker', customer: { merchant_user_id: 'u-1' } })
  expect(r.status, JSON.stringify(r.json)).toBe(201)
  return String(r.json['gateway_order_id'])
}

const settle = async (): Promise<void> => {
  await t.sandbox.notifier.idle()
}

const pay = async (orderId: string): Promise<void> => {
  expect((await control(t.sandbox, 'POST', `/orders/${orderId}/pay`)).status).toBe(200)
  await settle()
}

const env = (): NodeJS.ProcessEnv =>
  t.toolEnv({
    SATANG_GATEWAY_QUERY_MAX_ATTEMPTS: '2',
    SATANG_GATEWAY_RETRY_BASE_MS: '10',
    SATANG_GATEWAY_RETRY_MAX_MS: '20',
    SATANG_RECONCILE_CHARGE_GRACE_HOURS: '0',
  })

type Report = {
  run_id: string
  verdict: string
  counts: { checked: number; matched: number; healed: number; pending: number; unchecked: number; open_breaks: number; breaks: Record<string, number> }
  totals: Record<string, number>
  breaks: ReadonlyArray<{ break_id: string; class: string; status: string; item: { kind: string; id: string }; amount_at_stake_satang: number; age_days: number; first_seen_run_id: string; satang_view: Record<string, unknown>; gateway_view: Record<string, unknown> }>
  resolved: ReadonlyArray<{ break_id: string; class: string; item: { kind: string; id: string }; resolution: string }>
  healed: ReadonlyArray<{ item: { kind: string; id: string }; from: string | null; to: string }>
}

const reconcile = async (args: ReadonlyArray<string>): Promise<{ code: number | null; report: Report; stderr: string }> => {
  const r = await runCli(['reconcile', ...args, '--json', '--no-progress'], { env: env(), cwd: t.dir })
  if (r.stdout.trim() === '') throw new Error(`satang reconcile printed nothing (exit ${String(r.code)}): ${r.stderr}`)
  return { code: r.code, report: JSON.parse(r.stdout) as Report, stderr: r.stderr }
}

const breakOf = (report: Report, kind: string, id: string) => report.breaks.filter((b) => b.item.kind === kind && b.item.id === id)

let today: string
let sandboxNow: string
let lastDay: string
let first: Awaited<ReturnType<typeof reconcile>>

beforeAll(async () => {
  t = await startSatangWithSandbox('reconcile')
  pool = new Pool({ connectionString: t.databaseUrl, max: 2 })
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
  today = formatCalendarDate(bangkokDateOf(new Date()))

  // A query that keeps failing: the first order the run checks (orders are checked in creation order).
  await pay(await checkout('FAIL-1'))
  // Consistent.
  await pay(await checkout('OK-1'))
  // Notifications the sandbox dropped: the gateway says PS, satang still PI.
  for (const id of ['DROP-1', 'DROP-2']) {
    const orderId = await checkout(id)
    t.sandbox.notifier.setFaults({ drop: 5 })
    await pay(orderId)
  }
  // The gateway-side amount or status forced (silently).
  const amount = await checkout('AMT-1')
  await pay(amount)
  expect((await control(t.sandbox, 'POST', `/orders/${amount}/force`, { order_amount: '120.00' })).status).toBe(200)
  const status = await checkout('STAT-1')
  await pay(status)
  expect((await control(t.sandbox, 'POST', `/orders/${status}/force`, { order_status: 'PI' })).status).toBe(200)
  const unknown = await checkout('ZZ-1')
  await pay(unknown)
  expect((await control(t.sandbox, 'POST', `/orders/${unknown}/force`, { order_status: 'ZZ' })).status).toBe(200)

  // An order the gateway never received: satang holds it as accepted, the gateway has no such order.
  const ghost = orderStreamName(MERCHANT_ID, 'GHOST-1')
  const recordOrder = record({ store, now: () => new Date(), newId: randomUUID }, orderKind)
  const cause = { cause: { correlationId: 'test', causationId: 'test' } }
  const body = { version: 'v1', service: 'svc.checkout.apply', merchant_id: MERCHANT_ID, merchant_order_id: 'GHOST-1', order_amount: '50.00', order_currency: 'THB', order_desc: 'Lost', customer: { merchant_user_id: 'u-1' } } as const
  for (const command of [
    { type: 'CreateOrder', merchantId: MERCHANT_ID, storeId: null, merchantOrderId: 'GHOST-1', operation: 'checkout', service: 'svc.checkout.apply', paymentMethod: null, productCode: null, amount: sat(5000n), currency: 'THB', orderDesc: 'Lost', merchantUrls: { notifyUrl: null, redirectUrl: null, cancelUrl: null }, createdAt: new Date() },
    { type: 'RequestPayment', request: { operation: 'checkout', body }, requestedAt: new Date() },
    {
      type: 'RecordPaymentAccepted',
      response: { merchant_id: MERCHANT_ID, merchant_order_id: 'GHOST-1', order_id: '299912310000000001', order_status: 'PI', order_amount: '50.00', order_currency: 'THB', link_url: 'https://gateway.example/c/1', create_time: '2026-01-01 10:00:00' },
      traceId: 'ghost',
      receivedAt: new Date(),
      statusTable: DEFAULT_PAYMENT_STATUS_TABLE,
    },
  ] as const) expect(E.isRight(await recordOrder(ghost, () => command, cause)())).toBe(true)

  // An order created at the sandbox directly (another system with the merchant's key); its notification reaches satang.
  const direct = expectRight(
    await clientFor(t.sandbox).applyCheckout({
      merchant_id: MERCHANT_ID,
      merchant_order_id: 'DIRECT-1',
      order_amount: '75.00',
      order_currency: 'THB',
      order_desc: 'Sold elsewhere',
      customer: { merchant_user_id: 'u-9' },
      notify_url: `${t.satang.publicUrl}/callbacks/notifications`,
    })(),
  )
  await pay(direct.data.order_id)
  // Every delivery attempt (the sandbox tries 5 times) is lost for the notifications dropped below.

  // A refund satang never heard of (tracked, its notification dropped).
  const refunded = await checkout('REF-ORD-1')
  await pay(refunded)
  expect((await t.api('POST', '/v1/refunds', { merchant_refund_id: 'REF-1', merchant_order_id: 'REF-ORD-1' })).status).toBe(201)
  t.sandbox.notifier.setFaults({ drop: 5 })
  expect((await control(t.sandbox, 'POST', '/refunds', { order_id: refunded, merchant_refund_id: 'REF-1', refund_amount: '30.00' })).status).toBe(201)
  await settle()

  // Two refunds exceeding the payment: 60 recorded, then 60 more the gateway was made to accept.
  const over = await checkout('OVER-1')
  await pay(over)
  expect((await control(t.sandbox, 'POST', '/refunds', { order_id: over, merchant_refund_id: 'OVER-R1', refund_amount: '60.00' })).status).toBe(201)
  await settle()
  expect((await t.api('POST', '/v1/refunds', { merchant_refund_id: 'OVER-R2', merchant_order_id: 'OVER-1' })).status).toBe(201)
  await control(t.sandbox, 'POST', `/orders/${over}/force`, { order_amount: '200.00' })
  t.sandbox.notifier.setFaults({ drop: 5 })
  expect((await control(t.sandbox, 'POST', '/refunds', { order_id: over, merchant_refund_id: 'OVER-R2', refund_amount: '60.00' })).status).toBe(201)
  await settle()
  await control(t.sandbox, 'POST', `/orders/${over}/force`, { order_amount: '100.00' })

  // A subscription with a missing charge (its notification dropped) and an unexpected one (the plan
  // changed at the gateway by another system: satang's plan has no term left).
  const plan = { merchant_subscribe_id: 'SUB-1', plan_name: 'Coffee club', interval_type: 'MONTHLY', interval: '1', total_terms: '2', billing_amount: '299.00', billing_currency: 'THB', retry: 'Y' } as const
  const created = await t.api('POST', '/v1/subscriptions', { ...plan, customer: { merchant_user_id: 'u-1' } })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  expect((await control(t.sandbox, 'POST', `/subscriptions/${String(created.json['recurring_bill_id'])}/authorise`)).status).toBe(200)
  await settle()
  t.sandbox.notifier.setFaults({ drop: 5 })
  await control(t.sandbox, 'POST', '/clock/advance', { days: 31 })
  await settle()
  const clockNow = await control(t.sandbox, 'GET', '/clock')
  const restart = formatCalendarDate(bangkokDateOf(new Date(new Date(String(clockNow.json['now'])).getTime() + 2 * 86_400_000)))
  expectRight(
    await clientFor(t.sandbox).updateSubscription({ ...plan, merchant_id: MERCHANT_ID, start_date: restart })(),
  )
  await control(t.sandbox, 'POST', '/clock/advance', { days: 3 })
  await settle()
  const after = await control(t.sandbox, 'GET', '/clock')
  sandboxNow = String(after.json['now'])
  lastDay = formatCalendarDate(bangkokDateOf(new Date(sandboxNow)))

  // The gateway cannot answer payment queries for a while: the first query of the run fails twice.
  await control(t.sandbox, 'PUT', '/faults', { gateway: { http5xx: { count: 2, status: 503 }, services: ['svc.payment.query'] } })
  first = await reconcile(['--from', today, '--to', lastDay, '--as-of', sandboxNow, '--concurrency', '1'])
}, 240_000)

afterAll(async () => {
  await store.close()
  await pool.end()
  await t.stop()
})

describe('satang reconcile against the sandbox', () => {
  it('reports every item in its class; a query that keeps failing makes the run incomplete (exit 3)', () => {
    const r = first.report
    expect(first.code, first.stderr).toBe(3)
    expect(r.verdict).toBe('incomplete')
    const classOf = (kind: string, id: string): ReadonlyArray<string> => breakOf(r, kind, id).map((b) => b.class)
    expect(classOf('payment', 'FAIL-1')).toEqual(['query_failed'])
    expect(classOf('payment', 'AMT-1')).toEqual(['amount_mismatch'])
    expect(classOf('payment', 'STAT-1')).toEqual(['status_conflict'])
    expect(classOf('payment', 'ZZ-1')).toEqual(['unknown_status'])
    expect(classOf('payment', 'GHOST-1')).toEqual(['missing_at_gateway'])
    expect(classOf('unmatched_callback', 'DIRECT-1')).toEqual(['missing_internal'])
    expect(classOf('refund', 'OVER-R2')).toEqual(['refund_exceeds_payment'])
    expect(r.breaks.filter((b) => b.item.kind === 'subscription').map((b) => b.class).sort()).toEqual(['missing_charge', 'unexpected_charge'])
    expect(breakOf(r, 'payment', 'OK-1')).toEqual([])
    expect(breakOf(r, 'payment', 'AMT-1')[0]).toMatchObject({ status: 'new', amount_at_stake_satang: 2000, satang_view: { amount_satang: '10000' }, gateway_view: { order_amount: '120.00' } })
    expect(r.counts).toMatchObject({ unchecked: 1, breaks: { query_failed: 1, amount_mismatch: 1, status_conflict: 1, unknown_status: 1, missing_at_gateway: 1, missing_internal: 1, refund_exceeds_payment: 1, missing_charge: 1, unexpected_charge: 1 } })
    expect(r.counts.checked).toBe(r.counts.matched + r.counts.healed + r.counts.pending + r.counts.unchecked + r.counts.open_breaks)
  })

  it('heals the missed notifications: the payments read PS, the ledger posts them, the refund is recorded', async () => {
    expect(first.report.healed.map((h) => `${h.item.kind}:${h.item.id}:${h.from ?? ''}>${h.to}`).sort()).toEqual(['payment:DROP-1:PI>PS', 'payment:DROP-2:PI>PS', 'refund:REF-1:>RS'])
    for (const id of ['DROP-1', 'DROP-2']) {
      const p = await t.api('GET', `/v1/payments/${id}`)
      expect(p.json).toMatchObject({ paid: true, status: { code: 'PS', source: 'query' } })
      const ledger = await t.api('GET', `/v1/ledger/entries?merchant_order_id=${id}`)
      expect((ledger.json['entries'] as ReadonlyArray<{ posting_kind: string }>).map((e) => e.posting_kind)).toEqual(['order_paid', 'order_paid'])
    }
    const refund = await t.api('GET', '/v1/refunds/REF-1')
    expect(refund.json).toMatchObject({ status: { code: 'RS', source: 'query' }, recorded: { refund_amount: '30.00' } })
    // The evidence is on the item's own stream, from the reconciliation.
    const audit = await t.api('GET', '/v1/audit/order/DROP-1')
    expect((audit.json['events'] as ReadonlyArray<{ type: string; source: string }>).at(-1)).toMatchObject({ type: 'StatusObserved', source: 'reconciliation' })
  })

  it('the read models and /v1/reconciliation show the run, its breaks and the day', async () => {
    const runs = await t.api('GET', '/v1/reconciliation/runs')
    expect((runs.json['runs'] as ReadonlyArray<{ run_id: string; status: string; verdict: string }>)[0]).toMatchObject({ run_id: first.report.run_id, status: 'completed', verdict: 'incomplete' })
    const open = await t.api('GET', '/v1/reconciliation/breaks?status=open&class=amount_mismatch')
    expect((open.json['breaks'] as ReadonlyArray<{ item: { id: string }; age_bucket: string }>).map((b) => [b.item.id, b.age_bucket])).toEqual([['AMT-1', '0-1']])
    const days = await t.api('GET', `/v1/reconciliation/days?from=${today}&to=${today}`)
    expect(days.json['days']).toMatchObject([{ day: today, verdict: 'incomplete' }])
    expect((await t.api('GET', '/v1/reconciliation/days?from=2026-02-30&to=x')).status).toBe(400)
  })

  it('a second run after some fixes shows those resolved and the rest persisting with their ages', async () => {
    await control(t.sandbox, 'DELETE', '/faults')
    const amt = await control(t.sandbox, 'GET', `/orders?merchant_id=${MERCHANT_ID}&merchant_order_id=AMT-1`)
    const amtOrder = (amt.json['orders'] as ReadonlyArray<{ orderId: string }>)[0]
    expect((await control(t.sandbox, 'POST', `/orders/${String(amtOrder?.orderId)}/force`, { order_amount: '100.00' })).status).toBe(200)

    const second = await reconcile(['--from', today, '--to', lastDay, '--as-of', sandboxNow])
    expect(second.code, second.stderr).toBe(1)
    expect(second.report.verdict).toBe('breaks')
    expect(second.report.resolved.map((b) => `${b.item.id}:${b.class}:${b.resolution}`).sort()).toEqual(['AMT-1:amount_mismatch:consistent', 'FAIL-1:query_failed:consistent'])
    const persisting = second.report.breaks.filter((b) => b.status === 'persisting')
    expect(persisting.map((b) => b.item.id).sort()).toEqual(['DIRECT-1', 'GHOST-1', 'OVER-R2', 'STAT-1', 'ZZ-1', ...second.report.breaks.filter((b) => b.item.kind === 'subscription').map((b) => b.item.id)].sort())
    for (const b of persisting) expect(b).toMatchObject({ first_seen_run_id: first.report.run_id, age_days: 0 })
    expect(second.report.healed).toEqual([])

    const resolved = await t.api('GET', '/v1/reconciliation/breaks?status=resolved')
    expect((resolved.json['breaks'] as ReadonlyArray<{ item: { id: string } }>).map((b) => b.item.id).sort()).toEqual(['AMT-1', 'FAIL-1'])
  })

  it('a person acknowledges a break with a reason (HTTP and CLI); later runs leave it closed', async () => {
    const open = await t.api('GET', '/v1/reconciliation/breaks?status=open&class=status_conflict')
    const id = (open.json['breaks'] as ReadonlyArray<{ break_id: string }>)[0]?.break_id ?? ''
    const acked = await t.api('POST', `/v1/reconciliation/breaks/${id}/acknowledge`, { reason: 'gateway confirmed the reversal by e-mail' })
    expect(acked).toMatchObject({ status: 200, json: { status: 'acknowledged', acknowledged_by: 'test', already_acknowledged: false } })
    expect((await t.api('POST', `/v1/reconciliation/breaks/${id}/acknowledge`, {})).status).toBe(400)

    const ghost = await t.api('GET', '/v1/reconciliation/breaks?status=open&item_id=GHOST-1')
    const ghostId = (ghost.json['breaks'] as ReadonlyArray<{ break_id: string }>)[0]?.break_id ?? ''
    const cli = await runCli(['reconcile', 'ack', ghostId, '--reason', 'order cancelled by phone', '--actor', 'finance-ops', '--json'], { env: env(), cwd: t.dir })
    expect(cli.code, cli.stderr).toBe(0)
    expect(JSON.parse(cli.stdout)).toMatchObject({ break_id: ghostId, acknowledged_by: 'finance-ops', reason: 'order cancelled by phone' })
    expect((await runCli(['reconcile', 'ack', ghostId], { env: env(), cwd: t.dir })).code).toBe(2)

    const third = await reconcile(['--from', today, '--to', lastDay, '--as-of', sandboxNow])
    expect(third.report.breaks.map((b) => b.item.id)).not.toContain('STAT-1')
    expect(third.report.counts).toMatchObject({ acknowledged: 2 })
  })
})
