import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Client, type Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { bangkokDateOf, formatCalendarDate, parseCalendarDate } from '../../src/domain/bangkok-time.ts'
import { breakStreamName } from '../../src/domain/reconciliation/stream.ts'
import { addDays } from '../../src/domain/subscription-schedule.ts'
import { SANDBOX_MERCHANT_ID } from '../../src/composition/gateway.ts'
import { silentLogger } from '../../src/logger.ts'
import { EVENT_STORE_SCHEMA } from '../../src/main.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { runCli } from '../support/cli.ts'
import { appendOpenBreaks } from '../support/open-breaks.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/** `satang reconcile`'s usage: every mistake is exit 2 with a message naming the option and the rule. */

const env = envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn' })

describe('satang reconcile usage', () => {
  it('--help names the scope options and the exit codes', async () => {
    const r = await runCli(['reconcile', '--help'], { env })
    expect(r.code).toBe(0)
    for (const text of ['--date <yyyy-MM-dd>', '--from <yyyy-MM-dd>', '--concurrency <n>', '--dry-run', '--json', '0  reconciled', '1  breaks are open', '2  bad usage', '3  incomplete']) expect(r.stdout).toContain(text)
    const ack = await runCli(['reconcile', 'ack', '--help'], { env })
    expect(ack.stdout).toContain('--reason <text>')
  })
  it.each([
    [['--date', '2026-02-30'], '--date "2026-02-30": day must be 01 to 28 in 2026-02'],
    [['--date', '31/01/2026'], '--date "31/01/2026": must be yyyy-MM-dd'],
    [['--from', '2026-01-01'], '--from and --to go together'],
    [['--date', '2026-01-01', '--from', '2026-01-01', '--to', '2026-01-02'], '--date excludes --from and --to'],
    [['--from', '2026-02-01', '--to', '2026-01-01'], 'to must not be before from'],
    [['--from', '2025-01-01', '--to', '2026-12-31'], 'a run covers at most 366 days'],
    [['--date', '2026-01-01', '--concurrency', '0'], '--concurrency "0": must be a whole number from 1 to 256'],
    [['--as-of', 'yesterday'], '--as-of "yesterday": must be an ISO-8601 instant'],
  ])('%j is bad usage (exit 2)', async (args, message) => {
    const r = await runCli(['reconcile', ...args], { env })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(message)
  })
  it('ack without a reason is bad usage', async () => {
    const r = await runCli(['reconcile', 'ack', '6f1c2e1a-0000-4000-8000-000000000001'], { env })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--reason is required')
  })
})

/**
 * Issue 22, items 4 and 7, as real processes on a fresh database: the days a run may cover (none
 * after tomorrow, none before the installation's first event) and the text rules on `ack`'s options.
 */
describe('satang reconcile on a real database', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let pool: Pool
  let store: EventStore
  const cwd = mkdtempSync(join(tmpdir(), 'satang-reconcile-'))
  const satang = (...args: string[]) => runCli(args, { env: envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url, SATANG_LOG_LEVEL: 'warn' }), cwd })
  const today = (): string => formatCalendarDate(bangkokDateOf(new Date()))
  const dayOffset = (day: string, n: number): string => {
    const d = parseCalendarDate(day)
    if (E.isLeft(d)) throw new Error(day)
    return formatCalendarDate(addDays(d.right, n))
  }
  const eventCount = async (): Promise<number> => Number((await pool.query<{ n: string }>(`select count(*)::text as n from "${EVENT_STORE_SCHEMA}".events`)).rows[0]?.n)

  beforeAll(async () => {
    database = await freshDatabase('reconcilecli')
    const migrated = await satang('migrate')
    expect(migrated.code, migrated.stderr).toBe(0)
    pool = makePostgresPool({ url: database.url }, silentLogger())
    store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: EVENT_STORE_SCHEMA })
  }, 60_000)

  afterAll(async () => {
    await store.close()
    await pool.end()
    await database.drop()
    rmSync(cwd, { recursive: true, force: true })
  })

  it('an empty log: days after tomorrow and before yesterday are refused (exit 2, naming the option and the bound), nothing recorded', async () => {
    const yesterday = dayOffset(today(), -1)
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [['--date', '2999-01-01'], `--date 2999-01-01: must not be after ${dayOffset(today(), 1)} (tomorrow in Asia/Bangkok)`],
      [['--date', '1900-01-01'], `--date 1900-01-01: must not be before ${yesterday} (yesterday in Asia/Bangkok: the event log is empty`],
      [['--from', '1900-01-01', '--to', '1900-01-02'], `--from 1900-01-01: must not be before ${yesterday}`],
      [['--from', today(), '--to', dayOffset(today(), 2)], `--to ${dayOffset(today(), 2)}: must not be after ${dayOffset(today(), 1)}`],
      // The date parser the API's as_of shares: an impossible day is refused by both with one message.
      [['--date', '2026-02-30'], '--date "2026-02-30": day must be 01 to 28 in 2026-02'],
      [['--date', today(), '--as-of', '2026-02-30T10:00:00+07:00'], '--as-of "2026-02-30T10:00:00+07:00": day must be 01 to 28 in 2026-02'],
    ]
    for (const [args, message] of cases) {
      const r = await satang('reconcile', ...args, '--no-progress')
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toContain(message)
    }
    expect(await eventCount()).toBe(0)
  }, 120_000)

  it("days before the installation's first event are refused; its day itself is in the window", async () => {
    await appendOpenBreaks(store, SANDBOX_MERCHANT_ID, 1)
    // An installation that started ten days ago: its first event recorded then (the store's triggers
    // keep the log append-only; the test database's superuser sets them aside for this one update).
    const admin = new Client({ connectionString: database.url })
    await admin.connect()
    try {
      await admin.query('set session_replication_role = replica')
      await admin.query(`update "${EVENT_STORE_SCHEMA}".events set recorded_at = recorded_at - interval '10 days'`)
    } finally {
      await admin.end()
    }
    const first = dayOffset(today(), -10)
    const before = await eventCount()
    const refused = await satang('reconcile', '--date', dayOffset(today(), -11), '--no-progress')
    expect(refused.code, refused.stderr).toBe(2)
    expect(refused.stderr).toContain(`--date ${dayOffset(today(), -11)}: must not be before ${first} (the Asia/Bangkok day of the first event in the event log`)
    const ranged = await satang('reconcile', '--from', dayOffset(first, -3), '--to', first, '--no-progress')
    expect(ranged.code).toBe(2)
    expect(ranged.stderr).toContain(`--from ${dayOffset(first, -3)}: must not be before ${first}`)
    // The first day itself is reconciled (a dry run: a verdict, recording nothing).
    const inside = await satang('reconcile', '--date', first, '--dry-run', '--json', '--no-progress')
    expect([0, 1], inside.stderr).toContain(inside.code)
    expect(JSON.parse(inside.stdout)).toMatchObject({ dry_run: true, scope: { from: first, to: first } })
    expect(await eventCount()).toBe(before)
  }, 120_000)

  it('ack: a control character (C0, C1, ESC, DEL) in --reason or --actor is exit 2 naming the option; nothing recorded; a clean one is recorded as given', async () => {
    const [breakId, other] = await appendOpenBreaks(store, SANDBOX_MERCHANT_ID, 2)
    if (breakId === undefined || other === undefined) throw new Error('no breaks')
    // NUL cannot be passed in a process argument at all, and a lone surrogate arrives as U+FFFD: the
    // characters a command line can carry are what is tried here.
    for (const c of ['\u0001', '\u009b', '\u001b[31m', '\u007f']) {
      const before = await eventCount()
      const reason = await satang('reconcile', 'ack', breakId, '--reason', `fee agreed${c}`)
      expect(reason.code, reason.stderr).toBe(2)
      expect(reason.stderr).toContain('--reason must not contain NUL or other control characters')
      const actor = await satang('reconcile', 'ack', breakId, '--reason', 'fee agreed', '--actor', `ops${c}`)
      expect(actor.code, actor.stderr).toBe(2)
      expect(actor.stderr).toContain('--actor must not contain NUL or other control characters')
      expect(await eventCount()).toBe(before)
    }
    const bad = await satang('reconcile', 'ack', 'not-a-break', '--reason', 'x')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('<break_id> must be a break id')
    const ok = await satang('reconcile', 'ack', other, '--reason', 'ค่าธรรมเนียม\tagreed\nwith the gateway', '--actor', 'finance-ops', '--json')
    expect(ok.code, ok.stderr).toBe(0)
    const stored = await pool.query<{ data: { reason: string; actor: string } }>(`select data from "${EVENT_STORE_SCHEMA}".events where stream_name = $1`, [breakStreamName(SANDBOX_MERCHANT_ID, other)])
    expect(stored.rows.map((r) => [r.data.actor, r.data.reason])).toEqual([['finance-ops', 'ค่าธรรมเนียม\tagreed\nwith the gateway']])
    expect((await pool.query(`select 1 from "${EVENT_STORE_SCHEMA}".events where stream_name = $1`, [breakStreamName(SANDBOX_MERCHANT_ID, breakId)])).rowCount).toBe(0)
  }, 180_000)
})
