// Console benchmark: the overview and the breaks page rendered over 100,000 breaks (90% open, every
// class, first seen over the last 90 days), a year of daily verdicts and 20,000 ledger lines, served
// by satang's HTTP service with the console's routes; a load generator in its own process asks each
// page one request at a time (the latency a person waits). Baseline in the same run: the bare SQL of
// the same page (the same reads, no HTML, no HTTP), from this process.
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import * as E from 'fp-ts/lib/Either.js'
import { makePostgresEventStore } from '../src/adapters/eventstore/postgres.ts'
import { registerConsoleRoutes } from '../src/adapters/http/console/routes.ts'
import { makeHttpServer, makeMetricsRegistry } from '../src/adapters/http/server.ts'
import { migrateEventStore } from '../src/adapters/postgres/migrations/eventstore.ts'
import { bangkokDateOf, formatCalendarDate } from '../src/domain/bangkok-time.ts'
import { openBreaksByClassAndAge } from '../src/projections/reconciliation/console-reads.ts'
import { PROJECTIONS } from '../src/projections/index.ts'
import { readDailyBalances } from '../src/projections/ledger/as-of.ts'
import { migrateReadModels } from '../src/projections/migrations.ts'
import { readBreaks, readDays } from '../src/projections/reconciliation/reads.ts'
import { projectionStatus } from '../src/projections/status.ts'
import { makeKnex, makePostgresPool } from '../src/platform/postgres/pool.ts'
import { connectAdmin } from './support/databases.ts'
import type { BenchContext, BenchResult } from './types.ts'

const BREAKS = Number(process.env['SATANG_BENCH_CONSOLE_BREAKS'] ?? 100_000)
const REQUESTS = 40
const MERCHANT = '140000000000000001'
const TOKEN = 'bench-console-token-0123456789abcdef'
const LOAD = fileURLToPath(new URL('./support/page-load.ts', import.meta.url))

const round = (n: number, digits = 1): number => Number(n.toFixed(digits))

type Load = { requests: number; failures: number; p50_ms: number; p99_ms: number; max_ms: number; bytes: number }

const load = (base: string, path: string, cookie: string): Promise<Load> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD, base, path, cookie, String(REQUESTS)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Load) : reject(new Error(`page-load exited ${String(code)}: ${err}`))))
  })

const timeSql = async (read: () => Promise<unknown>): Promise<{ p50: number; p99: number }> => {
  const ms: number[] = []
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now()
    await read()
    ms.push(performance.now() - started)
  }
  ms.sort((a, b) => a - b)
  return { p50: ms[Math.floor(ms.length / 2)] ?? 0, p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? 0 }
}

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const dbName = `satang_bench_console_${randomUUID().replaceAll('-', '').slice(0, 10)}`
  const admin = await connectAdmin(ctx.databaseUrl, ctx.log, 'console')
  await admin.query(`create database "${dbName}"`)
  const url = new URL(ctx.databaseUrl)
  url.pathname = `/${dbName}`
  const pool = makePostgresPool({ url: url.toString(), poolMax: 16 }, ctx.log)
  const store = makePostgresEventStore({ pool, log: ctx.log }, { schema: 'eventstore' })
  const rm = { pool, schema: 'satang' }
  try {
    const knex = makeKnex(pool)
    const migrated = await migrateEventStore({ db: knex, log: ctx.log }, { schema: 'eventstore' })()
    await knex.destroy()
    if (E.isLeft(migrated)) throw new Error('event store migration failed')
    await migrateReadModels({ pool, log: ctx.log }, { schema: 'satang', projections: PROJECTIONS })

    // 100,000 breaks: every class, 90% open, first seen over 90 days; a year of days; 20,000 ledger lines.
    await pool.query(
      `insert into satang.reconciliation_breaks (break_id, merchant_id, class, status, item_kind, item_id, merchant_order_id, item_stream, day, amount_at_stake_satang,
         satang_view, gateway_view, detail, evidence, first_seen_at, first_seen_run_id, last_seen_at, last_seen_run_id, times_seen, last_event_position)
       select 'brk-' || g, $1, (array['amount_mismatch','currency_mismatch','status_conflict','missing_at_gateway','missing_internal','stale_pending','unknown_status','refund_exceeds_payment','query_failed','missing_charge','unexpected_charge','suspension_mismatch'])[1 + g % 12],
              case when g % 10 = 0 then 'resolved' when g % 3 = 0 then 'new' else 'persisting' end, 'payment', 'ORD-' || g, 'ORD-' || g, 'order-' || $1 || '-ORD-' || g,
              (now() - (g % 90) * interval '1 day')::date, 100 + g % 50000,
              jsonb_build_object('status', 'PS', 'amount_satang', (10000 + g % 5000)::text), jsonb_build_object('status', 'PS', 'amount_satang', (12000 + g % 5000)::text),
              'the gateway holds another amount', '{"traceId":"t","observationKey":null}', now() - (g % 90) * interval '1 day' - (g % 86400) * interval '1 second', 'run-' || (g % 90),
              now() - (g % 5) * interval '1 hour', 'run-' || (g % 90), 1 + g % 4, lpad(g::text, 20, '0') || '-' || lpad(g::text, 20, '0')
         from generate_series(1, $2::int) g`,
      [MERCHANT, BREAKS],
    )
    await pool.query(
      `insert into satang.reconciliation_days (merchant_id, day, verdict, run_id, checked, matched, healed, pending, unchecked, acknowledged, breaks, breaks_by_class,
         checked_satang, healed_satang, at_stake_satang, unchecked_satang, reconciled_at)
       select $1, (now() at time zone 'Asia/Bangkok')::date - d, (array['reconciled','breaks','reconciled_with_pending','incomplete'])[1 + d % 4], 'run-' || d,
              1000, 990, 5, 3, d % 4, 0, 2, '{}', 10000000, 5000, 2000, 100, now() - d * interval '1 day'
         from generate_series(1, 365) d`,
      [MERCHANT],
    )
    await pool.query(
      `insert into satang.ledger_entries (event_id, line, global_position, stream_name, posting_kind, merchant_id, merchant_order_id, account, channel, currency,
         debit_satang, credit_satang, posted_at, posting_date_bangkok, recorded_at, description, entry_kind, rule_version, fact_date_bangkok)
       select ('00000000-0000-4000-8000-' || lpad(to_hex(g / 2), 12, '0'))::uuid, 1 + g % 2, lpad((g / 2)::text, 20, '0') || '-' || lpad((g / 2)::text, 20, '0'), 'order-' || $1 || '-L' || g / 2,
              'order_paid', $1, 'L' || g / 2, case when g % 2 = 0 then 'gateway_receivable' else 'sales' end, 'svc.checkout.apply', 'THB',
              case when g % 2 = 0 then 10000 else 0 end, case when g % 2 = 0 then 0 else 10000 end,
              now() - (g % 60) * interval '1 day', ((now() - (g % 60) * interval '1 day') at time zone 'Asia/Bangkok')::date, now(), 'bench',
              'posting', 1, ((now() - (g % 60) * interval '1 day') at time zone 'Asia/Bangkok')::date
         from generate_series(0, 19999) g`,
      [MERCHANT],
    )
    await pool.query('analyze')

    const app = makeHttpServer({
      log: ctx.log,
      checks: [],
      metrics: makeMetricsRegistry(),
      version: 'bench',
      routes: [
        registerConsoleRoutes({
          readModels: rm,
          store,
          merchantId: MERCHANT,
          tokens: [{ name: 'bench', token: TOKEN, scopes: ['read', 'audit', 'reconcile:write'] }],
          sessionSecret: randomBytes(32),
          acknowledge: () => Promise.reject(new Error('the bench acknowledges nothing')),
          now: () => new Date(),
          relayTopic: 'satang.events',
        }),
      ],
    })
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    try {
      const signIn = await fetch(`${base}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}` })
      const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
      if (signIn.status !== 303 || cookie === '') throw new Error(`sign-in failed: ${String(signIn.status)}`)

      const overview = await load(base, '/console', cookie)
      const breaks = await load(base, '/console/breaks?status=open', cookie)
      const filtered = await load(base, '/console/breaks?status=open&class=stale_pending&min_age_days=7', cookie)
      if (overview.failures + breaks.failures + filtered.failures > 0) throw new Error(`pages failed: ${JSON.stringify({ overview, breaks, filtered })}`)

      // The bare SQL of the same pages, from this process.
      const today = formatCalendarDate(bangkokDateOf(new Date()))
      const first = `${today.slice(0, 7)}-01`
      const sqlOverview = await timeSql(() =>
        Promise.all([
          readDays(rm, MERCHANT, first, today),
          openBreaksByClassAndAge({ db: pool, schema: 'satang' }, MERCHANT, new Date()),
          readDailyBalances({ store, pool }, 'satang', first, today, null),
          projectionStatus(store, pool, 'satang', PROJECTIONS),
        ]),
      )
      const page = { limit: 50, after: null }
      const sqlBreaks = await timeSql(() => readBreaks(rm, MERCHANT, { class: null, status: 'open', minAgeDays: null, date: null, itemId: null }, page))
      return [
        { name: `overview page over ${BREAKS.toLocaleString('en-US')} breaks, p50`, value: round(overview.p50_ms), unit: 'ms', target: { op: '<=', value: 300 } },
        { name: 'overview page, p99', value: round(overview.p99_ms), unit: 'ms' },
        { name: 'overview baseline: its bare SQL, p50', value: round(sqlOverview.p50), unit: 'ms' },
        { name: 'overview page / its bare SQL (p50)', value: round(overview.p50_ms / Math.max(0.001, sqlOverview.p50), 2), unit: 'ratio' },
        { name: `breaks page (open, 50 per page) over ${BREAKS.toLocaleString('en-US')} breaks, p50`, value: round(breaks.p50_ms), unit: 'ms', target: { op: '<=', value: 300 } },
        { name: 'breaks page, p99', value: round(breaks.p99_ms), unit: 'ms' },
        { name: 'breaks baseline: its bare SQL, p50', value: round(sqlBreaks.p50), unit: 'ms' },
        { name: 'breaks page / its bare SQL (p50)', value: round(breaks.p50_ms / Math.max(0.001, sqlBreaks.p50), 2), unit: 'ratio' },
        { name: 'breaks page filtered (class, age), p50', value: round(filtered.p50_ms), unit: 'ms', target: { op: '<=', value: 300 } },
      ]
    } finally {
      await app.close()
    }
  } finally {
    await store.close()
    await pool.end()
    await admin.query(`drop database if exists "${dbName}" with (force)`)
    await admin.end()
  }
}
