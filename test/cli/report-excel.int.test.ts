import { randomUUID } from 'node:crypto'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { bangkokDateOf, formatCalendarDate } from '../../src/domain/bangkok-time.ts'
import { toStoreMetadata } from '../../src/domain/events/metadata.ts'
import { encodeDomainEvent, eventSourceOf } from '../../src/domain/events/registry.ts'
import { runStreamName, type RunCommand } from '../../src/domain/reconciliation/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { runEventsOf } from '../domain/reconciliation/run-events.ts'
import { MERCHANT_ID } from '../sandbox/support.ts'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/**
 * Acceptance (issue 27, item 6): `satang report reconciliation --csv DIR --excel --header human` as a
 * real process over a real database holding a run whose ids are formulas and whose detail is Thai:
 * each file starts with the UTF-8 byte order mark, formulas reach it neutralised (a leading ' inside
 * double quotes), amounts (a negative one too) stay plain numbers, the headers are readable, and Thai
 * text survives a real spreadsheet: LibreOffice headless (Debian's package) converts the CSV to xlsx,
 * and the xlsx back to CSV, and the Thai text is still there.
 */

const LIBREOFFICE = ['/usr/bin/libreoffice', '/usr/bin/soffice'].find((p) => existsSync(p))
const inCi = process.env['CI'] !== undefined && process.env['CI'] !== ''
if (LIBREOFFICE === undefined) {
  if (inCi) throw new Error('CI must run the LibreOffice round trip: /usr/bin/libreoffice is missing (.ci/run installs Debian\'s libreoffice-calc)')
  console.warn('report-excel: the LibreOffice round trip is SKIPPED: no /usr/bin/libreoffice (Debian package libreoffice-calc; .ci/run installs it)')
}

const exec = promisify(execFile)
let database: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
let store: EventStore
let env: NodeJS.ProcessEnv
const cwd = mkdtempSync(join(tmpdir(), 'satang-report-excel-'))
const day = formatCalendarDate(bangkokDateOf(new Date()))
const satang = (...args: string[]) => runCli(args, { env, cwd })

const THAI = 'ยอดเงินไม่ตรงกับเกตเวย์ ร้านสมชาย'
const HYPERLINK = '=HYPERLINK("http://x","y")'

const run = (runId: string, at: Date): ReadonlyArray<RunCommand> => {
  const ref = (id: string) => ({ kind: 'payment' as const, id, merchantOrderId: id, merchantRefundId: null, merchantSubscribeId: null, stream: `order-${MERCHANT_ID}-${id}` })
  const brk = (id: string, breakId: string, detail: string) => ({
    checked: { kind: 'payment' as const, id, day, outcome: 'break' as const, breakClass: 'amount_mismatch' as const, breakId, amount: 9900n, atStake: 900n },
    detect: {
      runId,
      breakId,
      class: 'amount_mismatch' as const,
      status: 'new' as const,
      item: ref(id),
      day,
      satangView: { amount_satang: '9900' },
      gatewayView: { amount_satang: '9000' },
      amountAtStake: 900n,
      detail,
      firstSeenAt: at,
      firstSeenRunId: runId,
      detectedAt: at,
      evidence: { traceId: '+1-2', observationKey: null },
    },
    resolve: [],
    healed: null,
  })
  return [
    {
      type: 'StartRun',
      started: {
        runId,
        merchantId: MERCHANT_ID,
        scope: { kind: 'days', from: day, to: day },
        parameters: { concurrency: 16, asOf: at, notFoundGraceMs: 0, stalePendingMs: 0, chargeGraceMs: 0 },
        startedBy: { trigger: 'cli', actor: 'ops' },
        itemsInScope: 3,
        startedAt: at,
      },
    },
    {
      type: 'RecordItems',
      at,
      items: [
        brk(HYPERLINK, 'b-1', THAI),
        brk('+1-2', 'b-2', `+1-2 ${THAI}`),
        { checked: { kind: 'refund', id: 'R-1', day, outcome: 'matched', breakClass: null, breakId: null, amount: 4000n, atStake: 0n }, detect: null, resolve: [], healed: null },
      ],
    },
    { type: 'CompleteRun', days: [day], at: new Date(at.getTime() + 1_000) },
  ]
}

/** RFC 4180 records, header first (what csv-stringify and LibreOffice write). */
const parseCsv = (text: string): string[][] => {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] ?? ''
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i += 1
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(cell)
      cell = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
    } else cell += c
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell])
  return rows
}

beforeAll(async () => {
  database = await freshDatabase('report_excel')
  env = envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url, SATANG_LOG_LEVEL: 'warn' })
  const migrated = await satang('migrate')
  expect(migrated.code, migrated.stderr).toBe(0)
  pool = new Pool({ connectionString: database.url, max: 2 })
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
  const runId = randomUUID()
  const events = runEventsOf(run(runId, new Date(Date.now() - 60_000)))
  const appended = await store.append(
    runStreamName(MERCHANT_ID, runId),
    events.map((e) => {
      const s = encodeDomainEvent(e)
      return { eventId: randomUUID(), type: s.type, schemaVersion: s.schemaVersion, data: s.data, metadata: toStoreMetadata({ correlationId: runId, causationId: runId, recordedAt: new Date().toISOString(), source: eventSourceOf(e) }) }
    }),
    'no_stream',
  )()
  expect(E.isRight(appended)).toBe(true)
  const projected = await satang('project', '--rebuild')
  expect(projected.code, projected.stderr).toBe(0)
}, 120_000)

afterAll(async () => {
  await store?.close()
  await pool?.end()
  await database?.drop()
  rmSync(cwd, { recursive: true, force: true })
})

describe('report reconciliation --csv --excel --header human', () => {
  it('starts with the BOM, neutralises formulas in quotes, keeps amounts numeric, readable headers; the default has no BOM', async () => {
    const dir = join(cwd, 'excel')
    const r = await satang('report', 'reconciliation', '--date', day, '--csv', dir, '--excel', '--header', 'human')
    expect(r.code, r.stderr).toBe(0)
    const bytes = readFileSync(join(dir, 'breaks.csv'))
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const text = bytes.toString('utf8').slice(1)
    const [header, ...rows] = parseCsv(text)
    expect(header).toContain('Merchant order id')
    expect(header).toContain('First seen (Bangkok)')
    const col = (name: string): number => (header ?? []).indexOf(name)
    const b1 = rows.find((x) => x[col('Detail')] === THAI)
    expect(b1?.[col('Merchant order id')]).toBe(`'${HYPERLINK}`)
    expect(text).toContain(`"'=HYPERLINK(""http://x"",""y"")"`)
    const b2 = rows.find((x) => x[col('Merchant order id')] === "'+1-2")
    expect(b2?.[col('Gateway trace id')]).toBe("'+1-2")
    expect(b2?.[col('At stake (THB)')]).toBe('9.00')
    expect(b2?.[col('At stake (satang)')]).toBe('900')
    const days = parseCsv(readFileSync(join(dir, 'days.csv'), 'utf8').slice(1))
    const dh = days[0] ?? []
    expect(days[1]?.[dh.indexOf('Payments matched (items)')]).toBe('0')
    expect(days[1]?.[dh.indexOf('Refunds matched (THB)')]).toBe('40.00')

    const plain = join(cwd, 'plain')
    expect((await satang('report', 'reconciliation', '--date', day, '--csv', plain)).code).toBe(0)
    expect(readFileSync(join(plain, 'breaks.csv'))[0]).toBe('b'.charCodeAt(0))
    expect((await satang('report', 'reconciliation', '--date', day, '--excel')).code).toBe(2)
    const bad = await satang('report', 'reconciliation', '--date', day, '--csv', join(cwd, 'bad'), '--header', 'pretty')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--header "pretty": must be machine or human')
  })

  it.skipIf(LIBREOFFICE === undefined)('Thai text round-trips through LibreOffice: CSV → xlsx → CSV', { timeout: 180_000 }, async () => {
    const dir = join(cwd, 'lo')
    expect((await satang('report', 'reconciliation', '--date', day, '--csv', dir, '--excel')).code).toBe(0)
    const profile = mkdtempSync(join(tmpdir(), 'satang-lo-profile-'))
    const xlsxDir = join(cwd, 'xlsx')
    const backDir = join(cwd, 'back')
    mkdirSync(xlsxDir)
    mkdirSync(backDir)
    const lo = async (...args: string[]) => exec(LIBREOFFICE ?? '', [`-env:UserInstallation=file://${profile}`, '--headless', '--norestore', ...args], { timeout: 150_000 })
    try {
      // 44,34,76: comma, double quote, UTF-8 (the BOM says so too); row 1 as text, no column typed as a formula.
      await lo('--infilter=CSV:44,34,76,1', '--convert-to', 'xlsx', '--outdir', xlsxDir, join(dir, 'breaks.csv'))
      const xlsx = join(xlsxDir, 'breaks.xlsx')
      expect(existsSync(xlsx)).toBe(true)
      expect(readFileSync(xlsx).subarray(0, 2).toString('latin1')).toBe('PK')
      await lo('--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1', '--outdir', backDir, xlsx)
      const back = readFileSync(join(backDir, 'breaks.csv'), 'utf8').replace(/^\uFEFF/, '')
      const rows = parseCsv(back)
      const header = rows[0] ?? []
      const detail = rows.slice(1).map((r) => r[header.indexOf('detail')])
      expect(detail).toContain(THAI)
      expect(detail).toContain(`+1-2 ${THAI}`.replace(/^\+/, "'+"))
      // The formula stayed text: the cell reads back as written (with its '), never as a computed value.
      const ids = rows.slice(1).map((r) => r[header.indexOf('merchant_order_id')])
      expect(ids.some((v) => v?.includes('HYPERLINK("http://x","y")'))).toBe(true)
      // Amounts stayed numbers: 9.00 reads back as a number (LibreOffice writes 9 or 9.00, never '9.00).
      const stakes = rows.slice(1).map((r) => r[header.indexOf('amount_at_stake')])
      for (const v of stakes) expect(v).toMatch(/^9(\.0+)?$/)
    } finally {
      rmSync(profile, { recursive: true, force: true })
    }
  })
})
