import * as E from 'fp-ts/lib/Either.js'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeLedgerPeriod, type ClosePeriodInput } from '../../src/application/ledger-periods.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { debitCredit, POSTING_RULES_V1, ruleBookOf, type PostingRules, type RuleBook } from '../../src/domain/ledger/rules.ts'
import { ledgerPeriodsText } from '../../src/domain/ledger/report.ts'
import { silentLogger } from '../../src/logger.ts'
import { ledgerProjection, makeLedgerProjection } from '../../src/projections/ledger/projection.ts'
import { readLedgerPeriods } from '../../src/projections/ledger/reads.ts'
import { startProjector } from '../../src/projections/projector.ts'
import { compareWithRebuild, rebuildProjection } from '../../src/projections/rebuild.ts'
import type { Projection } from '../../src/projections/types.ts'
import { charged, orderCreated, orderStream, observed, refundRecorded, refundStream, subscriptionStream } from '../domain/ledger/builders.ts'
import { MERCHANT_ID } from '../domain/support/values.ts'
import { appendEvent } from './scenarios.ts'
import { freshProjectionDatabase, type ProjectionDatabase } from './support.ts'

/*
 * Closed periods stay closed (issue 17): finance closes 1 January 2026 (Asia/Bangkok) with posting
 * rules v1; a payment completed on 1 January arrives after the close; then the rules change (v2, a
 * seam of this test: refunds are booked against sales instead of the contra account `refunds`).
 * Whether the ledger is rebuilt or the running projector is upgraded, the closed day's lines stay
 * byte for byte what they were, and the rule change posts as adjustments on the first open day.
 */

const log = silentLogger()

/** Version 2: a refund reduces sales directly (Dr sales / Cr gateway_receivable); the rest as v1. */
const RULES_V2: PostingRules = {
  version: 2,
  summary: 'refund: Dr sales / Cr gateway_receivable (no contra account); the rest as v1',
  linesOf: (f) => (f.kind === 'refund_succeeded' ? debitCredit('sales', 'gateway_receivable', f.channel, f.currency, f.amount) : POSTING_RULES_V1.linesOf(f)),
}
const BOOK_V1: RuleBook = ruleBookOf(POSTING_RULES_V1)
const BOOK_V2: RuleBook = ruleBookOf(POSTING_RULES_V1, RULES_V2)

// Bangkok 1 January 2026 is 2025-12-31T17:00Z .. 2026-01-01T17:00Z.
const JAN1_MORNING = new Date('2026-01-01T02:00:00.000Z')
const JAN1_EVENING = new Date('2026-01-01T12:00:00.000Z')
const JAN2_NOON = new Date('2026-01-02T05:00:00.000Z')
const JAN3_NOON = new Date('2026-01-03T05:00:00.000Z')

let db: ProjectionDatabase
let pool: Pool
let store: EventStore
let schema: string

const paid = async (id: string, completeTime: Date, amount = 10000n): Promise<void> => {
  await appendEvent(store, orderStream(id), orderCreated(id, { amount, createdAt: new Date(completeTime.getTime() - 60_000) }))
  await appendEvent(store, orderStream(id), observed(id, 'PS', { amount, completeTime, observedAt: completeTime }))
}

const close = async (date: string, book: RuleBook, at: Date, closedBy = 'finance@shop.example'): Promise<void> => {
  const input: ClosePeriodInput = { date, closedBy, reason: 'books signed off' }
  const r = await closeLedgerPeriod({ store, merchantId: MERCHANT_ID, now: () => at, rules: book }, input, { correlationId: 'close', causationId: 'close' })()
  expect(r).toMatchObject({ _tag: 'Right', right: { throughDate: date, ruleVersion: book.current.version } })
}

/** Runs the projector with this ledger until it has applied the whole log. */
const project = async (projection: Projection): Promise<void> => {
  const projector = startProjector({ store, pool, log }, { schema, projections: [projection], batchSize: 3, retryFailedOnStart: true })
  try {
    await projector.caughtUp(60_000)
  } finally {
    await projector.stop()
  }
}

/** Every column of every line dated up to `date`, as PostgreSQL prints the row: the bytes finance closed. */
const linesThrough = async (date: string): Promise<ReadonlyArray<string>> =>
  (await pool.query<{ row: string }>(`select e::text as row from "${schema}".ledger_entries e where posting_date_bangkok <= $1::date order by global_position, line`, [date])).rows.map((r) => r.row)

type Line = { event_id: string; line: number; account: string; debit: string; credit: string; posting_date: string; fact_date: string; entry_kind: string; rule_version: number; stream_name: string }
const linesOn = async (date: string): Promise<ReadonlyArray<Line>> =>
  (
    await pool.query<Line>(
      `select event_id::text as event_id, line, account, debit_satang::text as debit, credit_satang::text as credit, to_char(posting_date_bangkok, 'YYYY-MM-DD') as posting_date,
         to_char(fact_date_bangkok, 'YYYY-MM-DD') as fact_date, entry_kind, rule_version, stream_name
       from "${schema}".ledger_entries where posting_date_bangkok = $1::date order by global_position, line`,
      [date],
    )
  ).rows

const balances = async (): Promise<Readonly<Record<string, string>>> =>
  Object.fromEntries((await pool.query<{ account: string; balance: string }>(`select account, sum(debit_satang - credit_satang)::text as balance from "${schema}".ledger_entries group by account order by account`)).rows.map((r) => [r.account, r.balance]))

beforeAll(async () => {
  db = await freshProjectionDatabase('periods', [ledgerProjection])
  pool = db.pool
  store = db.store
  schema = db.schema
})

afterAll(async () => {
  await db.drop()
})

describe('closed periods of the ledger', () => {
  let closedDay: ReadonlyArray<string> = []

  it('a close freezes the day: a payment for it that arrives later posts on the first open day', async () => {
    await paid('P1', JAN1_MORNING, 10000n)
    await paid('P2', JAN1_EVENING, 25000n)
    await appendEvent(store, refundStream('R1'), refundRecorded('R1', 'P1', 4000n, { observedAt: JAN1_EVENING, completeTime: JAN1_EVENING }))
    await appendEvent(store, subscriptionStream('S1'), charged('2026-01-01', 5000n, { observedAt: JAN1_EVENING }))
    await project(ledgerProjection)
    await close('2026-01-01', BOOK_V1, JAN2_NOON)
    // Completed on 1 January, learnt on 2 January, after the close.
    await paid('LATE', JAN1_EVENING, 7000n)
    await paid('P3', JAN2_NOON, 3000n)
    await project(ledgerProjection)

    closedDay = await linesThrough('2026-01-01')
    expect(closedDay).toHaveLength(8)
    const jan2 = await linesOn('2026-01-02')
    expect(jan2.filter((l) => l.stream_name === orderStream('LATE'))).toMatchObject([
      { fact_date: '2026-01-01', posting_date: '2026-01-02', entry_kind: 'posting', rule_version: 1, account: 'gateway_receivable', debit: '7000' },
      { fact_date: '2026-01-01', posting_date: '2026-01-02', entry_kind: 'posting', rule_version: 1, account: 'sales', credit: '7000' },
    ])
    const periods = await readLedgerPeriods({ pool, schema })
    expect(periods).toMatchObject({ closed: [{ fromDate: null, throughDate: '2026-01-01', ruleVersion: 1, closedBy: 'finance@shop.example', reason: 'books signed off' }], openRulesVersion: 1, adjustmentLines: 0 })
    expect(ledgerPeriodsText(periods)).toContain('closed through 2026-01-01')
  })

  it('the running projector upgraded to rules v2: the closed day is untouched, the rule change is adjusted on the first open day, and the result equals a rebuild', async () => {
    const v2 = makeLedgerProjection(BOOK_V2)
    await appendEvent(store, refundStream('R3'), refundRecorded('R3', 'P3', 1000n, { observedAt: JAN2_NOON, completeTime: JAN2_NOON }))
    await project(v2)

    expect(await linesThrough('2026-01-01')).toEqual(closedDay)
    const jan2 = await linesOn('2026-01-02')
    // The refund of 1 January, closed under v1: its difference to v2 (Dr sales, Cr refunds) posts on 2 January.
    const r1 = jan2.filter((l) => l.stream_name === refundStream('R1'))
    expect(r1).toMatchObject([
      { entry_kind: 'adjustment', rule_version: 2, fact_date: '2026-01-01', posting_date: '2026-01-02', line: 201, account: 'refunds', debit: '0', credit: '4000' },
      { entry_kind: 'adjustment', rule_version: 2, fact_date: '2026-01-01', posting_date: '2026-01-02', line: 202, account: 'sales', debit: '4000', credit: '0' },
    ])
    // Open facts follow v2: the new refund is booked against sales.
    expect(jan2.filter((l) => l.stream_name === refundStream('R3')).map((l) => [l.entry_kind, l.rule_version, l.account])).toEqual([
      ['posting', 2, 'sales'],
      ['posting', 2, 'gateway_receivable'],
    ])
    // In total the books read as if every fact were booked by v2: nothing left on the contra account.
    expect(await balances()).toEqual({ gateway_receivable: '45000', refunds: '0', sales: '-40000', subscription_sales: '-5000' })

    const compared = await compareWithRebuild({ store, pool, log }, { schema, projection: v2 })
    expect(compared.differences.filter((d) => d.onlyLive !== 0 || d.onlyRebuilt !== 0)).toEqual([])
  })

  it('a rebuild under rules v2 reproduces the closed day byte for byte; closing 2 January under v2 freezes its adjustments with it', async () => {
    const v2 = makeLedgerProjection(BOOK_V2)
    await rebuildProjection({ store, pool, log }, { schema, projection: v2, batchSize: 2 })
    expect(await linesThrough('2026-01-01')).toEqual(closedDay)
    expect((await linesOn('2026-01-02')).filter((l) => l.entry_kind === 'adjustment')).toHaveLength(2)

    await close('2026-01-02', BOOK_V2, JAN3_NOON, 'controller@shop.example')
    await project(v2)
    const twoDays = await linesThrough('2026-01-02')
    await rebuildProjection({ store, pool, log }, { schema, projection: v2, batchSize: 5 })
    expect(await linesThrough('2026-01-02')).toEqual(twoDays)
    expect(await linesThrough('2026-01-01')).toEqual(closedDay)
    const periods = await readLedgerPeriods({ pool, schema })
    expect(periods.closed.map((c) => [c.fromDate, c.throughDate, c.ruleVersion, c.closedBy])).toEqual([
      [null, '2026-01-01', 1, 'finance@shop.example'],
      ['2026-01-02', '2026-01-02', 2, 'controller@shop.example'],
    ])
    expect(ledgerPeriodsText(periods)).toMatch(/open from 2026-01-03, posted by posting rules v2; 2 adjustment lines/)
  })

  it('a satang on older rules refuses to close after a newer close, and a projector that does not know a close’s rules stops instead of guessing', async () => {
    const r = await closeLedgerPeriod({ store, merchantId: MERCHANT_ID, now: () => new Date('2026-01-10T00:00:00Z'), rules: BOOK_V1 }, { date: '2026-01-05', closedBy: 'x', reason: null }, { correlationId: 'c', causationId: 'c' })()
    expect(r).toEqual(E.left({ _tag: 'RuleVersionBehind', ruleVersion: 1, lastClosedWith: 2 }))
    // The v1 ledger rebuilt from this log meets a close booked by v2, which it cannot reproduce.
    await expect(rebuildProjection({ store, pool, log }, { schema, projection: ledgerProjection })).rejects.toThrow(/posting rules version 2 is unknown to this satang/)
    expect(await linesThrough('2026-01-01')).toEqual(closedDay)
  })
})
