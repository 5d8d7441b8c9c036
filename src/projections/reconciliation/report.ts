import * as E from 'fp-ts/lib/Either.js'
import type { EventStore, Position } from '../../application/ports/event-store.ts'
import { isJsonObject } from '../../domain/events/json.ts'
import { decodeDomainEvent } from '../../domain/events/registry.ts'
import { endOfBangkokDay } from '../../domain/ledger/report.ts'
import { ageBucketOf, ageDays } from '../../domain/reconciliation/ageing.ts'
import { isRunEvent, type CheckedItem } from '../../domain/reconciliation/events/index.ts'
import { dayFigures, type DayFigures, type LedgerCheck, type ReconciliationReport, type ReportBreak, type ReportDay, type ReportHealed } from '../../domain/reconciliation/report/model.ts'
import { checkedItems, evolveRunState, initialRunState, type RunState } from '../../domain/reconciliation/run.ts'
import { Verdict } from '../../domain/reconciliation/verdict.ts'
import { atOrBefore, type ReadModelsAt } from '../as-of.ts'
import { CHECKPOINTS_TABLE } from '../checkpoints.ts'
import { BREAKS_TABLE, DAYS_TABLE, HEALED_TABLE, RUNS_TABLE } from './projection.ts'
import { qualified } from '../types.ts'

/*
 * Reads what `satang report reconciliation` prints: the reconciliation read models (days, breaks,
 * healed, runs), the items of each covering run from its stream (the read models keep counts, not
 * the amount of each outcome), and the ledger beside the orders, refunds and charges.
 */

export type ReportRequest = {
  readonly merchantId: string
  readonly from: string
  readonly to: string
  /** Every Bangkok day from..to. */
  readonly days: ReadonlyArray<string>
  readonly generatedAt: Date
  /** Ages are measured at `instant`; with a position, run streams are read up to it. */
  readonly asOf: { readonly instant: Date; readonly position: Position | null; readonly requested: string | null }
}

type Row = Readonly<Record<string, unknown>>

const text = (u: unknown): string | null => (typeof u === 'string' ? u : null)
const req = (u: unknown, what: string): string => {
  if (typeof u !== 'string') throw new Error(`report: ${what} is not text`)
  return u
}
const date = (u: unknown, what: string): Date => {
  if (u instanceof Date) return u
  throw new Error(`report: ${what} is not a timestamp`)
}
const big = (u: unknown): bigint => (typeof u === 'string' && /^-?\d+$/.test(u) ? BigInt(u) : 0n)

/** The items a run checked, from its stream (up to `upTo`), and where its last event sits. */
const runItems = async (store: EventStore, stream: string, upTo: Position | null): Promise<{ readonly items: ReadonlyArray<CheckedItem>; readonly last: string | null }> => {
  const read = await store.readStream(stream)()
  if (E.isLeft(read)) throw new Error(`report: the run stream ${stream} could not be read`, { cause: read.left })
  let state: RunState = initialRunState
  let last: string | null = null
  for (const item of read.right) {
    if (E.isLeft(item)) throw new Error(`report: ${stream} holds an undecodable event: ${item.left.reason}`)
    const r = item.right
    if (upTo !== null && !atOrBefore(r.position, upTo)) break
    const decoded = decodeDomainEvent(r.type, r.schemaVersion, r.data)
    if (E.isLeft(decoded)) throw new Error(`report: ${stream} revision ${String(r.streamRevision)} does not decode`)
    if (isRunEvent(decoded.right)) state = evolveRunState(state, decoded.right)
    last = r.position
  }
  return { items: state._tag === 'Run' ? checkedItems(state) : [], last }
}

const readLedgerCheck = async (rm: ReadModelsAt, merchantId: string, day: string): Promise<LedgerCheck> => {
  const q = (t: string): string => qualified(rm.schema, t)
  const end = endOfBangkokDay(day)
  const { rows } = await rm.db.query<Row>(
    `select
       (select coalesce(sum(debit_satang - credit_satang), 0)::text from ${q('ledger_entries')}
         where merchant_id = $1 and account = 'gateway_receivable' and currency = 'THB' and posting_date_bangkok <= $2::date) as receivable,
       (select coalesce(sum(paid_amount_satang), 0)::text from ${q('orders')}
         where merchant_id = $1 and status_class = 'paid' and currency = 'THB' and completed_at < $3) as paid,
       (select coalesce(sum(amount_satang), 0)::text from ${q('subscription_charges')}
         where merchant_id = $1 and outcome = 'succeeded' and currency = 'THB' and observed_at < $3) as charged,
       (select coalesce(sum(amount_satang), 0)::text from ${q('refunds')}
         where merchant_id = $1 and status_class = 'succeeded' and currency = 'THB' and completed_at < $3) as refunded`,
    [merchantId, day, end],
  )
  const r = rows[0] ?? {}
  const paidOrders = big(r['paid'])
  const charges = big(r['charged'])
  const refunds = big(r['refunded'])
  return { date: day, receivable: big(r['receivable']), expected: { paidOrders, charges, refunds, total: paidOrders + charges - refunds } }
}

const breakOf = (r: Row, asOf: Date): ReportBreak => {
  const firstSeenAt = date(r['first_seen_at'], 'first_seen_at')
  const age = ageDays(firstSeenAt, asOf)
  const evidence = isJsonObject(r['evidence']) ? r['evidence'] : {}
  return {
    breakId: req(r['break_id'], 'break_id'),
    class: req(r['class'], 'class'),
    status: req(r['status'], 'status'),
    itemKind: req(r['item_kind'], 'item_kind'),
    itemId: req(r['item_id'], 'item_id'),
    merchantOrderId: text(r['merchant_order_id']),
    merchantRefundId: text(r['merchant_refund_id']),
    merchantSubscribeId: text(r['merchant_subscribe_id']),
    itemStream: text(r['item_stream']),
    day: req(r['day_text'], 'day'),
    atStake: big(r['at_stake']),
    satangView: isJsonObject(r['satang_view']) ? r['satang_view'] : {},
    gatewayView: isJsonObject(r['gateway_view']) ? r['gateway_view'] : {},
    detail: req(r['detail'], 'detail'),
    traceId: text(evidence['traceId']),
    observationKey: text(evidence['observationKey']),
    firstSeenAt,
    firstSeenRunId: req(r['first_seen_run_id'], 'first_seen_run_id'),
    lastSeenAt: date(r['last_seen_at'], 'last_seen_at'),
    lastSeenRunId: req(r['last_seen_run_id'], 'last_seen_run_id'),
    ageDays: age,
    ageBucket: ageBucketOf(age),
  }
}

/** The whole report from the read models at `rm` (live, or as of a position) and the run streams. */
export const readReconciliationReport = async (rm: ReadModelsAt, store: EventStore, request: ReportRequest): Promise<ReconciliationReport> => {
  const q = (t: string): string => qualified(rm.schema, t)
  const { merchantId, from, to } = request
  const daysRows = await rm.db.query<Row>(
    `select to_char(day, 'YYYY-MM-DD') as day_text, verdict, run_id, reconciled_at from ${q(DAYS_TABLE)} where merchant_id = $1 and day between $2::date and $3::date order by day`,
    [merchantId, from, to],
  )
  const covered = new Map(daysRows.rows.map((r) => [req(r['day_text'], 'day'), r]))
  const open = await rm.db.query<Row>(
    `select b.*, to_char(b.day, 'YYYY-MM-DD') as day_text, b.amount_at_stake_satang::text as at_stake from ${q(BREAKS_TABLE)} b
      where b.merchant_id = $1 and b.status in ('new', 'persisting') and b.day <= $2::date order by b.first_seen_at, b.break_id`,
    [merchantId, to],
  )
  const openBreaks = open.rows.map((r) => breakOf(r, request.asOf.instant))
  const healedRows = await rm.db.query<Row>(
    `select run_id, item_kind, item_id, to_char(day, 'YYYY-MM-DD') as day_text, from_status, to_status, amount_satang::text as amount, healed_at
       from ${q(HEALED_TABLE)} where merchant_id = $1 and day between $2::date and $3::date order by day, healed_at, item_id`,
    [merchantId, from, to],
  )
  const healed: ReadonlyArray<ReportHealed> = healedRows.rows.map((r) => ({
    runId: req(r['run_id'], 'run_id'),
    itemKind: req(r['item_kind'], 'item_kind'),
    itemId: req(r['item_id'], 'item_id'),
    day: req(r['day_text'], 'day'),
    from: text(r['from_status']),
    to: req(r['to_status'], 'to_status'),
    amount: big(r['amount']),
    healedAt: date(r['healed_at'], 'healed_at'),
  }))

  const runIds = new Set<string>()
  for (const r of covered.values()) runIds.add(req(r['run_id'], 'run_id'))
  const dayRunIds = new Set(runIds)
  for (const b of openBreaks) {
    runIds.add(b.firstSeenRunId)
    runIds.add(b.lastSeenRunId)
  }
  for (const h of healed) runIds.add(h.runId)
  const runs = await rm.db.query<Row>(`select run_id, stream_name, last_event_position from ${q(RUNS_TABLE)} where run_id = any($1::text[]) order by started_at, run_id`, [[...runIds]])
  const itemsByRun = new Map<string, ReadonlyArray<CheckedItem>>()
  const sourceRuns: Array<{ runId: string; stream: string; lastEventPosition: string }> = []
  for (const r of runs.rows) {
    const runId = req(r['run_id'], 'run_id')
    const stream = req(r['stream_name'], 'stream_name')
    if (dayRunIds.has(runId)) {
      const read = await runItems(store, stream, request.asOf.position)
      itemsByRun.set(runId, read.items)
    }
    sourceRuns.push({ runId, stream, lastEventPosition: req(r['last_event_position'], 'last_event_position') })
  }

  const openPerDay = new Map<string, number>()
  for (const b of openBreaks) openPerDay.set(b.day, (openPerDay.get(b.day) ?? 0) + 1)
  const days: ReadonlyArray<ReportDay> = request.days.map((day) => {
    const row = covered.get(day)
    const runId = row === undefined ? null : req(row['run_id'], 'run_id')
    const items = runId === null ? [] : (itemsByRun.get(runId) ?? []).filter((i) => i.day === day)
    const verdict = row === undefined ? null : Verdict.is(row['verdict']) ? row['verdict'] : null
    return { day, verdict, runId, reconciledAt: row === undefined ? null : date(row['reconciled_at'], 'reconciled_at'), openBreaksNow: openPerDay.get(day) ?? 0, ...dayFigures(items) }
  })

  const ledger = await readLedgerCheck(rm, merchantId, to)
  let checkpoints: Record<string, string | null>
  const names = ['reconciliation', 'ledger', 'orders', 'refunds', 'subscriptions']
  if (request.asOf.position !== null) checkpoints = Object.fromEntries(names.map((n) => [n, request.asOf.position]))
  else {
    const cps = await rm.db.query<Row>(`select name, position from ${q(CHECKPOINTS_TABLE)} where name = any($1::text[])`, [names])
    checkpoints = Object.fromEntries(names.map((n) => [n, text(cps.rows.find((r) => r['name'] === n)?.['position'])]))
  }
  const head = await store.headPosition()()
  if (E.isLeft(head)) throw new Error('report: the head of the event log could not be read', { cause: head.left })
  return {
    merchantId,
    from,
    to,
    generatedAt: request.generatedAt,
    asOf: request.asOf,
    days,
    openBreaks,
    healed,
    ledger,
    sources: { runs: sourceRuns, checkpoints, logPosition: request.asOf.position ?? head.right ?? null },
  }
}

/**
 * One Bangkok day's figures (payments and refunds apart), from the items of the run that covered it
 * (the console's headline); null when no run covered the day. `upTo`: the log position read up to.
 */
export const readDayFigures = async (rm: ReadModelsAt, store: EventStore, merchantId: string, day: string, upTo: Position | null): Promise<DayFigures | null> => {
  const { rows } = await rm.db.query<Row>(
    `select d.run_id, r.stream_name from ${qualified(rm.schema, DAYS_TABLE)} d join ${qualified(rm.schema, RUNS_TABLE)} r on r.run_id = d.run_id where d.merchant_id = $1 and d.day = $2::date`,
    [merchantId, day],
  )
  const row = rows[0]
  if (row === undefined) return null
  const { items } = await runItems(store, req(row['stream_name'], 'stream_name'), upTo)
  return dayFigures(items.filter((i) => i.day === day))
}
