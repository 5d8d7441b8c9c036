import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { ANCHOR_FORMAT, anchorJson, anchorSignatureValid, checkAnchors, type Anchor } from '../adapters/eventstore/anchors.ts'
import { verifyEventChain, type ChainBreak, type ChainVerification, type StreamHead } from '../adapters/eventstore/chain.ts'
import { refusalText, writeFileNoFollow } from '../adapters/os/safe-write.ts'
import { anchorPublicKey } from '../composition/anchors.ts'
import { Position } from '../application/ports/event-store.ts'
import type { Config } from '../config.ts'
import { EVENT_STORE_SCHEMA, type Database } from '../composition/database.ts'
import { StartupError } from '../composition/startup.ts'
import { configOrUsage, openToolDatabase, quietLogger } from './tool-config.ts'
import { EXIT, UsageError, readTextFile } from './io.ts'
import { READ_LIMITS } from '../adapters/os/bounded-read.ts'

type VerifyOptions = { json?: boolean; saveHeads?: string; against?: string; expectDigest?: string; quiet?: boolean; anchorKey?: string; anchorFile?: string }
/** The options of `satang audit` itself, which `satang audit --kind order verify` hands back to the trail. */
type TrailOptions = { kind?: string; merchantId?: string; json?: boolean }

const HEADS_FORMAT = 'satang-stream-heads-v1'
const HeadsFile = t.type({
  format: t.literal(HEADS_FORMAT),
  heads: t.array(t.type({ stream: t.string, revision: t.string, hash: t.string })),
})

const readKeptHeads = async (path: string): Promise<ReadonlyArray<StreamHead>> => {
  const text = await readTextFile(path, 'kept heads file', READ_LIMITS.heads)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new UsageError(`--against ${JSON.stringify(path)} is not valid JSON`)
  }
  const decoded = HeadsFile.decode(parsed)
  if (E.isLeft(decoded)) throw new UsageError(`--against ${JSON.stringify(path)} is not a stream heads file written by satang audit verify --save-heads (format ${HEADS_FORMAT})`)
  return decoded.right.heads.map((h, i) => {
    if (!/^\d{1,19}$/.test(h.revision) || !/^[0-9a-f]{64}$/.test(h.hash)) throw new UsageError(`--against ${JSON.stringify(path)}: head ${String(i + 1)} (${h.stream}) needs a decimal revision and a 64-digit hex hash`)
    return { stream: h.stream, revision: BigInt(h.revision), hash: h.hash }
  })
}

const breakJson = (b: ChainBreak) => ({
  kind: b.kind,
  stream: b.stream,
  revision: b.revision.toString(),
  position: b.position,
  event_id: b.eventId,
  ...(b.missing === undefined ? {} : { missing: { from: b.missing.from.toString(), to: b.missing.to.toString() } }),
  reason: b.reason,
})

const count = (n: number): string => n.toLocaleString('en-US')

const AnchorLine = t.type({
  format: t.literal(ANCHOR_FORMAT),
  seq: t.string,
  created_at: t.string,
  reason: t.string,
  position: t.union([Position, t.null]),
  events: t.string,
  streams: t.string,
  heads_digest: t.string,
  changes_digest: t.string,
  changed_streams: t.string,
  prev_signature: t.union([t.string, t.null]),
  key_id: t.string,
  signature: t.string,
})

/** The anchors of a SATANG_ANCHOR_FILE (one JSON line each). */
const readAnchorFile = async (path: string): Promise<ReadonlyArray<Anchor>> => {
  const text = await readTextFile(path, 'anchor file', READ_LIMITS.anchors)
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, i) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        throw new UsageError(`--anchor-file ${JSON.stringify(path)}: line ${String(i + 1)} is not JSON`)
      }
      const d = AnchorLine.decode(parsed)
      if (E.isLeft(d) || !/^\d+$/.test(d.right.seq)) throw new UsageError(`--anchor-file ${JSON.stringify(path)}: line ${String(i + 1)} is not an anchor written by satang (format ${ANCHOR_FORMAT})`)
      const a = d.right
      return {
        seq: BigInt(a.seq),
        createdAt: a.created_at,
        reason: a.reason,
        position: a.position,
        events: BigInt(a.events),
        streams: BigInt(a.streams),
        headsDigest: a.heads_digest,
        changesDigest: a.changes_digest,
        changedStreams: BigInt(a.changed_streams),
        prevSignature: a.prev_signature,
        keyId: a.key_id,
        signature: a.signature,
      }
    })
}

/** What the anchors say and what is wrong with them (including against the anchor file). */
type AnchorsSeen = {
  readonly count: number
  /** The latest anchor, from the database or the file, that the log is checked against. */
  readonly reference: Anchor | null
  readonly problems: ReadonlyArray<string>
  readonly heads: ReadonlyArray<StreamHead & { readonly seq: bigint }>
  readonly all: ReadonlyArray<Anchor>
  readonly keyPath: string | null
}

const hasAnchorsTable = async (db: Database): Promise<boolean> => {
  const r = await db.pool.query<{ ok: boolean }>(`select to_regclass($1) is not null as ok`, [`"${EVENT_STORE_SCHEMA}".anchors`])
  return r.rows[0]?.ok === true
}

const seeAnchors = async (db: Database, config: Config, opts: VerifyOptions): Promise<AnchorsSeen> => {
  const key = await anchorPublicKey(config, opts.anchorKey)
  if (!(await hasAnchorsTable(db))) return { count: 0, reference: null, problems: [], heads: [], all: [], keyPath: key?.path ?? null }
  const checked = await checkAnchors(db.pool, EVENT_STORE_SCHEMA, key?.key ?? null)
  const problems = checked.problems.map((p) => p.reason)
  let reference = checked.anchors.at(-1) ?? null
  if (opts.anchorFile !== undefined) {
    const kept = await readAnchorFile(opts.anchorFile)
    const bySeq = new Map(checked.anchors.map((a) => [a.seq, a]))
    for (const f of kept) {
      if (key !== null && !anchorSignatureValid(f, key.key)) problems.push(`anchor #${f.seq.toString()} in ${opts.anchorFile}: its signature does not verify with the anchor key`)
      const inDb = bySeq.get(f.seq)
      if (inDb === undefined) problems.push(`anchor #${f.seq.toString()} (${f.createdAt}) is in ${opts.anchorFile} but not in the database: it was deleted`)
      else if (JSON.stringify(anchorJson(inDb)) !== JSON.stringify(anchorJson(f))) problems.push(`anchor #${f.seq.toString()} differs between the database and ${opts.anchorFile}: it was replaced`)
    }
    const latestKept = kept.at(-1)
    if (latestKept !== undefined && (reference === null || latestKept.seq > reference.seq)) reference = latestKept
  }
  return { count: checked.anchors.length, reference, problems, heads: checked.heads, all: checked.anchors, keyPath: key?.path ?? null }
}

/** "since anchor #N (created …)": the first anchor that covered the broken place, or null. */
const sinceAnchor = (b: ChainBreak, seen: AnchorsSeen): Anchor | null => {
  const recorded = seen.heads.find((h) => h.stream === b.stream)
  if ((b.kind === 'head_missing' || b.kind === 'head_mismatch') && recorded !== undefined) return seen.all.find((a) => a.seq === recorded.seq) ?? null
  const at = b.position
  if (at === null) return null
  return seen.all.find((a) => a.position !== null && a.position >= at) ?? null
}

const anchorText = (a: Anchor): string => `anchor #${a.seq.toString()} (${a.createdAt}, ${a.reason})`

/** `satang audit verify`: walks the event log's hash chains, checks them against the signed anchors, and reports what is wrong. */
const verifyLog = async (opts: VerifyOptions, setExitCode: (code: number) => void): Promise<void> => {
  if (opts.expectDigest !== undefined && !/^(sha256:)?[0-9a-f]{64}$/.test(opts.expectDigest)) throw new UsageError('--expect-digest must be the 64 hex digits printed as "stream heads digest"')
  const expectDigest = opts.expectDigest?.replace(/^sha256:/, '')
  const againstHeads = opts.against === undefined ? undefined : await readKeptHeads(opts.against)
  const config = await configOrUsage()
  if (config.SATANG_EVENT_STORE !== 'postgres') throw new UsageError(`audit verify checks the PostgreSQL event store only; SATANG_EVENT_STORE is ${config.SATANG_EVENT_STORE} (docs/audit.md "Tamper evidence" says what protects EventStoreDB)`)
  const log = quietLogger(config)
  const db = await openToolDatabase(config, log, setExitCode)
  if (db === undefined) return

  const started = Date.now()
  let lastReport = started
  let verified: E.Either<{ readonly cause: unknown }, ChainVerification>
  let seen: AnchorsSeen
  try {
    try {
      seen = await seeAnchors(db, config, opts)
    } catch (e) {
      if (e instanceof StartupError) throw new UsageError(e.message)
      throw e
    }
    // The heads the anchors recorded must all still be there; heads kept in a file (--against) too.
    const kept = new Map<string, StreamHead>()
    for (const h of seen.heads) kept.set(h.stream, h)
    for (const h of againstHeads ?? []) {
      const k = kept.get(h.stream)
      if (k === undefined || h.revision >= k.revision) kept.set(h.stream, h)
    }
    const digestAt = seen.reference?.position ?? undefined
    verified = await verifyEventChain(db.pool, EVENT_STORE_SCHEMA, {
      collectHeads: opts.saveHeads !== undefined,
      ...(kept.size === 0 ? {} : { keptHeads: [...kept.values()] }),
      ...(digestAt === undefined ? {} : { digestAt }),
      onProgress: (p) => {
        const now = Date.now()
        if (opts.quiet === true || now - lastReport < 2_000) return
        lastReport = now
        const rate = Math.round(p.events / ((now - started) / 1000))
        process.stderr.write(`satang audit verify: ${count(p.events)} events in ${count(p.streams)} streams checked (${count(rate)} events/s)…\n`)
      },
    })()
  } finally {
    await db.close()
  }
  if (E.isLeft(verified)) {
    const cause = verified.left.cause
    process.stderr.write(`satang: the event log could not be verified: ${cause instanceof Error ? cause.message : String(cause)}\n`)
    setExitCode(EXIT.failure)
    return
  }
  const r = verified.right
  const seconds = (Date.now() - started) / 1000
  const digestDiffers = r.intact && expectDigest !== undefined && r.headsDigest !== expectDigest
  const ref = seen.reference
  // The log as it stood at the reference anchor must still give that anchor's signed digest.
  const anchorDiffers = r.intact && ref !== null && r.atPosition !== undefined && r.atPosition.headsDigest !== ref.headsDigest
  const anchorDiffText =
    anchorDiffers && ref !== null && r.atPosition !== undefined
      ? `the log up to ${anchorText(ref)} at position ${ref.position ?? '-'} no longer gives its signed stream heads digest (anchored: ${ref.events.toString()} events in ${ref.streams.toString()} streams; now up to that position: ${String(r.atPosition.events)} events in ${String(r.atPosition.streams)} streams): events were inserted, removed or rewritten before that anchor`
      : null
  const since = r.firstBreak === null ? null : sinceAnchor(r.firstBreak, seen)
  const intact = r.intact && !digestDiffers && !anchorDiffers && seen.problems.length === 0
  let savedTo: string | null = null
  if (r.intact && opts.saveHeads !== undefined) {
    const file = {
      format: HEADS_FORMAT,
      schema: EVENT_STORE_SCHEMA,
      checkedAt: new Date().toISOString(),
      streams: r.streams,
      events: r.events,
      headsDigest: r.headsDigest,
      heads: (r.heads ?? []).map((h) => ({ stream: h.stream, revision: h.revision.toString(), hash: h.hash })),
    }
    const saved = await writeFileNoFollow(opts.saveHeads, `${JSON.stringify(file, null, 1)}\n`)
    if (E.isLeft(saved)) throw new UsageError(`--save-heads: refused to write ${refusalText(saved.left)}`)
    savedTo = opts.saveHeads
  }

  if (opts.json === true) {
    process.stdout.write(
      `${JSON.stringify({
        intact,
        streams: r.streams,
        events: r.events,
        heads_digest: r.headsDigest,
        ...(expectDigest === undefined ? {} : { expected_digest: expectDigest, digest_matches: r.intact ? !digestDiffers : null }),
        first_break: r.firstBreak === null ? null : { ...breakJson(r.firstBreak), since_anchor: since === null ? null : since.seq.toString() },
        anchors: {
          count: seen.count,
          key: seen.keyPath,
          reference: ref === null ? null : { seq: ref.seq.toString(), created_at: ref.createdAt, reason: ref.reason, position: ref.position, events: ref.events.toString(), streams: ref.streams.toString() },
          log_matches_reference: ref === null || !r.intact ? null : !anchorDiffers,
          problems: anchorDiffText === null ? seen.problems : [...seen.problems, anchorDiffText],
        },
        heads_saved_to: savedTo,
        seconds,
      })}\n`,
    )
  } else {
    const lines: string[] = []
    if (r.firstBreak !== null) lines.push(`event log BROKEN: ${r.firstBreak.reason}${since === null ? ' (not yet covered by an anchor)' : `; this was anchored by ${anchorText(since)}, so it was altered after that anchor was written`}`)
    if (anchorDiffText !== null) lines.push(`event log BROKEN: ${anchorDiffText}`)
    for (const p of seen.problems) lines.push(`anchors BROKEN: ${p}`)
    if (digestDiffers) lines.push(`event log DIFFERS from the kept digest: its chains are intact, but the stream heads digest is ${r.headsDigest ?? ''}, not ${expectDigest ?? ''} (events were appended since, or streams rewritten or deleted)`)
    if (intact) {
      lines.push(
        `event log intact: ${count(r.events)} events in ${count(r.streams)} streams checked in ${seconds.toFixed(1)} s${againstHeads === undefined ? '' : `, ${count(againstHeads.length)} kept heads matched`}`,
        ref === null
          ? 'anchors: none yet, so a deleted stream tail or a whole deleted stream cannot be told (the scheduler writes them; see docs/audit.md "Tamper evidence")'
          : `anchors: ${count(seen.count)} checked${seen.keyPath === null ? ' (signatures NOT checked: no anchor key found; give --anchor-key)' : ` with the key ${seen.keyPath}`}; the log matches ${anchorText(ref)} at position ${ref.position ?? '-'}`,
        `stream heads digest: ${r.headsDigest ?? ''}`,
      )
      if (savedTo !== null) lines.push(`stream heads written to ${savedTo}: keep it outside the database and check later with --against`)
    }
    process.stdout.write(`${lines.join('\n')}\n`)
  }
  setExitCode(intact ? EXIT.ok : EXIT.negative)
}

const VERIFY_HELP = `
Every event carries a sha256 hash chained to the previous event of its stream (set by the database on
insert; the events table refuses UPDATE, DELETE and TRUNCATE, and the service role may not change it).
This walks every stream in revision order, recomputes each hash from the stored columns and reports the
first break: an altered event (hash mismatch), a deleted one (missing revision), a reordered or
rewritten predecessor (chain link mismatch).

Anchors (written by the scheduler every SATANG_ANCHOR_INTERVAL_MINUTES and after every reconciliation
run, signed with the Ed25519 anchor key) record every stream's head at a global position. They are
checked too: their signatures and their chain, and the log against them, so a deleted stream tail or a
whole deleted stream (head missing), a rewritten chain (head mismatch) or events slipped in before an
anchor are found. Each break says since which anchor the place was covered. --anchor-file checks the
anchors kept outside the database (SATANG_ANCHOR_FILE) as well; --save-heads/--against keep heads by hand.

Exit codes: 0 intact, 1 broken (lines naming what, where, and since which anchor), 2 bad usage,
3 the database could not be read. Progress goes to stderr every 2 s on long walks.

An order whose merchant_order_id is "verify" is audited by its stream name
(satang audit order-<merchant_id>-verify) or with --kind (satang audit --kind order verify).`

/** `satang audit verify`, under `audit`; `printVerifyTrail` prints the trail of an order, refund or subscription named "verify" instead. */
export const registerAuditVerifyCommand = (audit: Command, setExitCode: (code: number) => void, printVerifyTrail: (opts: TrailOptions) => Promise<void>): void => {
  audit
    .command('verify')
    .description("check the event log's tamper evidence: recompute every event's hash chain and report the first break")
    .option('--json', 'print the result as JSON: { intact, streams, events, heads_digest, first_break, … }')
    .option('--save-heads <file>', "when intact, write every stream's head (last revision and hash) and their digest to FILE, to keep outside the database")
    .option('--against <file>', 'also check heads kept earlier with --save-heads: each must still be there, with the same hash')
    .option('--expect-digest <hex>', 'the stream heads digest must be this one (a log with no appends since it was kept)')
    .option('--anchor-key <file>', 'the anchor public key (or private key) PEM that anchors must be signed with (default: SATANG_ANCHOR_KEY_FILE, else SATANG_DATA_DIR/anchor-private.pem or anchor-public.pem)')
    .option('--anchor-file <file>', 'also check the anchors kept outside the database (SATANG_ANCHOR_FILE): each must be in the database, unchanged, and the log must match the latest')
    .option('--quiet', 'no progress on stderr')
    .addHelpText('after', VERIFY_HELP)
    .action(async (opts: VerifyOptions, cmd: Command) => {
      // `satang audit --kind order verify`: the trail of an order whose id is "verify".
      const parent = (cmd.parent?.opts() ?? {}) as TrailOptions
      if (parent.kind !== undefined || parent.merchantId !== undefined) {
        if (opts.saveHeads !== undefined || opts.against !== undefined || opts.expectDigest !== undefined || opts.quiet === true || opts.anchorKey !== undefined || opts.anchorFile !== undefined) {
          throw new UsageError('--kind/--merchant-id audit the order, refund or subscription named "verify"; the verify options do not apply to it')
        }
        await printVerifyTrail({ ...parent, ...(opts.json === true ? { json: true } : {}) })
        return
      }
      await verifyLog({ ...opts, ...(parent.json === true ? { json: true } : {}) }, setExitCode)
    })
}
