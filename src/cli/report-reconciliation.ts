import { dirname, join } from 'node:path'
import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import { refusalText, writeFileNoFollow, type WriteRefused } from '../adapters/os/safe-write.ts'
import { csvText, type CsvOptions } from '../adapters/report/csv.ts'
import { filedReportRefusal, MANIFEST, SIGNATURE, UNSIGNED_MANIFEST_FORMAT, writeReportDir, writeReportFiles, verifyReportDir, type ManifestSigner, type Verified, type VerifyProblem } from '../adapters/report/manifest.ts'
import { reportHtml } from '../adapters/report/reconciliation-html.ts'
import { parseAsOf, type AsOf } from '../application/as-of.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import { csvTables } from '../domain/reconciliation/report/csv.ts'
import { reportJson } from '../domain/reconciliation/report/json.ts'
import { ledgerDifference, type ReconciliationReport } from '../domain/reconciliation/report/model.ts'
import { reportText } from '../domain/reconciliation/report/text.ts'
import { anchorKeyPath, anchorPublicKey } from '../composition/anchors.ts'
import type { Config } from '../config.ts'
import { StartupError } from '../composition/startup.ts'
import { daysBetween } from '../jobs/reconcile/reconcile.ts'
import { loadOrCreateEd25519Key } from '../local-secrets.ts'
import { READ_MODEL_SCHEMA, makeEventStore, type Database } from '../composition/database.ts'
import { merchantIdOf } from '../composition/gateway.ts'
import { AsOfRefused, resolveAsOf, withReadModelsAsOf } from '../projections/as-of.ts'
import { ledgerProjection } from '../projections/ledger/projection.ts'
import { ordersProjection } from '../projections/orders/projection.ts'
import { readReconciliationReport } from '../projections/reconciliation/report.ts'
import { reconciliationProjection } from '../projections/reconciliation/projection.ts'
import { refundsProjection } from '../projections/refunds/projection.ts'
import { subscriptionsProjection } from '../projections/subscriptions/projection.ts'
import { EXIT, UsageError } from './io.ts'
import { scopeOf } from './reconcile.ts'
import { configOrUsage, openToolDatabase, quietLogger } from './tool-config.ts'

type Options = { date?: string; from?: string; to?: string; json?: boolean; csv?: string; html?: string; out?: string; asOf?: string; force?: boolean; excel?: boolean; header?: string }

const HELP_AFTER = `
The reconciliation of a Bangkok business day (default yesterday) or a range, for finance: the verdict of
each day; counts and amounts (baht with two decimals; satang in JSON and CSV) of matched, healed,
pending, unchecked, acknowledged and broken items and of each break class; the ageing of the breaks
still open; the open breaks; the items healed; and the ledger check: the gateway receivable of the
trial balance at the end of the last day beside what the paid orders, subscription charges and refunds
add up to.

Formats: a table (default); --json (one document); --csv DIR (days.csv, breaks.csv, healed.csv);
--html FILE (one self-contained, printable page with a chart; no network needed to open it);
--out DIR (all of them, plus manifest.json: each file's SHA-256, the run ids and log positions the
report was built from, and the command that builds it again; and manifest.sig: its signature by the
anchor key, SATANG_ANCHOR_KEY_FILE or SATANG_DATA_DIR/anchor-private.pem, generated when absent).
satang report verify DIR checks a folder.

Files are written without following symbolic links (a link at a file's name, as DIR or as FILE's
folder is refused, exit 2) through a temporary file renamed into place. A folder that holds a filed
report (a manifest.json) is never written into unless --force, which replaces it. In CSV, a text cell
that starts with =, +, -, @, a tab or CR gets a leading ' so that no spreadsheet reads it as a formula;
amounts and counts stay numbers. CSV is UTF-8 without a byte order mark by default; --excel starts each
file with one (Excel then reads Thai text right); --header human writes readable headers ("Payments
matched (THB)") instead of the column names. Each UTC time column has its Bangkok time beside it.

--as-of INSTANT|POSITION builds the report from the log as it stood then (an ISO-8601 instant with its
offset, e.g. 2026-11-20T17:00:00+07:00, or a log position such as a manifest's log_position): the read
models are rebuilt from the log up to there, in a transaction that leaves nothing behind.

Exit codes: 0 written and the ledger agrees with the items; 1 the ledger does not agree, or the read
models do not exist yet (run satang migrate / satang up first); 2 bad usage, or a write refused (named
with its rule); 3 the database, the event log or the file system failed.`

const VERIFY_HELP = `
Checks a folder written by satang report reconciliation --out: manifest.sig must be a valid signature
of manifest.json by the anchor key (--key FILE, a public or private PEM; default SATANG_ANCHOR_KEY_FILE,
else SATANG_DATA_DIR/anchor-private.pem or anchor-public.pem), every file manifest.json lists must have
the SHA-256 it records, and no other file may be there. A manifest rewritten with its SHA-256 lines
recomputed fails on its signature. Prints the manifest's own SHA-256: compare it with the one printed
(and filed) when the report was made.

Manifests of format satang-report-manifest-v1 (written before manifests were signed) carry no
signature: verify refuses them (exit 1, UNSIGNED) unless --allow-unsigned, which checks their files
and says they are unsigned; only their filed SHA-256 then shows the manifest was not rewritten.

Exit codes: 0 the signature holds and every file matches; 1 the signature does not hold, the manifest
is unsigned, or a file was altered, is missing or is not listed; 2 no readable manifest in DIR, or no
anchor key to check its signature with.`

const READ_MODELS = [ordersProjection, ledgerProjection, refundsProjection, subscriptionsProjection, reconciliationProjection]

/** Every file of `--out`, by name. */
export const reportFiles = (r: ReconciliationReport, csv: CsvOptions = {}): ReadonlyArray<{ readonly name: string; readonly content: string }> => [
  { name: 'report.json', content: `${JSON.stringify(reportJson(r), null, 2)}\n` },
  { name: 'report.txt', content: reportText(r) },
  { name: 'report.html', content: reportHtml(r) },
  ...csvTables(r).map((t) => ({ name: t.file, content: csvText(t, csv) })),
]

/** A write satang refused: exit 2, naming the path and the rule. */
const refused = (r: WriteRefused): UsageError => new UsageError(`refused to write ${refusalText(r)}`)

/** The anchor key that signs the manifest of `--out`: the configured one, else the data folder's (generated when absent). */
const manifestSigner = async (config: Config): Promise<ManifestSigner> => {
  const loaded = await loadOrCreateEd25519Key(anchorKeyPath(config), config.SATANG_ANCHOR_KEY_FILE === undefined)
  if (E.isLeft(loaded)) throw new UsageError(`SATANG_ANCHOR_KEY_FILE (the anchor key signs the report manifest): ${loaded.left}`)
  return { privateKey: loaded.right.privateKey }
}

const isMissingTable = (e: unknown): boolean => typeof e === 'object' && e !== null && 'code' in e && (e.code === '42P01' || e.code === '3F000')

const build = async (db: Database, store: EventStore, merchantId: string, scope: { from: string; to: string; days: ReadonlyArray<string> }, asOfText: string | undefined): Promise<ReconciliationReport> => {
  const now = new Date()
  if (asOfText === undefined) {
    return readReconciliationReport({ db: db.pool, schema: READ_MODEL_SCHEMA }, store, { merchantId, ...scope, generatedAt: now, asOf: { instant: now, position: null, requested: null } })
  }
  const parsed = parseAsOf(asOfText)
  if (E.isLeft(parsed)) throw new UsageError(`--as-of ${JSON.stringify(asOfText)}: ${parsed.left}`)
  const asOf: AsOf = await resolveAsOf({ store, pool: db.pool }, READ_MODEL_SCHEMA, parsed.right, now)
  return withReadModelsAsOf({ store, pool: db.pool }, READ_MODELS, asOf.position, (rm) =>
    readReconciliationReport(rm, store, { merchantId, ...scope, generatedAt: now, asOf: { instant: asOf.instant, position: asOf.position, requested: asOf.requested } }),
  )
}

/** `satang report reconciliation`. */
export const addReconciliationReport = (report: Command, setExitCode: (code: number) => void): void => {
  report
    .command('reconciliation')
    .description('the reconciliation of a Bangkok business day or range for finance: verdicts, counts and amounts, ageing, open breaks, healed items, the ledger check')
    .option('--date <yyyy-MM-dd>', 'the Asia/Bangkok business day (default: yesterday)')
    .option('--from <yyyy-MM-dd>', 'first day of a range (with --to)')
    .option('--to <yyyy-MM-dd>', 'last day of a range, inclusive (with --from)')
    .option('--json', 'print the report as one JSON document')
    .option('--csv <dir>', 'write days.csv, breaks.csv and healed.csv into DIR')
    .option('--html <file>', 'write one self-contained HTML page with a chart to FILE')
    .option('--out <dir>', 'write every format and manifest.json (SHA-256 of each file, the runs and log positions) into DIR')
    .option('--as-of <instant|position>', 'the report as the log stood at an instant (with its offset) or a log position')
    .option('--excel', 'CSV files start with the UTF-8 byte order mark, for Excel (default: none)')
    .option('--header <machine|human>', 'CSV header row: column names (machine, default) or readable headers (human)')
    .option('--force', 'replace a filed report: write into a folder that holds a manifest.json (symbolic links are refused all the same)')
    .addHelpText('after', HELP_AFTER)
    .action(async (opts: Options) => {
      const formats = [opts.json === true ? '--json' : null, opts.csv === undefined ? null : '--csv', opts.html === undefined ? null : '--html', opts.out === undefined ? null : '--out'].filter((f) => f !== null)
      if (formats.length > 1) throw new UsageError(`${formats.join(' and ')} exclude each other: choose one (--out writes every format)`)
      if (opts.header !== undefined && opts.header !== 'machine' && opts.header !== 'human') throw new UsageError(`--header ${JSON.stringify(opts.header)}: must be machine or human`)
      if ((opts.excel === true || opts.header !== undefined) && opts.csv === undefined && opts.out === undefined) throw new UsageError('--excel and --header shape CSV files: give --csv DIR or --out DIR')
      const csvOptions: CsvOptions = { bom: opts.excel === true, header: opts.header === 'human' ? 'human' : 'machine' }
      const scope = scopeOf(opts, new Date())
      const days = daysBetween(scope.from, scope.to)
      if (E.isLeft(days)) throw new UsageError(`--from ${scope.from} --to ${scope.to}: ${days.left}`)
      const asOfChecked = opts.asOf === undefined ? undefined : parseAsOf(opts.asOf)
      if (asOfChecked !== undefined && E.isLeft(asOfChecked)) throw new UsageError(`--as-of ${JSON.stringify(opts.asOf)}: ${asOfChecked.left}`)
      const config = await configOrUsage()
      const merchantId = merchantIdOf(config)
      if (merchantId === undefined) throw new UsageError('SATANG_MERCHANT_ID is required with SATANG_GATEWAY_BASE_URL: the report is of one merchant')
      const signer = opts.out === undefined ? undefined : await manifestSigner(config)
      const force = opts.force === true
      const log = quietLogger(config)
      const db = await openToolDatabase(config, log, setExitCode)
      if (db === undefined) return
      const store = makeEventStore(config, db, log)
      try {
        const r = await build(db, store, merchantId, { from: scope.from, to: scope.to, days: days.right }, opts.asOf)
        const agrees = ledgerDifference(r.ledger) === 0n
        if (opts.json === true) process.stdout.write(`${JSON.stringify(reportJson(r), null, 2)}\n`)
        else if (opts.csv !== undefined) {
          const written = await writeReportFiles(opts.csv, csvTables(r).map((t) => ({ name: t.file, content: csvText(t, csvOptions) })), force)
          if (E.isLeft(written)) throw refused(written.left)
          process.stdout.write(`satang: wrote ${csvTables(r).map((t) => join(opts.csv ?? '', t.file)).join(', ')}\n`)
        } else if (opts.html !== undefined) {
          const filed = await filedReportRefusal(dirname(opts.html), force)
          if (filed !== null) throw refused(filed)
          const written = await writeFileNoFollow(opts.html, reportHtml(r))
          if (E.isLeft(written)) throw refused(written.left)
          process.stdout.write(`satang: wrote ${opts.html}\n`)
        } else if (opts.out !== undefined && signer !== undefined) {
          const json = reportJson(r)
          const written = await writeReportDir(opts.out, reportFiles(r, csvOptions), {
            report: 'reconciliation',
            merchant_id: r.merchantId,
            from: r.from,
            to: r.to,
            generated_at: r.generatedAt.toISOString(),
            as_of: json['as_of'] ?? null,
            verdict: json['verdict'] ?? null,
            runs: r.sources.runs.map((s) => ({ run_id: s.runId, stream: s.stream, last_event_position: s.lastEventPosition })),
            checkpoints: { ...r.sources.checkpoints },
            log_position: r.sources.logPosition,
            rebuild: `satang report reconciliation --from ${r.from} --to ${r.to}${r.sources.logPosition === null ? '' : ` --as-of ${r.sources.logPosition}`} --out DIR`,
          }, { force, signer })
          if (E.isLeft(written)) throw refused(written.left)
          const w = written.right
          process.stdout.write(`satang: wrote ${w.files.map((f) => join(opts.out ?? '', f)).join(', ')}\nmanifest signed by anchor key ${w.keyId}; manifest SHA-256 ${w.manifestSha256} (file it with the report: satang report verify ${opts.out} prints it again)\n`)
        } else process.stdout.write(reportText(r))
        if (!agrees) process.stderr.write('satang: the ledger\'s gateway receivable does not agree with the items (see the ledger check)\n')
        setExitCode(agrees ? EXIT.ok : EXIT.negative)
      } catch (e) {
        if (e instanceof UsageError) throw e
        if (e instanceof AsOfRefused) throw new UsageError(`--as-of: ${e.message}`)
        if (isMissingTable(e)) {
          process.stderr.write(`satang: the reconciliation or ledger read models do not exist yet: run satang migrate / satang up first\n`)
          setExitCode(EXIT.negative)
          return
        }
        process.stderr.write(`satang: the report could not be built (${e instanceof Error ? e.message : 'database error'})\n`)
        setExitCode(EXIT.failure)
      } finally {
        await store.close()
        await db.close()
      }
    })
}

const problemText = (p: VerifyProblem): string => {
  switch (p._tag) {
    case 'Altered':
      return `ALTERED ${p.file}: manifest SHA-256 ${p.expected}, file ${p.actual}`
    case 'Missing':
      return `MISSING ${p.file}: listed in the manifest, not in the folder`
    case 'Unlisted':
      return `UNLISTED ${p.file}: in the folder, not in the manifest`
    case 'NotAFile':
      return `NOT A FILE ${p.file}: listed in the manifest, but a symbolic link or not a regular file`
    case 'BadSignature':
      return `BAD SIGNATURE ${MANIFEST}: ${p.reason}`
    case 'Unsigned':
      return `UNSIGNED ${MANIFEST}: format ${p.format} carries no signature (written before manifests were signed); pass --allow-unsigned to check its files, and compare the manifest SHA-256 below with the one filed`
  }
}

const signatureJson = (v: Verified['signature']): Record<string, string> => {
  switch (v._tag) {
    case 'Valid':
      return { status: 'valid', key_id: v.keyId }
    case 'Invalid':
      return { status: 'invalid', reason: v.reason }
    case 'Unsigned':
      return { status: 'unsigned' }
  }
}

/** `satang report verify DIR`. */
export const addReportVerify = (report: Command, setExitCode: (code: number) => void): void => {
  report
    .command('verify')
    .description('check a report folder against its manifest.json (SHA-256 of every file)')
    .argument('<dir>', 'a folder written by satang report reconciliation --out')
    .option('--key <file>', 'the anchor key to check the signature with (public or private PEM; default: the configured or generated anchor key)')
    .option('--allow-unsigned', `accept a manifest written before manifests were signed (${UNSIGNED_MANIFEST_FORMAT}), saying it is unsigned`)
    .option('--json', 'print { valid, manifest_sha256, signature, checked, problems } as JSON')
    .addHelpText('after', VERIFY_HELP)
    .action(async (dir: string, opts: { json?: boolean; key?: string; allowUnsigned?: boolean }) => {
      const config = await configOrUsage()
      const key = await anchorPublicKey(config, opts.key).catch((e: unknown) => {
        if (e instanceof StartupError) throw new UsageError(`--key: ${e.message}`)
        throw e
      })
      const verified = await verifyReportDir(dir, { publicKey: key?.key ?? null, allowUnsigned: opts.allowUnsigned === true })
      if (E.isLeft(verified)) {
        const why = verified.left
        throw new UsageError(why._tag === 'NoManifest' ? why.reason : `${join(dir, MANIFEST)} is signed by anchor key ${why.keyId}, and no anchor key was found to check ${SIGNATURE} with (SATANG_ANCHOR_KEY_FILE, SATANG_DATA_DIR/anchor-private.pem or anchor-public.pem): give --key anchor-public.pem`)
      }
      const v = verified.right
      const valid = v.problems.length === 0
      if (opts.json === true) process.stdout.write(`${JSON.stringify({ valid, manifest_sha256: v.manifestSha256, signature: signatureJson(v.signature), checked: v.checked, problems: v.problems }, null, 2)}\n`)
      else {
        const signed =
          v.signature._tag === 'Valid'
            ? [`signature: valid (Ed25519, anchor key ${v.signature.keyId})`]
            : v.signature._tag === 'Unsigned' && valid
              ? [`UNSIGNED: ${MANIFEST} carries no signature (${UNSIGNED_MANIFEST_FORMAT}): only the manifest SHA-256 filed with the report shows it was not rewritten`]
              : []
        const lines = [...v.problems.map(problemText), ...signed, valid ? `valid: ${String(v.checked.length)} files match manifest.json` : `INVALID: ${String(v.problems.length)} problem(s)`, `manifest SHA-256 ${v.manifestSha256}`]
        ;(valid ? process.stdout : process.stderr).write(`${lines.join('\n')}\n`)
      }
      setExitCode(valid ? EXIT.ok : EXIT.negative)
    })
}
