import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { callbackRejected } from '../../src/domain/events/common/callback-rejected.ts'
import { eventDefinitions } from '../../src/domain/events/registry.ts'
import type { SubscriptionNotification } from '../../src/domain/gateway/notification.ts'
import type { SubscriptionCreateRequest } from '../../src/domain/gateway/subscription.ts'
import {
  decide,
  evolve,
  fold,
  initialSubscriptionState,
  subscriptionStatusOf,
  subscriptionStreamName,
  type SubscriptionCommand,
  type SubscriptionEvent,
  type SubscriptionState,
} from '../../src/domain/subscription/index.ts'
import { formatAmount } from '../../src/domain/money.ts'
import { addDays } from '../../src/domain/subscription-schedule.ts'
import { encodeSubscriptionView, type SubscriptionView } from '../../src/projections/subscriptions/state.ts'
import { chargeRowOf, evolveSubscriptionView, foldSubscriptionView, subscriptionRowOf, subscriptionsProjection } from '../../src/projections/subscriptions/projection.ts'
import type { ProjectedEvent } from '../../src/projections/types.ts'
import { aCreateAnswer, aCreateRequest, anUpdateRequest, aSubscriptionNotification, aSubscriptionRedirect, MERCHANT_URLS } from '../domain/subscription/builders.ts'
import { at, MERCHANT_ID } from '../domain/support/values.ts'
import { applyInTransaction, bangkok, canonicalRows, makeEventFactory, projectionSchemas } from './support.ts'


const readSubscriptions = (pool: Pool, schema: string, streams?: ReadonlyArray<string>) => canonicalRows(pool, schema, 'subscriptions', 'stream_name', streams)
const readCharges = (pool: Pool, schema: string, streams?: ReadonlyArray<string>) => canonicalRows(pool, schema, 'subscription_charges', 'position', streams)

/** What both tables must hold for `streams`: the rows of the fold of each stream's events, plus the generated and internal columns. */
const expectedTables = (streams: ReadonlyArray<string>, log: ReadonlyArray<ProjectedEvent>) => {
  const subscriptions: Array<Record<string, unknown>> = []
  const charges: Array<Record<string, unknown>> = []
  for (const stream of [...streams].sort()) {
    let view: SubscriptionView | null = null
    for (const pe of log.filter((e) => e.streamName === stream)) {
      view = evolveSubscriptionView(view, pe)
      const charge = chargeRowOf(view, pe)
      if (charge !== null) charges.push({ ...charge, observed_at_bangkok: bangkok(charge.observed_at) })
    }
    if (view === null) continue
    const row = subscriptionRowOf(stream, view)
    subscriptions.push({
      ...row,
      created_at_bangkok: bangkok(row.created_at),
      updated_at_bangkok: bangkok(row.updated_at),
      projection_state: JSON.parse(JSON.stringify(encodeSubscriptionView(view))) as unknown,
    })
  }
  charges.sort((a, b) => String(a.position).localeCompare(String(b.position)))
  return { subscriptions, charges }
}

const withoutKeys = (s: SubscriptionState): SubscriptionState => (s._tag === 'Subscription' ? { ...s, observationKeys: new Set() } : s)

// ---- building subscription streams with the domain's decide ----

const billIdOf = (id: string): string => `BILL-${id}`.slice(0, 20)

/** One subscription's commands, as the application would issue them. */
const commandsFor = (id: string) => {
  const ids = { merchant_id: MERCHANT_ID, merchant_subscribe_id: id, recurring_bill_id: billIdOf(id) }
  return {
    request: (o: Partial<SubscriptionCreateRequest> = {}, minute = 0): SubscriptionCommand => ({
      type: 'RequestSubscription',
      request: aCreateRequest({ merchant_subscribe_id: id, ...o }),
      merchantUrls: MERCHANT_URLS,
      requestedAt: at(minute),
    }),
    created: (minute = 1): SubscriptionCommand => ({
      type: 'RecordSubscriptionCreated',
      response: aCreateAnswer({ merchant_subscribe_id: id, recurring_bill_id: billIdOf(id) }),
      traceId: `trace-${id}`,
      receivedAt: at(minute),
    }),
    createUnknown: (minute = 1): SubscriptionCommand => ({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'timeout', httpStatus: null, traceId: null, since: at(minute) }),
    requestFailed: (minute = 1): SubscriptionCommand => ({
      type: 'RecordSubscriptionRequestFailed',
      failure: { reason: 'gateway_rejected', code: 400001, message: 'invalid parameter', traceId: 't' },
      failedAt: at(minute),
    }),
    notified: (o: { readonly type: NonNullable<SubscriptionNotification['type']>; readonly status?: SubscriptionNotification['status']; readonly date?: string; readonly amount?: string; readonly verified?: boolean }, minute = 60): SubscriptionCommand => ({
      type: 'ReceiveSubscriptionNotification',
      notification: aSubscriptionNotification({ ...ids, type: o.type, status: o.status ?? 'SUCCESS', billing_amount: o.amount ?? '299.00', ...(o.date === undefined ? {} : { billing_date: o.date }) }),
      signature: o.verified === false ? { verified: false, reason: 'bad signature' } : { verified: true },
      callbackId: `cb-${id}-${String(minute)}`,
      receivedAt: at(minute),
    }),
    redirected: (minute = 61): SubscriptionCommand => ({
      type: 'ReceiveSubscriptionRedirect',
      form: aSubscriptionRedirect({ ...ids, type: 'Created', status: 'SUCCESS' }),
      signature: { verified: true },
      callbackId: `rd-${id}-${String(minute)}`,
      receivedAt: at(minute),
    }),
    update: (minute = 100): SubscriptionCommand => ({ type: 'RequestSubscriptionUpdate', request: anUpdateRequest({ merchant_subscribe_id: id, start_date: '2026-03-31' }), requestedAt: at(minute) }),
    updated: (minute = 101): SubscriptionCommand => ({
      type: 'RecordSubscriptionUpdated',
      response: { ...ids, recurring_bill_status: 'ACTIVE', link_url: `https://gateway.example/s/${id}` },
      traceId: `trace-up-${id}`,
      receivedAt: at(minute),
    }),
    cancel: (minute = 200): SubscriptionCommand => ({
      type: 'RequestSubscriptionCancel',
      request: { version: 'v1', service: 'svc.recurring.cancel', merchant_id: MERCHANT_ID, merchant_subscribe_id: id },
      requestedAt: at(minute),
    }),
    cancelled: (minute = 201): SubscriptionCommand => ({ type: 'RecordSubscriptionCancelled', traceId: `trace-c-${id}`, receivedAt: at(minute) }),
    outcomeUnknown: (minute = 201): SubscriptionCommand => ({ type: 'RecordSubscriptionOutcomeUnknown', reason: 'http_5xx', httpStatus: 503, traceId: null, since: at(minute) }),
  }
}

/** Decides `commands` in order on one subscription's state; refused commands decide nothing. */
const decideAll = (commands: ReadonlyArray<SubscriptionCommand>, start: ReadonlyArray<SubscriptionEvent> = []): Array<SubscriptionEvent> => {
  const events = [...start]
  for (const c of commands) {
    const decided = decide(c, events.reduce(evolve, initialSubscriptionState))
    if (E.isRight(decided)) events.push(...decided.right)
  }
  return events
}

const deducted = (date: string, status: 'SUCCESS' | 'FAIL', amount = '299.00') => ({ type: 'Deducted' as const, status, date, amount })

describe('the subscriptions projection (real PostgreSQL)', () => {
  const schemas = projectionSchemas(subscriptionsProjection)
  let pool: Pool
  const freshSchema = schemas.fresh

  beforeAll(() => {
    pool = schemas.pool()
  })
  afterAll(() => schemas.drop())

  it('a monthly subscription started 31 January: the next charge date follows the month-end rule, three failures suspend it', async () => {
    const schema = await freshSchema('subs_monthly')
    const id = 'SUB-JAN31'
    const stream = subscriptionStreamName(MERCHANT_ID, id)
    const c = commandsFor(id)
    const make = makeEventFactory()
    const log: ProjectedEvent[] = []
    const rowAfter = async (commands: ReadonlyArray<SubscriptionCommand>, start: ReadonlyArray<SubscriptionEvent>) => {
      const events = decideAll(commands, start)
      const batch = events.slice(start.length).map((e) => make(stream, e))
      log.push(...batch)
      await applyInTransaction(pool, schema, subscriptionsProjection, batch)
      const [row] = await readSubscriptions(pool, schema)
      return { events, row }
    }

    const requested = await rowAfter([c.request({ start_date: '2026-01-31', total_terms: '12', retry: 'Y' }), c.created()], [])
    // Created, not yet authorised by the payer: no charge is expected.
    expect(requested.row).toMatchObject({ status: 'CREATED', next_charge_date: null, start_date: '2026-01-31', interval_type: 'MONTHLY', interval_count: 1, total_terms: 12 })
    const active = await rowAfter([c.notified({ type: 'Created' }, 50)], requested.events)
    expect(active.row).toMatchObject({ status: 'ACTIVE', next_charge_date: '2026-01-31', recurring_bill_id: billIdOf(id) })
    const jan = await rowAfter([c.notified(deducted('2026-01-31', 'SUCCESS'), 60)], active.events)
    expect(jan.row).toMatchObject({ next_charge_date: '2026-02-28', charges_succeeded: 1, terms_charged: 1, last_charge_date: '2026-01-31' })
    const feb = await rowAfter([c.notified(deducted('2026-02-28', 'SUCCESS'), 70)], jan.events)
    // Counted from the start date, not from the clamped 28 February.
    expect(feb.row).toMatchObject({ next_charge_date: '2026-03-31', charges_succeeded: 2, last_charge_date: '2026-02-28' })
    const fail1 = await rowAfter([c.notified(deducted('2026-03-31', 'FAIL'), 80)], feb.events)
    expect(fail1.row).toMatchObject({ status: 'ACTIVE', next_charge_date: '2026-04-01', consecutive_failures: 1, charges_failed: 1, last_failed_charge_date: '2026-03-31' })
    const fail2 = await rowAfter([c.notified(deducted('2026-04-01', 'FAIL'), 90)], fail1.events)
    expect(fail2.row).toMatchObject({ status: 'ACTIVE', next_charge_date: '2026-04-02', consecutive_failures: 2 })
    const fail3 = await rowAfter([c.notified(deducted('2026-04-02', 'FAIL'), 100)], fail2.events)
    expect(fail3.events.at(-1)?.type).toBe('SubscriptionSuspended')
    expect(fail3.row).toMatchObject({
      status: 'SUSPEND',
      next_charge_date: null,
      consecutive_failures: 3,
      charges_succeeded: 2,
      charges_failed: 3,
      last_charge_date: '2026-02-28',
      last_failed_charge_date: '2026-04-02',
      billing_amount_satang: '29900',
      currency: 'THB',
      retry: 'Y',
      needs_review: false,
      created_at: at(0).toISOString(),
      created_at_bangkok: '2026-01-01T10:00:00.000',
    })
    expect(subscriptionStatusOf(fold(fail3.events))).toBe('SUSPEND')

    const charges = await readCharges(pool, schema)
    expect(charges.map((r) => [r.billing_date, r.outcome, r.amount_satang, r.expected_amount_satang, r.currency, r.amount_reported, r.notification_type])).toEqual([
      ['2026-01-31', 'succeeded', '29900', '29900', 'THB', true, 'Deducted'],
      ['2026-02-28', 'succeeded', '29900', '29900', 'THB', true, 'Deducted'],
      ['2026-03-31', 'failed', null, '29900', 'THB', null, 'Deducted'],
      ['2026-04-01', 'failed', null, '29900', 'THB', null, 'Deducted'],
      ['2026-04-02', 'failed', null, '29900', 'THB', null, 'Deducted'],
    ])
    expect(charges[0]).toMatchObject({ merchant_id: MERCHANT_ID, merchant_subscribe_id: id, recurring_bill_id: billIdOf(id), observed_at: at(60).toISOString(), observed_at_bangkok: '2026-01-01T11:00:00.000' })
    const expected = expectedTables([stream], log)
    expect(await readSubscriptions(pool, schema)).toEqual(expected.subscriptions)
    expect(charges).toEqual(expected.charges)
  })

  it('cancel shows the derived CANCELLED and no next charge; the last term shows COMPLETED', async () => {
    const schema = await freshSchema('subs_end')
    const make = makeEventFactory()
    const cancelId = 'SUB-CANCEL'
    const c = commandsFor(cancelId)
    const cancelled = decideAll([
      c.request({ start_date: '2026-01-15' }),
      c.created(),
      c.notified({ type: 'Created_Deducted', date: '2026-01-15' }),
      c.cancel(),
      c.cancelled(),
      // A deduction reported after the cancel is kept as a charge outcome but changes no schedule.
      c.notified(deducted('2026-02-15', 'SUCCESS'), 300),
    ])
    const doneId = 'SUB-DONE'
    const d = commandsFor(doneId)
    const completed = decideAll([
      d.request({ start_date: '2026-01-31', total_terms: '2' }),
      d.created(),
      d.notified({ type: 'Created' }, 50),
      d.notified(deducted('2026-01-31', 'SUCCESS'), 60),
      d.notified(deducted('2026-02-28', 'SUCCESS'), 70),
    ])
    const unknownId = 'SUB-UNKNOWN'
    const u = commandsFor(unknownId)
    const unknown = decideAll([u.request(), u.createUnknown()])
    const log = [
      ...cancelled.map((e) => make(subscriptionStreamName(MERCHANT_ID, cancelId), e)),
      ...completed.map((e) => make(subscriptionStreamName(MERCHANT_ID, doneId), e)),
      ...unknown.map((e) => make(subscriptionStreamName(MERCHANT_ID, unknownId), e)),
    ]
    await applyInTransaction(pool, schema, subscriptionsProjection, log)
    const rows = await readSubscriptions(pool, schema)
    expect(rows.map((r) => [r.merchant_subscribe_id, r.status, r.next_charge_date, r.charges_succeeded, r.pending_operation, r.pending_phase])).toEqual([
      ['SUB-CANCEL', 'CANCELLED', null, 2, null, null],
      ['SUB-DONE', 'COMPLETED', null, 2, null, null],
      ['SUB-UNKNOWN', 'OUTCOME_UNKNOWN', null, 0, 'create', 'outcome_unknown'],
    ])
    const streams = [cancelId, doneId, unknownId].map((id) => subscriptionStreamName(MERCHANT_ID, id))
    const expected = expectedTables(streams, log)
    expect(rows).toEqual(expected.subscriptions)
    expect(await readCharges(pool, schema)).toEqual(expected.charges)
  })

  it('one batch, one event per batch and random batches give identical rows in both tables (internal state included)', async () => {
    const make = makeEventFactory()
    const a = commandsFor('SUB-A')
    const b = commandsFor('SUB-B')
    const perStream = [
      decideAll([
        a.request({ start_date: '2026-01-31' }),
        a.created(),
        a.redirected(49),
        a.notified({ type: 'Created' }, 50),
        a.notified(deducted('2026-01-31', 'SUCCESS'), 60),
        a.notified({ type: 'Deducted', date: '2026-02-28', amount: '1.00' }, 70),
        a.update(),
        a.updated(),
        a.notified(deducted('2026-03-31', 'FAIL', '349.00'), 110),
      ]),
      decideAll([b.request({ interval_type: 'WEEKLY', start_date: '2026-02-01', retry: 'N' }), b.created(), b.notified({ type: 'Created_Deducted', date: '2026-02-01' }, 55), b.notified(deducted('2026-02-08', 'FAIL'), 65)]),
    ]
    const log: ProjectedEvent[] = []
    for (let i = 0; i < Math.max(...perStream.map((p) => p.length)); i += 1) {
      perStream.forEach((events, k) => {
        const e = events[i]
        if (e !== undefined) log.push(make(subscriptionStreamName(MERCHANT_ID, k === 0 ? 'SUB-A' : 'SUB-B'), e))
      })
    }
    const one = await freshSchema('subs_one')
    await applyInTransaction(pool, one, subscriptionsProjection, log)
    const each = await freshSchema('subs_each')
    for (const e of log) await applyInTransaction(pool, each, subscriptionsProjection, [e])
    const split = await freshSchema('subs_split')
    for (const batch of [log.slice(0, 5), log.slice(5, 6), log.slice(6, 13), log.slice(13)]) await applyInTransaction(pool, split, subscriptionsProjection, batch)

    const subscriptions = await readSubscriptions(pool, one)
    const charges = await readCharges(pool, one)
    for (const schema of [each, split]) {
      expect(await readSubscriptions(pool, schema)).toEqual(subscriptions)
      expect(await readCharges(pool, schema)).toEqual(charges)
    }
    expect(subscriptions.map((r) => [r.merchant_subscribe_id, r.status, r.billing_amount_satang, r.start_date, r.next_charge_date, r.terms_charged, r.charges_succeeded, r.charges_failed, r.needs_review])).toEqual([
      // The 1.00 deduction disagrees with the plan: a discrepancy. The update restarts the schedule at its start date (31 March).
      ['SUB-A', 'ACTIVE', '34900', '2026-03-31', '2026-04-01', 0, 1, 1, true],
      // retry = N: the failed week is skipped, billing goes on a week later.
      ['SUB-B', 'ACTIVE', '29900', '2026-02-01', '2026-02-15', 1, 1, 1, false],
    ])
    expect(charges.map((r) => [r.merchant_subscribe_id, r.billing_date, r.outcome, r.expected_amount_satang])).toEqual([
      ['SUB-B', '2026-02-01', 'succeeded', '29900'],
      ['SUB-A', '2026-01-31', 'succeeded', '29900'],
      ['SUB-B', '2026-02-08', 'failed', '29900'],
      ['SUB-A', '2026-03-31', 'failed', '34900'],
    ])
  })

  it('answers finance and support: subscriptions due tomorrow in Bangkok, failed charges this month', async () => {
    const schema = await freshSchema('subs_sql')
    const make = makeEventFactory()
    const log: ProjectedEvent[] = []
    const add = (id: string, commands: (c: ReturnType<typeof commandsFor>) => ReadonlyArray<SubscriptionCommand>) => {
      for (const e of decideAll(commands(commandsFor(id)))) log.push(make(subscriptionStreamName(MERCHANT_ID, id), e))
    }
    add('DUE-1', (c) => [c.request({ start_date: '2026-03-01' }), c.created(), c.notified({ type: 'Created' }, 50)])
    add('DUE-2', (c) => [c.request({ start_date: '2026-02-01' }), c.created(), c.notified({ type: 'Created_Deducted', date: '2026-02-01' }, 50)])
    add('RETRY', (c) => [c.request({ start_date: '2026-02-28' }), c.created(), c.notified({ type: 'Created' }, 50), c.notified(deducted('2026-02-28', 'FAIL'), 60)])
    add('LATER', (c) => [c.request({ start_date: '2026-03-02' }), c.created(), c.notified({ type: 'Created' }, 50)])
    add('NOT-AUTHORISED', (c) => [c.request({ start_date: '2026-03-01' }), c.created()])
    await applyInTransaction(pool, schema, subscriptionsProjection, log)

    // "Today" in Bangkok is 28 February 2026 (the instant is still 27 February in UTC).
    const now = new Date('2026-02-27T18:30:00.000Z')
    const due = await pool.query<{ merchant_subscribe_id: string }>(
      `select merchant_subscribe_id from "${schema}".subscriptions
        where next_charge_date = ($1::timestamptz at time zone 'Asia/Bangkok')::date + 1 order by merchant_subscribe_id`,
      [now],
    )
    expect(due.rows.map((r) => r.merchant_subscribe_id)).toEqual(['DUE-1', 'DUE-2', 'RETRY'])
    const failed = await pool.query<{ merchant_subscribe_id: string; billing_date: string; expected_amount_satang: string }>(
      `select merchant_subscribe_id, to_char(billing_date, 'YYYY-MM-DD') as billing_date, expected_amount_satang::text
         from "${schema}".subscription_charges
        where outcome = 'failed' and billing_date >= date_trunc('month', $1::timestamptz at time zone 'Asia/Bangkok')::date`,
      [now],
    )
    expect(failed.rows).toEqual([{ merchant_subscribe_id: 'RETRY', billing_date: '2026-02-28', expected_amount_satang: '29900' }])
  })

  it('events before the create request make no row; a kept state it cannot read stops the projection with a clear error', async () => {
    const schema = await freshSchema('subs_bad')
    const id = 'SUB-BAD'
    const stream = subscriptionStreamName(MERCHANT_ID, id)
    const make = makeEventFactory()
    const rejected = callbackRejected.make({ callback: 'subscription_notification', reason: 'bad_signature', detail: 'x', violations: [], callbackId: 'cb', receivedAt: at(1), payload: null })
    await applyInTransaction(pool, schema, subscriptionsProjection, [make(stream, rejected)])
    expect(await readSubscriptions(pool, schema)).toEqual([])
    const c = commandsFor(id)
    const events = decideAll([c.request(), c.created()])
    await applyInTransaction(pool, schema, subscriptionsProjection, events.map((e) => make(stream, e)))
    expect(await readSubscriptions(pool, schema)).toHaveLength(1)
    await pool.query(`update "${schema}".subscriptions set projection_state = jsonb_set(projection_state, '{state,lifecycle}', '"sleeping"')`)
    const next = decideAll([c.notified({ type: 'Created' })], events).slice(events.length)
    await expect(applyInTransaction(pool, schema, subscriptionsProjection, next.map((e) => make(stream, e)))).rejects.toThrow(/SUB-BAD.*lifecycle/)
    const foreign = make(stream, eventDefinitions.RefundTracked.make({ merchantId: MERCHANT_ID, merchantRefundId: 'R', merchantOrderId: 'O', trackedBy: 'merchant', trackedAt: at(1) }))
    const other = await freshSchema('subs_foreign')
    await expect(applyInTransaction(pool, other, subscriptionsProjection, [foreign])).rejects.toThrow(/RefundTracked is not an event of a subscription stream/)
  })

  it('property: for random commands on two subscriptions, split into random batches, both tables equal the rows of the fold', async () => {
    const schema = await freshSchema('subs_prop')
    let run = 0
    const planArb = fc.record({
      interval_type: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'MONTHLY', 'YEARLY'),
      start_date: fc.constantFrom('2026-01-31', '2026-01-15', '2024-02-29', '2026-03-30'),
      retry: fc.constantFrom('Y', 'N'),
      total_terms: fc.constantFrom('1', '2', '4', '6'),
    })
    const stepArb = fc.record({
      subscription: fc.nat({ max: 1 }),
      via: fc.oneof(
        { weight: 3, arbitrary: fc.constant('created' as const) },
        { weight: 2, arbitrary: fc.constantFrom('authorise' as const, 'authorise_deducted' as const) },
        { weight: 3, arbitrary: fc.constant('charge' as const) },
        { weight: 5, arbitrary: fc.constant('fail' as const) },
        { weight: 2, arbitrary: fc.constantFrom('cancel' as const, 'cancel_sent' as const, 'cancelled' as const) },
        {
          weight: 3,
          arbitrary: fc.constantFrom('create_unknown' as const, 'request_failed' as const, 'mismatch' as const, 'redirect' as const, 'forged' as const, 'update' as const, 'update_sent' as const, 'updated' as const, 'cancel_unknown' as const),
        },
      ),
      dayOffset: fc.constantFrom(0, 0, 0, 1, -1),
      minute: fc.integer({ min: 2, max: 900 }),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(planArb, { freq: 5, nil: null }), { minLength: 2, maxLength: 2 }),
        fc.array(stepArb, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }),
        async (plans, steps, cuts) => {
          run += 1
          const ids = [0, 1].map((k) => `S-${String(run)}-${String(k)}`)
          const streams = ids.map((id) => subscriptionStreamName(MERCHANT_ID, id))
          const perStream: SubscriptionEvent[][] = [[], []]
          const make = makeEventFactory()
          const log: ProjectedEvent[] = []
          const push = (k: number, decided: ReadonlyArray<SubscriptionEvent>) => {
            perStream[k]?.push(...decided)
            for (const e of decided) log.push(make(streams[k] ?? 'subscription-', e))
          }
          // Each subscription is requested first, unless its plan is null (then only callbacks reach its stream).
          plans.forEach((plan, k) => {
            const id = ids[k] ?? 'S'
            if (plan !== null) push(k, decideAll([commandsFor(id).request(plan)]))
          })
          for (const step of steps) {
            const k = step.subscription
            const id = ids[k] ?? 'S'
            const c = commandsFor(id)
            const mine = perStream[k] ?? []
            const state = fold(mine)
            const next = state._tag === 'Subscription' ? state.charges?.nextAttempt : null
            const date = formatCalendarDate(addDays(next ?? { year: 2026, month: 2, day: 1 }, step.dayOffset))
            // Deductions report the plan in force (an update changes the amount); `mismatch` reports another.
            const amount = state._tag === 'Subscription' ? formatAmount(state.plan.billingAmount) : '299.00'
            const commands = ((): ReadonlyArray<SubscriptionCommand> => {
              switch (step.via) {
                case 'created':
                  return [c.created(step.minute)]
                case 'create_unknown':
                  return [c.createUnknown(step.minute)]
                case 'request_failed':
                  return [c.requestFailed(step.minute)]
                case 'authorise':
                  return [c.notified({ type: 'Created' }, step.minute)]
                case 'authorise_deducted':
                  return [c.notified({ type: 'Created_Deducted', date, amount }, step.minute)]
                case 'charge':
                  return [c.notified(deducted(date, 'SUCCESS', amount), step.minute)]
                case 'fail':
                  return [c.notified(deducted(date, 'FAIL', amount), step.minute)]
                case 'mismatch':
                  return [c.notified({ type: 'Deducted', date, amount: '1.00' }, step.minute)]
                case 'redirect':
                  return [c.redirected(step.minute)]
                case 'forged':
                  return [c.notified({ type: 'Deducted', date, verified: false }, step.minute)]
                // Sent and answered, or sent and still waiting (answered by a later step, or never).
                case 'update':
                  return [c.update(step.minute), c.updated(step.minute)]
                case 'update_sent':
                  return [c.update(step.minute)]
                case 'updated':
                  return [c.updated(step.minute)]
                case 'cancel':
                  return [c.cancel(step.minute), c.cancelled(step.minute)]
                case 'cancel_sent':
                  return [c.cancel(step.minute)]
                case 'cancelled':
                  return [c.cancelled(step.minute)]
                case 'cancel_unknown':
                  return [c.cancel(step.minute), c.outcomeUnknown(step.minute)]
              }
            })()
            push(k, decideAll(commands, mine).slice(mine.length))
          }
          let from = 0
          for (let i = 0; from < log.length; i += 1) {
            const size = cuts[i % cuts.length] ?? 1
            await applyInTransaction(pool, schema, subscriptionsProjection, log.slice(from, from + size))
            from += size
          }
          const expected = expectedTables(streams, log)
          expect(await readSubscriptions(pool, schema, streams)).toEqual(expected.subscriptions)
          expect(await readCharges(pool, schema, streams)).toEqual(expected.charges)
          streams.forEach((s, k) => {
            const view = foldSubscriptionView(log.filter((e) => e.streamName === s))
            expect(withoutKeys(view?.state ?? initialSubscriptionState)).toEqual(withoutKeys(fold(perStream[k] ?? [])))
            // The status column is the aggregate's own status.
            if (view !== null) expect(expected.subscriptions.find((r) => r.stream_name === s)?.status).toBe(subscriptionStatusOf(fold(perStream[k] ?? [])))
          })
        },
      ),
      { numRuns: 60 },
    )
  }, 120_000)
})
