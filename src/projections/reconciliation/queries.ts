import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import * as t from 'io-ts'
import type { KnownBreakRow, ReadModelFailure, ReconciliationQueries, ReconciliationScope, ScopeRequest, UnfinishedRun } from '../../application/ports/read-models.ts'
import { BreakClass, ItemKind } from '../../domain/reconciliation/break-class.ts'
import { RunScope } from '../../domain/reconciliation/events/values.ts'
import { BreakStatus } from '../../domain/reconciliation/lifecycle.ts'
import { describeErrors } from '../kept-state.ts'
import { isRetriablePgError, sqlStateOf } from '../../platform/postgres/errors.ts'
import { BREAKS_TABLE, DAYS_TABLE, RUNS_TABLE } from './projection.ts'
import { qualified, type ReadModels } from '../types.ts'

const attempt =
  <A>(operation: string, read: () => Promise<A>): TE.TaskEither<ReadModelFailure, A> =>
  () =>
    read().then(E.right, (cause: unknown) => E.left({ _tag: 'ReadModelFailure', operation, retriable: isRetriablePgError(cause), missing: sqlStateOf(cause) === '42P01', cause }))

/** Rows read back through a codec: a row that does not decode is a failure naming the read. */
const decodeRows = <A>(what: string, codec: t.Type<A, unknown, unknown>, rows: unknown): ReadonlyArray<A> => {
  const decoded = t.array(codec).decode(rows)
  if (E.isLeft(decoded)) throw new Error(`${what}: unexpected rows: ${describeErrors(decoded.left)}`)
  return decoded.right
}

const Digits = t.refinement(t.string, (s) => /^\d+$/.test(s), 'Digits')

const PaymentRow = t.type({ stream_name: t.string, merchant_order_id: t.string, day: t.string, refunded: Digits, refund_ids: t.array(t.string) })
const RefundRow = t.type({ stream_name: t.string, merchant_refund_id: t.string, merchant_order_id: t.string, day: t.string, order_known: t.boolean, order_currency: t.union([t.string, t.null]) })
const SubscriptionRow = t.type({ stream_name: t.string, merchant_subscribe_id: t.string })
const KnownRow = t.type({
  break_id: t.string,
  class: BreakClass,
  status: t.keyof({ new: null, persisting: null, acknowledged: null }),
  first_seen_at: t.unknown,
  first_seen_run_id: t.string,
  item_kind: ItemKind,
  item_id: t.string,
  day: t.string,
  item_stream: t.union([t.string, t.null]),
})
const RunRow = t.type({ run_id: t.string, scope_kind: t.string, scope_from: t.union([t.string, t.null]), scope_to: t.union([t.string, t.null]), started_at: t.unknown })

const dateOf = (u: unknown, what: string): Date => {
  if (u instanceof Date && !Number.isNaN(u.getTime())) return u
  throw new Error(`${what}: not a timestamp`)
}

/** The reconciliation job's reads (the application's `ReconciliationQueries` port), over the tables the projections own. */
export const makeReconciliationQueries = (rm: ReadModels): ReconciliationQueries => {
  const q = (table: string): string => qualified(rm.schema, table)

  const scope = async (r: ScopeRequest): Promise<ReconciliationScope> => {
    const days = r.days
    const payments = await rm.pool.query(
      `with refunded as (
         select merchant_order_id, sum(amount_satang)::text as refunded, array_agg(merchant_refund_id order by merchant_refund_id) as refund_ids
           from ${q('refunds')} where merchant_id = $1 and amount_satang is not null group by merchant_order_id)
       select o.stream_name, o.merchant_order_id, to_char(o.created_at_bangkok, 'YYYY-MM-DD') as day,
              coalesce(r.refunded, '0') as refunded, coalesce(r.refund_ids, '{}') as refund_ids
         from ${q('orders')} o left join refunded r on r.merchant_order_id = o.merchant_order_id
        where o.merchant_id = $1
          and (($2::date is not null and o.created_at_bangkok >= $2::date and o.created_at_bangkok < $3::date + 1)
               or (not o.status_final and o.request_phase not in ('failed', 'not_requested') and o.created_at < $4)
               or o.stream_name = any($5::text[]))
        order by o.created_at, o.stream_name`,
      [r.merchantId, days?.from ?? null, days?.to ?? null, r.openCreatedBefore, [...r.alsoStreams]],
    )
    const refunds = await rm.pool.query(
      `select f.stream_name, f.merchant_refund_id, f.merchant_order_id, to_char(f.tracked_at_bangkok, 'YYYY-MM-DD') as day,
              (o.stream_name is not null) as order_known, o.currency as order_currency
         from ${q('refunds')} f left join ${q('orders')} o on o.merchant_id = f.merchant_id and o.merchant_order_id = f.merchant_order_id
        where f.merchant_id = $1
          and (($2::date is not null and f.tracked_at_bangkok >= $2::date and f.tracked_at_bangkok < $3::date + 1)
               or (not f.status_final and f.tracked_at < $4)
               or f.stream_name = any($5::text[]))
        order by f.tracked_at, f.stream_name`,
      [r.merchantId, days?.from ?? null, days?.to ?? null, r.openCreatedBefore, [...r.alsoStreams]],
    )
    const subscriptions =
      days === null
        ? { rows: [] }
        : await rm.pool.query(
            `select stream_name, merchant_subscribe_id from ${q('subscriptions')}
              where merchant_id = $1 and status in ('ACTIVE', 'SUSPEND', 'COMPLETED', 'CANCELLED') order by stream_name`,
            [r.merchantId],
          )
    return {
      payments: decodeRows('orders in scope', PaymentRow, payments.rows).map((p) => ({
        stream: p.stream_name,
        merchantOrderId: p.merchant_order_id,
        day: p.day,
        refunded: BigInt(p.refunded),
        refundIds: p.refund_ids,
      })),
      refunds: decodeRows('refunds in scope', RefundRow, refunds.rows).map((f) => ({
        stream: f.stream_name,
        merchantRefundId: f.merchant_refund_id,
        merchantOrderId: f.merchant_order_id,
        day: f.day,
        orderKnown: f.order_known,
        orderCurrency: f.order_currency,
      })),
      subscriptions: decodeRows('subscriptions in scope', SubscriptionRow, subscriptions.rows).map((s) => ({ stream: s.stream_name, merchantSubscribeId: s.merchant_subscribe_id })),
    }
  }

  const knownBreaks = async (merchantId: string): Promise<ReadonlyArray<KnownBreakRow>> => {
    const { rows } = await rm.pool.query(
      `select break_id, class, status, first_seen_at, first_seen_run_id, item_kind, item_id, to_char(day, 'YYYY-MM-DD') as day, item_stream
         from ${q(BREAKS_TABLE)} where merchant_id = $1 and status <> 'resolved' order by first_seen_at, break_id`,
      [merchantId],
    )
    return decodeRows('open breaks', KnownRow, rows).map((b) => ({
      breakId: b.break_id,
      class: b.class,
      status: b.status,
      firstSeenAt: dateOf(b.first_seen_at, 'first_seen_at'),
      firstSeenRunId: b.first_seen_run_id,
      itemKind: b.item_kind,
      itemId: b.item_id,
      day: b.day,
      stream: b.item_stream,
    }))
  }

  const unfinishedRuns = async (merchantId: string): Promise<ReadonlyArray<UnfinishedRun>> => {
    const { rows } = await rm.pool.query(
      `select run_id, scope_kind, to_char(scope_from, 'YYYY-MM-DD') as scope_from, to_char(scope_to, 'YYYY-MM-DD') as scope_to, started_at
         from ${q(RUNS_TABLE)} where merchant_id = $1 and status = 'running' order by started_at`,
      [merchantId],
    )
    return decodeRows('unfinished runs', RunRow, rows).map((r) => {
      const s = RunScope.decode({ kind: r.scope_kind, from: r.scope_from, to: r.scope_to })
      if (E.isLeft(s)) throw new Error(`run ${r.run_id}: scope does not decode: ${describeErrors(s.left)}`)
      return { runId: r.run_id, scope: s.right, startedAt: dateOf(r.started_at, 'started_at') }
    })
  }

  const BreakStatusRow = t.type({ merchant_id: t.string, class: BreakClass, status: BreakStatus })
  const breakStatus = async (breakId: string) => {
    const { rows } = await rm.pool.query(`select merchant_id, class, status from ${q(BREAKS_TABLE)} where break_id = $1`, [breakId])
    const [row] = decodeRows('break', BreakStatusRow, rows)
    return row === undefined ? undefined : { merchantId: row.merchant_id, class: row.class, status: row.status }
  }

  const dayReconciled = async (merchantId: string, day: string): Promise<boolean> => {
    const { rows } = await rm.pool.query(`select 1 from ${q(DAYS_TABLE)} where merchant_id = $1 and day = $2::date`, [merchantId, day])
    return rows.length > 0
  }

  return {
    scope: (r) => attempt('reconciliation scope', () => scope(r)),
    knownBreaks: (m) => attempt('known breaks', () => knownBreaks(m)),
    unfinishedRuns: (m) => attempt('unfinished runs', () => unfinishedRuns(m)),
    breakStatus: (id) => attempt('break status', () => breakStatus(id)),
    dayReconciled: (m, d) => attempt('day reconciled', () => dayReconciled(m, d)),
  }
}
