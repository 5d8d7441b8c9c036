import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ledgerProjection } from '../../src/projections/ledger/projection.ts'
import { readEntries, readTrialBalance } from '../../src/projections/ledger/reads.ts'
import { freshEventStoreSchema, uniqueSchemaName, type TestSchema } from '../support/postgres.ts'
import { orderStream, refundStream } from '../domain/ledger/builders.ts'
import { AFTER_MIDNIGHT, ledgerScenario } from '../domain/ledger/scenario.ts'
import { applyInTransaction, createProjectionTables } from './support.ts'

const batches = ledgerScenario()
const all = batches.flat()

let db: TestSchema
let pool: Pool
let rebuilt: string

beforeAll(async () => {
  db = await freshEventStoreSchema('ledger')
  pool = db.pool()
  await createProjectionTables(pool, db.schema, ledgerProjection)
  for (const batch of batches) await applyInTransaction(pool, db.schema, ledgerProjection, batch)
  // The same log in one batch, into other tables: what a rebuild would produce.
  rebuilt = uniqueSchemaName('ledger_rebuild')
  await createProjectionTables(pool, rebuilt, ledgerProjection)
  await applyInTransaction(pool, rebuilt, ledgerProjection, all)
})

afterAll(async () => {
  await pool.query(`drop schema if exists "${rebuilt}" cascade`)
  await db.drop()
})

const rows = async <R extends object>(sql: string): Promise<R[]> => (await pool.query<R>(sql)).rows

describe('ledger projection', () => {
  it('one row per posting line, each pointing to the event it came from', async () => {
    const entries = await rows<{ event_id: string; line: number; global_position: string; stream_name: string; entry_id: string; posting_kind: string }>(
      `select event_id::text, line, global_position, stream_name, entry_id, posting_kind from "${db.schema}".ledger_entries order by global_position, line`,
    )
    // A, B paid; refund of A; the charge; the refund of an unknown order. C failed first: never paid.
    expect(entries).toHaveLength(10)
    for (const e of entries) {
      const source = all.find((x) => x.eventId === e.event_id)
      expect(source?.position).toBe(e.global_position)
      expect(source?.streamName).toBe(e.stream_name)
      expect(e.entry_id).toBe(`${e.event_id}/${String(e.line)}`)
    }
    expect(entries.map((e) => e.posting_kind)).toEqual([
      'order_paid',
      'order_paid',
      'order_paid',
      'order_paid',
      'refund_succeeded',
      'refund_succeeded',
      'subscription_charged',
      'subscription_charged',
      'refund_succeeded',
      'refund_succeeded',
    ])
  })

  it('the trial balance is balanced; gateway_receivable = paid - refunded + charges', async () => {
    const tb = await rows<{ account: string; channel: string; currency: string; total_debit_satang: string; total_credit_satang: string; balance_satang: string }>(
      `select account, channel, currency, total_debit_satang::text, total_credit_satang::text, balance_satang::text from "${db.schema}".trial_balance order by account, channel`,
    )
    const sum = (k: 'total_debit_satang' | 'total_credit_satang') => tb.reduce((s, r) => s + BigInt(r[k]), 0n)
    expect(sum('total_debit_satang')).toBe(sum('total_credit_satang'))
    const receivable = tb.filter((r) => r.account === 'gateway_receivable').reduce((s, r) => s + BigInt(r.balance_satang), 0n)
    expect(receivable).toBe(25000n + 10000n - 4000n - 100n + 19900n)
    expect(tb).toEqual([
      { account: 'gateway_receivable', channel: 'subscription', currency: 'THB', total_debit_satang: '19900', total_credit_satang: '0', balance_satang: '19900' },
      { account: 'gateway_receivable', channel: 'svc.thaiqr.pay', currency: 'THB', total_debit_satang: '25000', total_credit_satang: '4000', balance_satang: '21000' },
      { account: 'gateway_receivable', channel: 'svc.wallet_a.pay', currency: 'THB', total_debit_satang: '10000', total_credit_satang: '0', balance_satang: '10000' },
      { account: 'gateway_receivable', channel: 'unknown', currency: 'THB', total_debit_satang: '0', total_credit_satang: '100', balance_satang: '-100' },
      { account: 'refunds', channel: 'svc.thaiqr.pay', currency: 'THB', total_debit_satang: '4000', total_credit_satang: '0', balance_satang: '4000' },
      { account: 'refunds', channel: 'unknown', currency: 'THB', total_debit_satang: '100', total_credit_satang: '0', balance_satang: '100' },
      { account: 'sales', channel: 'svc.thaiqr.pay', currency: 'THB', total_debit_satang: '0', total_credit_satang: '25000', balance_satang: '-25000' },
      { account: 'sales', channel: 'svc.wallet_a.pay', currency: 'THB', total_debit_satang: '0', total_credit_satang: '10000', balance_satang: '-10000' },
      { account: 'subscription_sales', channel: 'subscription', currency: 'THB', total_debit_satang: '0', total_credit_satang: '19900', balance_satang: '-19900' },
    ])
  })

  it('daily balances per Bangkok date: 23:30 and 00:30 Bangkok fall on two days; closing balances accumulate', async () => {
    const daily = await rows<{ date_bangkok: string; channel: string; debit_satang: string; credit_satang: string; closing_balance_satang: string }>(
      `select to_char(date_bangkok, 'YYYY-MM-DD') as date_bangkok, channel, debit_satang::text, credit_satang::text, closing_balance_satang::text
       from "${db.schema}".daily_balances where account = 'gateway_receivable' and channel like 'svc.%' order by channel, date_bangkok`,
    )
    expect(daily).toEqual([
      { date_bangkok: '2026-01-05', channel: 'svc.thaiqr.pay', debit_satang: '25000', credit_satang: '0', closing_balance_satang: '25000' },
      { date_bangkok: '2026-01-06', channel: 'svc.thaiqr.pay', debit_satang: '0', credit_satang: '4000', closing_balance_satang: '21000' },
      { date_bangkok: '2026-01-06', channel: 'svc.wallet_a.pay', debit_satang: '10000', credit_satang: '0', closing_balance_satang: '10000' },
    ])
    const dates = await rows<{ d: string; posted_at: Date }>(
      `select to_char(posting_date_bangkok, 'YYYY-MM-DD') as d, posted_at from "${db.schema}".ledger_entries where merchant_order_id = 'B' and posting_kind = 'order_paid'`,
    )
    expect(dates.map((r) => [r.d, r.posted_at.toISOString()])).toEqual([
      ['2026-01-06', AFTER_MIDNIGHT.toISOString()],
      ['2026-01-06', AFTER_MIDNIGHT.toISOString()],
    ])
  })

  it('keeps only unpaid orders as state; paid ones as their channel', async () => {
    const states = await rows<{ stream_name: string; paid: boolean; has_state: boolean }>(
      `select stream_name, paid, state is not null as has_state from "${db.schema}".ledger_order_states order by stream_name`,
    )
    expect(states).toEqual([
      { stream_name: orderStream('A'), paid: true, has_state: false },
      { stream_name: orderStream('B'), paid: true, has_state: false },
      { stream_name: orderStream('C'), paid: false, has_state: true },
    ])
  })

  it('a rebuild in one batch gives the same tables as the batches did', async () => {
    const dump = async (schema: string) => ({
      entries: await rows(`select * from "${schema}".ledger_entries order by global_position, line`),
      states: await rows(`select * from "${schema}".ledger_order_states order by stream_name`),
    })
    expect(await dump(rebuilt)).toEqual(await dump(db.schema))
  })

  it('the same event again adds no line (on conflict do nothing)', async () => {
    const refund = all.find((e) => e.streamName === refundStream('R-1'))
    if (refund === undefined) throw new Error('no refund event')
    await applyInTransaction(pool, db.schema, ledgerProjection, [refund])
    const n = await rows<{ n: string }>(`select count(*)::text as n from "${db.schema}".ledger_entries where event_id = '${refund.eventId}'`)
    expect(n[0]?.n).toBe('2')
  })

  it('the table refuses a two-sided or negative line', async () => {
    const insert = (debit: number, credit: number) =>
      pool.query(
        `insert into "${db.schema}".ledger_entries (event_id, line, global_position, stream_name, posting_kind, merchant_id, account, channel, currency,
           debit_satang, credit_satang, posted_at, posting_date_bangkok, recorded_at, description, entry_kind, rule_version, fact_date_bangkok)
         values (gen_random_uuid(), 1, 'x', 's', 'order_paid', 'm', 'sales', 'c', 'THB', $1, $2, now(), current_date, now(), 'd', 'posting', 1, current_date)`,
        [debit, credit],
      )
    await expect(insert(1, 1)).rejects.toThrow(/ledger_entries_one_side/)
    await expect(insert(-1, 0)).rejects.toThrow(/check constraint/)
    await expect(insert(0, 0)).rejects.toThrow(/ledger_entries_one_side/)
  })
})

describe('ledger reads', () => {
  const rm = () => ({ pool, schema: db.schema })

  it('the trial balance as of the end of a Bangkok date leaves later entries out', async () => {
    const jan5 = await readTrialBalance(rm(), { date: '2026-01-05', currency: null, channel: null })
    expect(jan5).toEqual([
      { account: 'gateway_receivable', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 25000n, credit: 0n },
      { account: 'sales', channel: 'svc.thaiqr.pay', currency: 'THB', debit: 0n, credit: 25000n },
    ])
    const wallet = await readTrialBalance(rm(), { date: null, currency: 'THB', channel: 'svc.wallet_a.pay' })
    expect(wallet.map((r) => r.account)).toEqual(['gateway_receivable', 'sales'])
    expect(await readTrialBalance(rm(), { date: null, currency: 'USD', channel: null })).toEqual([])
  })

  it('entries page in log order with a cursor, filtered', async () => {
    const seen: string[] = []
    let after = null
    for (;;) {
      const page: Awaited<ReturnType<typeof readEntries>> = await readEntries(rm(), { account: null, channel: null, currency: null, merchantOrderId: null, from: null, to: null }, { limit: 3, after })
      seen.push(...page.entries.map((e) => e.entryId))
      if (page.next === null) break
      expect(page.entries).toHaveLength(3)
      after = page.next
    }
    expect(seen).toHaveLength(10)
    expect(new Set(seen).size).toBe(10)
    const ordered = await rows<{ entry_id: string }>(`select entry_id from "${db.schema}".ledger_entries order by global_position, line`)
    expect(seen).toEqual(ordered.map((r) => r.entry_id))

    const ofA = await readEntries(rm(), { account: 'gateway_receivable', channel: null, currency: null, merchantOrderId: 'A', from: '2026-01-06', to: '2026-01-06' }, { limit: 10, after: null })
    expect(ofA.entries.map((e) => [e.kind, e.debit, e.credit, e.postingDateBangkok])).toEqual([['refund_succeeded', 0n, 4000n, '2026-01-06']])
    expect(ofA.next).toBeNull()
  })
})
