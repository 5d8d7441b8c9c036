import { describe, expect, it } from 'vitest'
import { BREAK_CLASSES } from '../../../src/domain/reconciliation/break-class.ts'
import { breaksTable, csvTables, daysTable, healedTable } from '../../../src/domain/reconciliation/report/csv.ts'
import { reportJson } from '../../../src/domain/reconciliation/report/json.ts'
import { quietReport, twoDayReport } from './report-fixtures.ts'

/* The report's CSV tables and JSON document, compared whole against what the fixtures hold (report-fixtures.ts). */

const OUTCOMES = ['matched', 'healed', 'pending', 'unchecked', 'acknowledged', 'breaks'] as const
const DAY_NUMBERS = [
  ...OUTCOMES.flatMap((o) => [`${o}_count`, `${o}_satang`, o]),
  ...['payments', 'refunds'].flatMap((k) => ['matched', 'healed'].flatMap((o) => [`${k}_${o}_count`, `${k}_${o}_satang`, `${k}_${o}`])),
  'at_stake_satang',
  'at_stake',
  'open_breaks_now',
  ...BREAK_CLASSES.flatMap((c) => [`${c}_count`, `${c}_at_stake_satang`]),
]

/** A class column pair of days.csv: zeros but for the classes given. */
const classCells = (given: Readonly<Record<string, readonly [string, string]>>): ReadonlyArray<string> => BREAK_CLASSES.flatMap((c) => [...(given[c] ?? ['0', '0'])])

describe('the reconciliation report as CSV', () => {
  it('days.csv: one row per day, satang and baht per outcome, at stake, breaks open now, count and satang at stake per class', () => {
    expect(daysTable(twoDayReport())).toEqual({
      file: 'days.csv',
      columns: ['day', 'verdict', 'run_id', 'reconciled_at', 'reconciled_at_bangkok', ...DAY_NUMBERS],
      numeric: DAY_NUMBERS,
      rows: [
        [
          '2026-11-20', 'breaks', 'run-1', '2026-11-20T17:30:00.000Z', '2026-11-21 00:30:00',
          '2', '123556', '1235.56', '1', '5050', '50.50', '1', '700', '7.00', '1', '900', '9.00', '1', '300', '3.00', '2', '12400', '124.00',
          // payments matched and healed, then refunds (none matched or healed that day)
          '2', '123556', '1235.56', '1', '5050', '50.50', '0', '0', '0.00', '0', '0', '0.00',
          '2400', '24.00', '2',
          ...classCells({ amount_mismatch: ['1', '2000'], missing_at_gateway: ['1', '400'], query_failed: ['1', '900'] }),
        ],
        [
          '2026-11-21', 'not_reconciled', '', '', '',
          ...OUTCOMES.flatMap(() => ['0', '0', '0.00']),
          ...[1, 2, 3, 4].flatMap(() => ['0', '0', '0.00']),
          '0', '0.00', '0',
          ...classCells({}),
        ],
      ],
    })
  })

  it('breaks.csv: every open break, empty cells for what it lacks', () => {
    expect(breaksTable(twoDayReport())).toEqual({
      file: 'breaks.csv',
      columns: [
        'break_id', 'class', 'status', 'item_kind', 'item_id', 'merchant_order_id', 'merchant_refund_id', 'merchant_subscribe_id', 'day',
        'amount_at_stake_satang', 'amount_at_stake', 'first_seen_at', 'first_seen_at_bangkok', 'last_seen_at', 'last_seen_at_bangkok', 'age_days', 'age_bucket', 'detail', 'trace_id', 'observation_key',
      ],
      numeric: ['amount_at_stake_satang', 'amount_at_stake', 'age_days'],
      rows: [
        ['brk-1', 'amount_mismatch', 'open', 'payment', 'ORD-7', 'ORD-7', '', '', '2026-11-20', '2000', '20.00', '2026-11-20T03:00:00.000Z', '2026-11-20 10:00:00', '2026-11-21T03:00:00.000Z', '2026-11-21 10:00:00', '2', '2-7', 'amounts differ', 'trace-7', 'obs-7'],
        ['brk-2', 'missing_at_gateway', 'reopened', 'refund', 'RF-1', 'ORD-8', 'RF-1', '', '2026-11-20', '400', '4.00', '2026-11-20T03:00:00.000Z', '2026-11-20 10:00:00', '2026-11-21T03:00:00.000Z', '2026-11-21 10:00:00', '40', '>30', 'no refund at the gateway', '', ''],
      ],
    })
  })

  it('breaks.csv names the subscription of a subscription break', () => {
    const r = twoDayReport()
    const b = r.openBreaks[0]
    if (b === undefined) throw new Error('fixture without a break')
    expect(breaksTable({ ...r, openBreaks: [{ ...b, itemKind: 'subscription', merchantOrderId: null, merchantSubscribeId: 'SUB-1' }] }).rows[0]?.slice(3, 8)).toEqual(['subscription', 'ORD-7', '', '', 'SUB-1'])
  })

  it('healed.csv: every healed item, an empty from_status when it had none', () => {
    expect(healedTable(twoDayReport())).toEqual({
      file: 'healed.csv',
      columns: ['run_id', 'item_kind', 'item_id', 'day', 'from_status', 'to_status', 'amount_satang', 'amount', 'healed_at', 'healed_at_bangkok'],
      numeric: ['amount_satang', 'amount'],
      rows: [
        ['run-1', 'payment', 'ORD-3', '2026-11-20', 'PI', 'PS', '5050', '50.50', '2026-11-20T04:00:00.000Z', '2026-11-20 11:00:00'],
        ['run-2', 'payment', 'ORD-9', '2026-11-20', '', 'PF', '100', '1.00', '2026-11-20T04:00:00.000Z', '2026-11-20 11:00:00'],
      ],
    })
  })

  it('csvTables gives the three tables in order; a quiet report has headers and no break or healed rows', () => {
    const r = quietReport()
    expect(csvTables(r)).toEqual([daysTable(r), breaksTable(r), healedTable(r)])
    expect(csvTables(r).map((t) => [t.file, t.rows.length])).toEqual([['days.csv', 1], ['breaks.csv', 0], ['healed.csv', 0]])
  })
})

const amounts = (satang: number, name = 'amount'): Record<string, unknown> => ({ [`${name}_satang`]: satang, [name]: (satang / 100).toFixed(2) })
const figure = (count: number, satang: number): Record<string, unknown> => ({ count, ...amounts(satang) })
const classFigure = (count: number, satang: number, atStake: number): Record<string, unknown> => ({ count, ...amounts(satang), ...amounts(atStake, 'at_stake') })
const byClass = (given: Readonly<Record<string, Record<string, unknown>>>): Record<string, unknown> => Object.fromEntries(BREAK_CLASSES.map((c) => [c, given[c] ?? classFigure(0, 0, 0)]))

const firstDayFigures = {
  matched: figure(2, 123556),
  healed: figure(1, 5050),
  pending: figure(1, 700),
  unchecked: figure(1, 900),
  breaks: figure(2, 12400),
  acknowledged: figure(1, 300),
  // apart: the payments, and the refund whose break is missing_at_gateway
  payments: { matched: figure(2, 123556), healed: figure(1, 5050), pending: figure(1, 700), unchecked: figure(1, 900), breaks: figure(1, 12000), acknowledged: figure(1, 300) },
  refunds: { matched: figure(0, 0), healed: figure(0, 0), pending: figure(0, 0), unchecked: figure(0, 0), breaks: figure(1, 400), acknowledged: figure(0, 0) },
  by_class: byClass({ amount_mismatch: classFigure(1, 12000, 2000), missing_at_gateway: classFigure(1, 400, 400), query_failed: classFigure(1, 900, 900) }),
  ...amounts(2400, 'at_stake'),
}
const emptyFigures = {
  matched: figure(0, 0),
  healed: figure(0, 0),
  pending: figure(0, 0),
  unchecked: figure(0, 0),
  breaks: figure(0, 0),
  acknowledged: figure(0, 0),
  payments: { matched: figure(0, 0), healed: figure(0, 0), pending: figure(0, 0), unchecked: figure(0, 0), breaks: figure(0, 0), acknowledged: figure(0, 0) },
  refunds: { matched: figure(0, 0), healed: figure(0, 0), pending: figure(0, 0), unchecked: figure(0, 0), breaks: figure(0, 0), acknowledged: figure(0, 0) },
  by_class: byClass({}),
  ...amounts(0, 'at_stake'),
}

const breakJson = {
  break_id: 'brk-1',
  class: 'amount_mismatch',
  status: 'open',
  item: { kind: 'payment', id: 'ORD-7', merchant_order_id: 'ORD-7', merchant_refund_id: null, merchant_subscribe_id: null, stream: 'order-M1-ORD-7' },
  day: '2026-11-20',
  ...amounts(2000, 'amount_at_stake'),
  satang_view: { amount_satang: '12000' },
  gateway_view: { amount_satang: '10000' },
  detail: 'amounts differ',
  evidence: { trace_id: 'trace-7', observation_key: 'obs-7' },
  first_seen_at: '2026-11-20T03:00:00.000Z',
  first_seen_run_id: 'run-1',
  last_seen_at: '2026-11-21T03:00:00.000Z',
  last_seen_run_id: 'run-2',
  age_days: 2,
  age_bucket: '2-7',
}

describe('the reconciliation report as JSON', () => {
  it('the whole document of two days: totals, each day, ageing, open breaks, healed items, the ledger check with its difference, the sources', () => {
    expect(reportJson(twoDayReport())).toStrictEqual({
      report: 'reconciliation',
      merchant_id: 'M1',
      from: '2026-11-20',
      to: '2026-11-21',
      generated_at: '2026-11-22T01:00:00.000Z',
      as_of: { instant: '2026-11-22T00:00:00.000Z', position: '41', requested: '2026-11-22T07:00:00+07:00' },
      verdict: 'not_reconciled',
      totals: firstDayFigures,
      days: [
        { day: '2026-11-20', verdict: 'breaks', run_id: 'run-1', reconciled_at: '2026-11-20T17:30:00.000Z', open_breaks_now: 2, ...firstDayFigures },
        { day: '2026-11-21', verdict: 'not_reconciled', run_id: null, reconciled_at: null, open_breaks_now: 0, ...emptyFigures },
      ],
      ageing: [
        { class: 'amount_mismatch', age_bucket: '2-7', count: 1, ...amounts(2000, 'at_stake') },
        { class: 'missing_at_gateway', age_bucket: '>30', count: 1, ...amounts(400, 'at_stake') },
      ],
      open_breaks: [
        breakJson,
        {
          ...breakJson,
          break_id: 'brk-2',
          class: 'missing_at_gateway',
          status: 'reopened',
          item: { kind: 'refund', id: 'RF-1', merchant_order_id: 'ORD-8', merchant_refund_id: 'RF-1', merchant_subscribe_id: null, stream: null },
          ...amounts(400, 'amount_at_stake'),
          detail: 'no refund at the gateway',
          evidence: { trace_id: null, observation_key: null },
          age_days: 40,
          age_bucket: '>30',
        },
      ],
      healed: [
        { run_id: 'run-1', item: { kind: 'payment', id: 'ORD-3' }, day: '2026-11-20', from: 'PI', to: 'PS', ...amounts(5050), healed_at: '2026-11-20T04:00:00.000Z' },
        { run_id: 'run-2', item: { kind: 'payment', id: 'ORD-9' }, day: '2026-11-20', from: null, to: 'PF', ...amounts(100), healed_at: '2026-11-20T04:00:00.000Z' },
      ],
      ledger: {
        date_bangkok: '2026-11-21',
        ...amounts(150000, 'gateway_receivable'),
        expected: { ...amounts(200000, 'paid_orders'), ...amounts(10000, 'subscription_charges'), ...amounts(70000, 'refunds'), ...amounts(140000, 'total') },
        ...amounts(10000, 'difference'),
        agrees: false,
      },
      sources: {
        runs: [
          { run_id: 'run-1', stream: 'reconciliation-run-1', last_event_position: '30' },
          { run_id: 'run-2', stream: 'reconciliation-run-2', last_event_position: '40' },
        ],
        checkpoints: { orders: '39', refunds: null },
        log_position: '41',
      },
    })
  })

  it('a quiet day: reconciled, empty lists, the ledger agreeing, no position', () => {
    const j = reportJson(quietReport())
    expect(j['verdict']).toBe('reconciled')
    expect(j['as_of']).toStrictEqual({ instant: '2026-11-21T01:00:00.000Z', position: null, requested: null })
    expect([j['ageing'], j['open_breaks'], j['healed']]).toStrictEqual([[], [], []])
    expect(j['ledger']).toMatchObject({ difference_satang: 0, difference: '0.00', agrees: true })
    expect(j['sources']).toStrictEqual({ runs: [], checkpoints: {}, log_position: null })
  })
})
