import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { expect } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { encodeDomainEvent, eventSourceOf } from '../../src/domain/events/registry.ts'
import { toStoreMetadata } from '../../src/domain/events/metadata.ts'
import { bangkokDateOf, formatCalendarDate, parseCalendarDate } from '../../src/domain/bangkok-time.ts'
import { addDays } from '../../src/domain/subscription-schedule.ts'
import type { BreakClass } from '../../src/domain/reconciliation/break-class.ts'
import type { ItemOutcome } from '../../src/domain/reconciliation/break-class.ts'
import { runStreamName, type RunCommand } from '../../src/domain/reconciliation/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { projectionCaughtUp } from '../../src/projections/catch-up.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA } from '../../src/projections/index.ts'
import { runEventsOf } from '../domain/reconciliation/run-events.ts'
import { control, MERCHANT_ID } from '../sandbox/support.ts'
import { runCli } from './cli.ts'
import { startSatangWithSandbox, type SatangWithSandbox } from './satang-with-sandbox.ts'

/**
 * A satang with the sandbox holding what finance looks at: real orders through /v1 paid at the sandbox
 * (one refunded, one whose gateway amount was changed, one whose description holds a script tag), a
 * real `satang reconcile` of today (a real break with its evidence), and the run streams of the month's
 * earlier days (one verdict of each kind), appended to the log like any run's.
 */
export type FinanceScenario = {
  readonly t: SatangWithSandbox
  readonly pool: Pool
  readonly store: EventStore
  readonly today: string
  /** Earlier days of the month with a seeded run, and the verdict of each. */
  readonly seededDays: ReadonlyArray<{ readonly day: string; readonly verdict: string }>
  readonly xssDescription: string
  readonly stop: () => Promise<void>
  readonly caughtUp: () => Promise<void>
}

export const XSS = '<script>window.__satangXss = 1</script><img src=x onerror="window.__satangXss = 2">'

const dayOffset = (day: string, n: number): string => {
  const d = parseCalendarDate(day)
  if (E.isLeft(d)) throw new Error(day)
  return formatCalendarDate(addDays(d.right, n))
}

type SeedItem = { readonly id: string; readonly outcome: ItemOutcome; readonly cls?: BreakClass; readonly amount: bigint; readonly atStake?: bigint }

/** The commands of a completed run of `day` checking `items` (breaks detected for the break outcomes). */
const seededRun = (runId: string, day: string, startedAt: Date, items: ReadonlyArray<SeedItem>): ReadonlyArray<RunCommand> => {
  const ref = (id: string) => ({ kind: 'payment' as const, id, merchantOrderId: id, merchantRefundId: null, merchantSubscribeId: null, stream: `order-${MERCHANT_ID}-${id}` })
  return [
    {
      type: 'StartRun',
      started: {
        runId,
        merchantId: MERCHANT_ID,
        scope: { kind: 'days', from: day, to: day },
        parameters: { concurrency: 16, asOf: startedAt, notFoundGraceMs: 0, stalePendingMs: 0, chargeGraceMs: 0 },
        startedBy: { trigger: 'scheduler', actor: null },
        itemsInScope: items.length,
        startedAt,
      },
    },
    {
      type: 'RecordItems',
      at: startedAt,
      items: items.map((i) => {
        const breakId = i.outcome === 'break' || i.outcome === 'unchecked' ? `seed-${runId}-${i.id}` : null
        return {
          checked: { kind: 'payment', id: i.id, day, outcome: i.outcome, breakClass: i.cls ?? null, breakId, amount: i.amount, atStake: i.atStake ?? 0n },
          detect:
            breakId === null || i.cls === undefined
              ? null
              : {
                  runId,
                  breakId,
                  class: i.cls,
                  status: 'new',
                  item: ref(i.id),
                  day,
                  satangView: { status: 'PS', amount_satang: i.amount.toString() },
                  gatewayView: { status: 'PS', amount_satang: (i.amount + (i.atStake ?? 0n)).toString() },
                  amountAtStake: i.atStake ?? 0n,
                  detail: `seeded ${i.cls} <b>not bold</b>`,
                  firstSeenAt: startedAt,
                  firstSeenRunId: runId,
                  detectedAt: startedAt,
                  evidence: { traceId: `trace-${i.id}`, observationKey: null },
                },
          resolve: [],
          healed: null,
        }
      }),
    },
    { type: 'CompleteRun', days: [day], at: new Date(startedAt.getTime() + 60_000) },
  ]
}

/** `mismatch`: the order AMT-1's amount and the amount the gateway is then forced to hold (default 100 and 120.00). */
export const startFinanceScenario = async (label: string, settings: Readonly<Record<string, string>> = {}, options: { readonly mismatch?: { readonly amount: string; readonly gatewayAmount: string } } = {}): Promise<FinanceScenario> => {
  const t = await startSatangWithSandbox(label, settings)
  const pool = new Pool({ connectionString: t.databaseUrl, max: 3 })
  // An idle client is told when the test database is dropped (57P01); any other error fails stop().
  const poolErrors: unknown[] = []
  pool.on('error', (e) => {
    if (!(typeof e === 'object' && 'code' in e && e.code === '57P01')) poolErrors.push(e)
  })
  const store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
  const today = formatCalendarDate(bangkokDateOf(new Date()))

  const checkout = async (id: string, amount: string, desc = 'Rice cooker'): Promise<string> => {
    const r = await t.api('POST', '/v1/checkouts', { merchant_order_id: id, order_amount: amount, order_currency: 'THB', order_desc: desc, customer: { merchant_user_id: 'u-1', full_name: 'Somchai Jaidee', phone: '0812345678' } })
    expect(r.status, JSON.stringify(r.json)).toBe(201)
    return String(r.json['gateway_order_id'])
  }
  const pay = async (orderId: string): Promise<void> => {
    expect((await control(t.sandbox, 'POST', `/orders/${orderId}/pay`)).status).toBe(200)
    await t.sandbox.notifier.idle()
  }
  await pay(await checkout('PAID-1', '250'))
  await pay(await checkout('XSS-1', '10', XSS))
  const refunded = await checkout('REF-ORD-1', '100')
  await pay(refunded)
  expect((await t.api('POST', '/v1/refunds', { merchant_refund_id: 'REF-1', merchant_order_id: 'REF-ORD-1' })).status).toBe(201)
  expect((await control(t.sandbox, 'POST', '/refunds', { order_id: refunded, merchant_refund_id: 'REF-1', refund_amount: '40.00' })).status).toBe(201)
  await t.sandbox.notifier.idle()
  const mismatch = await checkout('AMT-1', options.mismatch?.amount ?? '100')
  await pay(mismatch)
  expect((await control(t.sandbox, 'POST', `/orders/${mismatch}/force`, { order_amount: options.mismatch?.gatewayAmount ?? '120.00' })).status).toBe(200)

  // Against the committed head (not the readable events alone: an older transaction may hide later ones).
  const caughtUp = async (): Promise<void> => {
    for (const p of PROJECTIONS) {
      if (!(await projectionCaughtUp({ store, pool }, READ_MODEL_SCHEMA, p.name, 30_000))) throw new Error(`the projection ${p.name} did not catch up`)
    }
  }
  await caughtUp()
  const run = await runCli(['reconcile', '--date', today, '--json', '--no-progress'], { env: t.toolEnv({ SATANG_PROJECTOR: 'off' }), cwd: t.dir })
  expect(run.code, run.stderr).toBe(1)

  // Earlier days of this month (or the days just before today on the 1st to 4th): one verdict of each kind.
  const seeded: Array<{ day: string; verdict: string }> = []
  const kinds: ReadonlyArray<{ verdict: string; items: ReadonlyArray<SeedItem> }> = [
    { verdict: 'reconciled', items: [{ id: 'S-A', outcome: 'matched', amount: 10000n }] },
    { verdict: 'breaks', items: [{ id: 'S-B', outcome: 'matched', amount: 5000n }, { id: 'S-C', outcome: 'break', cls: 'stale_pending', amount: 7000n, atStake: 7000n }] },
    { verdict: 'reconciled_with_pending', items: [{ id: 'S-D', outcome: 'pending', amount: 3000n }] },
    { verdict: 'incomplete', items: [{ id: 'S-E', outcome: 'unchecked', cls: 'query_failed', amount: 2000n }] },
  ]
  for (const [i, k] of kinds.entries()) {
    const day = dayOffset(today, -(i + 1))
    const runId = randomUUID()
    const events = runEventsOf(seededRun(runId, day, new Date(Date.now() - (i + 1) * 86_400_000), k.items.map((x) => ({ ...x, id: `${x.id}-${day}` }))))
    const appended = await store.append(
      runStreamName(MERCHANT_ID, runId),
      events.map((e) => {
        const s = encodeDomainEvent(e)
        return { eventId: randomUUID(), type: s.type, schemaVersion: s.schemaVersion, data: s.data, metadata: toStoreMetadata({ correlationId: runId, causationId: runId, recordedAt: new Date().toISOString(), source: eventSourceOf(e) }) }
      }),
      'no_stream',
    )()
    expect(E.isRight(appended)).toBe(true)
    seeded.push({ day, verdict: k.verdict })
  }
  await caughtUp()
  return {
    t,
    pool,
    store,
    today,
    seededDays: seeded,
    xssDescription: XSS,
    caughtUp,
    stop: async () => {
      await store.close()
      await pool.end()
      await t.stop()
      expect(poolErrors).toEqual([])
    },
  }
}
