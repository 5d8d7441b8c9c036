import type { Queryable } from '../as-of.ts'
import { BREAKS_TABLE } from './projection.ts'
import { qualified } from '../types.ts'

/* Reads of the web console beyond those the API shares: open breaks by class and age, an item's postings, breaks and refunds. */

export type Rm = { readonly db: Queryable; readonly schema: string }

export type AgeCell = { readonly class: string; readonly bucket: string; readonly count: number; readonly atStake: bigint }

/** Open breaks of the merchant by class and age bucket (ages measured at `at`), with the satang at stake. */
export const openBreaksByClassAndAge = async (rm: Rm, merchantId: string, at: Date): Promise<ReadonlyArray<AgeCell>> => {
  const { rows } = await rm.db.query<{ class: string; age_bucket: string; n: number; at_stake: string }>(
    `select class, case when $2::timestamptz - first_seen_at < interval '2 days' then '0-1'
                        when $2::timestamptz - first_seen_at < interval '8 days' then '2-7'
                        when $2::timestamptz - first_seen_at < interval '31 days' then '8-30'
                        else '>30' end as age_bucket,
            count(*)::int as n, sum(amount_at_stake_satang)::bigint::text as at_stake
       from ${qualified(rm.schema, BREAKS_TABLE)} where merchant_id = $1 and status in ('new', 'persisting') group by 1, 2`,
    [merchantId, at],
  )
  return rows.map((r) => ({ class: r.class, bucket: r.age_bucket, count: r.n, atStake: BigInt(r.at_stake) }))
}

export type ItemKind = 'order' | 'refund' | 'subscription'

export type Posting = {
  readonly eventId: string
  readonly line: number
  readonly position: string
  readonly kind: string
  readonly account: string
  readonly channel: string
  readonly currency: string
  readonly debit: bigint
  readonly credit: bigint
  readonly postedAt: Date
  readonly description: string
}

const ID_COLUMN: Readonly<Record<ItemKind, string>> = { order: 'merchant_order_id', refund: 'merchant_refund_id', subscription: 'merchant_subscribe_id' }

/** The ledger lines of an order (its payment and its refunds), a refund, or a subscription's charges, in log order; up to `upTo` when given. */
export const postingsOf = async (rm: Rm, merchantId: string, kind: ItemKind, id: string, upTo: string | null): Promise<ReadonlyArray<Posting>> => {
  const { rows } = await rm.db.query<{ event_id: string; line: number; global_position: string; posting_kind: string; account: string; channel: string; currency: string; debit: string; credit: string; posted_at: Date; description: string }>(
    `select event_id::text as event_id, line, global_position, posting_kind, account, channel, currency, debit_satang::text as debit, credit_satang::text as credit, posted_at, description
       from ${qualified(rm.schema, 'ledger_entries')} where merchant_id = $1 and ${ID_COLUMN[kind]} = $2 and ($3::text is null or global_position <= $3::text)
      order by global_position, line limit 500`,
    [merchantId, id, upTo],
  )
  return rows.map((r) => ({
    eventId: r.event_id,
    line: r.line,
    position: r.global_position,
    kind: r.posting_kind,
    account: r.account,
    channel: r.channel,
    currency: r.currency,
    debit: BigInt(r.debit),
    credit: BigInt(r.credit),
    postedAt: r.posted_at,
    description: r.description,
  }))
}

export type ItemBreak = { readonly breakId: string; readonly class: string; readonly status: string; readonly day: string; readonly atStake: bigint; readonly detail: string; readonly firstSeenAt: Date }

/** The breaks of an item: an order's payment (and a callback about it), a refund, or each date of a subscription. */
export const breaksOfItem = async (rm: Rm, merchantId: string, kind: ItemKind, id: string): Promise<ReadonlyArray<ItemBreak>> => {
  const where =
    kind === 'order'
      ? `item_kind in ('payment', 'unmatched_callback') and item_id = $2`
      : kind === 'refund'
        ? `item_kind = 'refund' and item_id = $2`
        : `item_kind = 'subscription' and merchant_subscribe_id = $2`
  const { rows } = await rm.db.query<{ break_id: string; class: string; status: string; day: string; at_stake: string; detail: string; first_seen_at: Date }>(
    `select break_id, class, status, to_char(day, 'YYYY-MM-DD') as day, amount_at_stake_satang::text as at_stake, detail, first_seen_at
       from ${qualified(rm.schema, BREAKS_TABLE)} where merchant_id = $1 and ${where} order by first_seen_at, break_id limit 200`,
    [merchantId, id],
  )
  return rows.map((r) => ({ breakId: r.break_id, class: r.class, status: r.status, day: r.day, atStake: BigInt(r.at_stake), detail: r.detail, firstSeenAt: r.first_seen_at }))
}

/** The streams of the refunds tracked against an order. */
export const refundStreamsOf = async (rm: Rm, merchantId: string, merchantOrderId: string): Promise<ReadonlyArray<string>> => {
  const { rows } = await rm.db.query<{ stream_name: string }>(`select stream_name from ${qualified(rm.schema, 'refunds')} where merchant_id = $1 and merchant_order_id = $2 order by stream_name`, [merchantId, merchantOrderId])
  return rows.map((r) => r.stream_name)
}

/** The latest business day a run reconciled for the merchant, with its verdict (undefined: none yet). */
export const lastReconciledDay = async (rm: Rm, merchantId: string): Promise<{ readonly day: string; readonly verdict: string; readonly reconciledAt: Date } | undefined> => {
  const { rows } = await rm.db.query<{ day: string; verdict: string; reconciled_at: Date }>(
    `select to_char(day, 'YYYY-MM-DD') as day, verdict, reconciled_at from ${qualified(rm.schema, 'reconciliation_days')} where merchant_id = $1 order by day desc limit 1`,
    [merchantId],
  )
  const r = rows[0]
  return r === undefined ? undefined : { day: r.day, verdict: r.verdict, reconciledAt: r.reconciled_at }
}
