import type { CheckedItem } from '../../../src/domain/reconciliation/events/index.ts'
import { dayFigures, type ReconciliationReport, type ReportBreak, type ReportHealed } from '../../../src/domain/reconciliation/report/model.ts'

/** Reports built by hand for the tests of the report's formats (text, CSV, JSON). */

const item = (o: Partial<CheckedItem>): CheckedItem => ({ kind: 'payment', id: 'A', day: '2026-11-20', outcome: 'matched', breakClass: null, breakId: null, amount: 1000n, atStake: 0n, ...o })

export const aBreak = (o: Partial<ReportBreak> = {}): ReportBreak => ({
  breakId: 'brk-1',
  class: 'amount_mismatch',
  status: 'open',
  itemKind: 'payment',
  itemId: 'ORD-7',
  merchantOrderId: 'ORD-7',
  merchantRefundId: null,
  merchantSubscribeId: null,
  itemStream: 'order-M1-ORD-7',
  day: '2026-11-20',
  atStake: 2000n,
  satangView: { amount_satang: '12000' },
  gatewayView: { amount_satang: '10000' },
  detail: 'amounts differ',
  traceId: 'trace-7',
  observationKey: 'obs-7',
  firstSeenAt: new Date('2026-11-20T03:00:00.000Z'),
  firstSeenRunId: 'run-1',
  lastSeenAt: new Date('2026-11-21T03:00:00.000Z'),
  lastSeenRunId: 'run-2',
  ageDays: 2,
  ageBucket: '2-7',
  ...o,
})

export const aHealed = (o: Partial<ReportHealed> = {}): ReportHealed => ({
  runId: 'run-1',
  itemKind: 'payment',
  itemId: 'ORD-3',
  day: '2026-11-20',
  from: 'PI',
  to: 'PS',
  amount: 5050n,
  healedAt: new Date('2026-11-20T04:00:00.000Z'),
  ...o,
})

/** Two days: the first with matched, healed, pending, unchecked, broken and acknowledged items; the second with no run. */
export const twoDayReport = (): ReconciliationReport => ({
  merchantId: 'M1',
  from: '2026-11-20',
  to: '2026-11-21',
  generatedAt: new Date('2026-11-22T01:00:00.000Z'),
  asOf: { instant: new Date('2026-11-22T00:00:00.000Z'), position: '41', requested: '2026-11-22T07:00:00+07:00' },
  days: [
    {
      day: '2026-11-20',
      verdict: 'breaks',
      runId: 'run-1',
      reconciledAt: new Date('2026-11-20T17:30:00.000Z'),
      openBreaksNow: 2,
      ...dayFigures([
        item({ id: 'ORD-1', amount: 123456n }),
        item({ id: 'ORD-2', amount: 100n }),
        item({ id: 'ORD-3', outcome: 'healed', amount: 5050n }),
        item({ id: 'ORD-4', outcome: 'pending', amount: 700n }),
        item({ id: 'ORD-5', outcome: 'unchecked', breakClass: 'query_failed', breakId: 'brk-5', amount: 900n, atStake: 900n }),
        item({ id: 'ORD-6', outcome: 'acknowledged', breakClass: 'stale_pending', breakId: 'brk-6', amount: 300n, atStake: 300n }),
        item({ id: 'ORD-7', outcome: 'break', breakClass: 'amount_mismatch', breakId: 'brk-1', amount: 12000n, atStake: 2000n }),
        item({ kind: 'refund', id: 'RF-1', outcome: 'break', breakClass: 'missing_at_gateway', breakId: 'brk-2', amount: 400n, atStake: 400n }),
      ]),
    },
    { day: '2026-11-21', verdict: null, runId: null, reconciledAt: null, openBreaksNow: 0, ...dayFigures([]) },
  ],
  openBreaks: [
    aBreak(),
    aBreak({
      breakId: 'brk-2',
      class: 'missing_at_gateway',
      status: 'reopened',
      itemKind: 'refund',
      itemId: 'RF-1',
      merchantOrderId: 'ORD-8',
      merchantRefundId: 'RF-1',
      itemStream: null,
      atStake: 400n,
      detail: 'no refund at the gateway',
      traceId: null,
      observationKey: null,
      ageDays: 40,
      ageBucket: '>30',
    }),
  ],
  healed: [aHealed(), aHealed({ itemId: 'ORD-9', from: null, to: 'PF', amount: 100n, runId: 'run-2' })],
  ledger: { date: '2026-11-21', receivable: 150000n, expected: { paidOrders: 200000n, charges: 10000n, refunds: 70000n, total: 140000n } },
  sources: {
    runs: [
      { runId: 'run-1', stream: 'reconciliation-run-1', lastEventPosition: '30' },
      { runId: 'run-2', stream: 'reconciliation-run-2', lastEventPosition: '40' },
    ],
    checkpoints: { orders: '39', refunds: null },
    logPosition: '41',
  },
})

/** One reconciled day and nothing else: no breaks, nothing healed, the ledger agreeing, an empty log. */
export const quietReport = (): ReconciliationReport => ({
  merchantId: 'M2',
  from: '2026-11-20',
  to: '2026-11-20',
  generatedAt: new Date('2026-11-21T01:00:00.000Z'),
  asOf: { instant: new Date('2026-11-21T01:00:00.000Z'), position: null, requested: null },
  days: [{ day: '2026-11-20', verdict: 'reconciled', runId: 'run-9', reconciledAt: new Date('2026-11-20T17:00:00.000Z'), openBreaksNow: 0, ...dayFigures([item({ amount: 250000n })]) }],
  openBreaks: [],
  healed: [],
  ledger: { date: '2026-11-20', receivable: 250000n, expected: { paidOrders: 250000n, charges: 0n, refunds: 0n, total: 250000n } },
  sources: { runs: [], checkpoints: {}, logPosition: null },
})
