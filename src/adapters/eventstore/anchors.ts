/**
 * Anchors of the PostgreSQL event log: signed statements "at global position P the log held E events
 * in S streams, and every stream's head (last revision and hash at or before P) digests to D".
 *
 * The hash chain (chain.ts) shows an event changed or removed in the middle of a stream; it cannot
 * show a stream's last events, or a whole stream, removed by someone who can bypass the triggers.
 * An anchor can: it names every head as of P (the heads that changed since the previous anchor are
 * stored in `anchor_heads`; folded, they give every head, and their digest must be D), and it is signed
 * with an Ed25519 key that the database does not hold, so nobody with only the database can forge a
 * new anchor after rewriting the log. Each anchor signs the previous anchor's signature too, so removing
 * an anchor in the middle breaks the next one. Optionally each anchor is also appended to a file
 * outside the database (`SATANG_ANCHOR_FILE`), which survives the anchors table itself.
 *
 * Signed message (UTF-8, `\n` after each line), see `anchorMessage`:
 *   satang-anchor-v1 / seq= / created_at= / reason= / position= / events= / streams= /
 *   heads_digest= / changes_digest= / changed_streams= / prev_signature= / key_id=
 */
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Pool, PoolClient } from 'pg'
import type { AnchorFailure, AnchorWritten } from '../../application/ports/anchors.ts'
import type { Position } from '../../application/ports/event-store.ts'
import { isRetriablePgError } from '../../platform/postgres/errors.ts'
import { isValidSchemaName, SERVICE_LOCK, SERVICE_LOCKS } from '../../platform/postgres/names.ts'
import { makeHeadsDigest, type StreamHead } from './chain.ts'
import { readHorizon } from './postgres-horizon.ts'
import { pad20 } from './envelope.ts'

export const ANCHOR_FORMAT = 'satang-anchor-v1'

/** The first 16 hex digits of sha256 over the public key's SPKI DER: which key signed an anchor. */
export const anchorKeyIdOf = (key: KeyObject): string => {
  const pub = key.type === 'private' ? createPublicKey(key) : key
  return createHash('sha256').update(pub.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16)
}

/** One anchor as stored (and as appended to the anchor file, in JSON). */
export type Anchor = {
  readonly seq: bigint
  readonly createdAt: string
  readonly reason: string
  /** The store's position (`<tx_id>-<position>`, 20 digits each), null for an empty log. */
  readonly position: Position | null
  readonly events: bigint
  readonly streams: bigint
  readonly headsDigest: string
  readonly changesDigest: string
  readonly changedStreams: bigint
  readonly prevSignature: string | null
  readonly keyId: string
  readonly signature: string
}

export const anchorMessage = (a: Omit<Anchor, 'signature'>): Buffer =>
  Buffer.from(
    [
      ANCHOR_FORMAT,
      `seq=${a.seq.toString()}`,
      `created_at=${a.createdAt}`,
      `reason=${a.reason}`,
      `position=${a.position ?? ''}`,
      `events=${a.events.toString()}`,
      `streams=${a.streams.toString()}`,
      `heads_digest=${a.headsDigest}`,
      `changes_digest=${a.changesDigest}`,
      `changed_streams=${a.changedStreams.toString()}`,
      `prev_signature=${a.prevSignature ?? ''}`,
      `key_id=${a.keyId}`,
      '',
    ].join('\n'),
    'utf8',
  )

/** Whether `a` carries a valid signature by `publicKey`. */
export const anchorSignatureValid = (a: Anchor, publicKey: KeyObject): boolean => {
  try {
    return verify(null, anchorMessage(a), publicKey, Buffer.from(a.signature, 'hex'))
  } catch {
    // a malformed key or signature is an invalid signature, nothing more
    return false
  }
}

const splitPosition = (p: Position): readonly [string, string] => {
  const [tx, pos] = p.split('-')
  return [BigInt(tx ?? '0').toString(), BigInt(pos ?? '0').toString()]
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))

/** Merges `changes` into `heads` (both in stream-name byte order): the heads after the changes. */
const fold = (heads: ReadonlyArray<StreamHead>, changes: ReadonlyArray<StreamHead>): ReadonlyArray<StreamHead> => {
  const out: StreamHead[] = []
  let i = 0
  let j = 0
  while (i < heads.length || j < changes.length) {
    const h = heads[i]
    const c = changes[j]
    if (c === undefined || (h !== undefined && byteOrder(h.stream, c.stream) < 0)) {
      if (h !== undefined) out.push(h)
      i += 1
    } else if (h === undefined || byteOrder(h.stream, c.stream) > 0) {
      out.push(c)
      j += 1
    } else {
      out.push(c)
      i += 1
      j += 1
    }
  }
  return out
}

const digestOf = (heads: ReadonlyArray<StreamHead>): string => {
  const d = makeHeadsDigest()
  for (const h of heads) d.add(h.stream, h.revision, Buffer.from(h.hash, 'hex'))
  return d.hex()
}

type AnchorRow = {
  seq: string
  created_at: Date
  reason: string
  tx_id: string | null
  position: string | null
  events: string
  streams: string
  heads_digest: Buffer
  changes_digest: Buffer
  changed_streams: string
  prev_signature: Buffer | null
  key_id: string
  signature: Buffer
}

const anchorOf = (r: AnchorRow): Anchor => ({
  seq: BigInt(r.seq),
  createdAt: r.created_at.toISOString(),
  reason: r.reason,
  position: r.tx_id === null || r.position === null ? null : (`${pad20(r.tx_id)}-${pad20(r.position)}` as Position),
  events: BigInt(r.events),
  streams: BigInt(r.streams),
  headsDigest: r.heads_digest.toString('hex'),
  changesDigest: r.changes_digest.toString('hex'),
  changedStreams: BigInt(r.changed_streams),
  prevSignature: r.prev_signature === null ? null : r.prev_signature.toString('hex'),
  keyId: r.key_id,
  signature: r.signature.toString('hex'),
})

// Cast to text for exact bigints: such an output column takes the name of its table column, and a
// bare name in ORDER BY means the output column (text: '10' before '9'). Every query below therefore
// orders by the table's columns through an alias (`a.seq`, `e.stream_revision`).
const ANCHOR_COLUMNS = `seq::text, created_at, reason, tx_id::text, position::text, events::text, streams::text, heads_digest, changes_digest, changed_streams::text, prev_signature, key_id, signature`

const headsOf = (rows: ReadonlyArray<{ stream_name: string; stream_revision: string; hash: Buffer }>): ReadonlyArray<StreamHead> =>
  rows.map((r) => ({ stream: r.stream_name, revision: BigInt(r.stream_revision), hash: r.hash.toString('hex') }))

const failure = (operation: string) => (cause: unknown): AnchorFailure => ({ _tag: 'AnchorFailure', operation, retriable: isRetriablePgError(cause), cause })

const assertSchema = (schema: string): void => {
  if (!isValidSchemaName(schema)) throw new Error(`invalid event store schema name ${JSON.stringify(schema)}`)
}

/** The latest head of every stream recorded by the anchors up to `seq` (all when omitted), in stream-name order. */
const anchoredHeads = async (client: Pool | PoolClient, schema: string, seq?: bigint): Promise<ReadonlyArray<StreamHead>> => {
  const r = await client.query<{ stream_name: string; stream_revision: string; hash: Buffer }>({
    text: `select distinct on (stream_name) stream_name, stream_revision::text, hash from "${schema}".anchor_heads
            ${seq === undefined ? '' : 'where seq <= $1'} order by stream_name, seq desc`,
    values: seq === undefined ? [] : [seq.toString()],
  })
  return headsOf(r.rows)
}

/**
 * Writes an anchor of the log as it is readable now, signed with `key`; none (right(null)) when the
 * log is empty or has not moved since the last anchor. Anchor writers queue on one advisory lock.
 */
export const writeAnchor = (pool: Pool, schema: string, key: { readonly privateKey: KeyObject; readonly keyId: string }, reason: string, now: () => Date = () => new Date()): TE.TaskEither<AnchorFailure, AnchorWritten<Anchor> | null> =>
  TE.tryCatch(async () => {
    assertSchema(schema)
    const t = `"${schema}".events`
    const client = await pool.connect()
    try {
      await client.query('begin')
      await client.query('select pg_advisory_xact_lock($1, $2)', [SERVICE_LOCKS, SERVICE_LOCK.anchors])
      const last = await client.query<AnchorRow>(`select ${ANCHOR_COLUMNS} from "${schema}".anchors a order by a.seq desc limit 1`)
      const prev = last.rows[0] === undefined ? null : anchorOf(last.rows[0])
      // Everything at or before the head is committed (below the horizon): the range is final.
      const { below } = await readHorizon(client)
      const head = await client.query<{ tx_id: string; position: string }>(
        `select e.tx_id::text, e.position::text from ${t} e where e.tx_id < $1::xid8 order by e.tx_id desc, e.position desc limit 1`,
        [below],
      )
      const h = head.rows[0]
      const position = h === undefined ? null : (`${pad20(h.tx_id)}-${pad20(h.position)}` as Position)
      // Nothing readable yet, or nothing new since the last anchor: no anchor.
      if (position === null || (prev !== null && prev.position === position)) {
        await client.query('rollback')
        return null
      }
      const after = prev?.position == null ? null : splitPosition(prev.position)
      const upTo = position === null ? null : splitPosition(position)
      const values: string[] = []
      const conditions: string[] = []
      if (after !== null) {
        values.push(...after)
        conditions.push('(tx_id, position) > ($1::xid8, $2::bigint)')
      }
      if (upTo === null) conditions.push('false')
      else {
        values.push(...upTo)
        conditions.push(`(tx_id, position) <= ($${String(values.length - 1)}::xid8, $${String(values.length)}::bigint)`)
      }
      const where = conditions.join(' and ')
      const changedRows = await client.query<{ stream_name: string; stream_revision: string; hash: Buffer }>({
        text: `select distinct on (e.stream_name) e.stream_name, e.stream_revision::text, e.hash from ${t} e where ${where} order by e.stream_name, e.stream_revision desc`,
        values,
      })
      const counts = await client.query<{ events: string; streams: string }>({
        text: `select count(*)::text as events, count(*) filter (where stream_revision = 0)::text as streams from ${t} where ${where}`,
        values,
      })
      const changes = headsOf(changedRows.rows)
      const heads = fold(prev === null ? [] : await anchoredHeads(client, schema), changes)
      const unsigned: Omit<Anchor, 'signature'> = {
        seq: (prev?.seq ?? 0n) + 1n,
        createdAt: now().toISOString(),
        reason,
        position,
        events: (prev?.events ?? 0n) + BigInt(counts.rows[0]?.events ?? '0'),
        streams: (prev?.streams ?? 0n) + BigInt(counts.rows[0]?.streams ?? '0'),
        headsDigest: digestOf(heads),
        changesDigest: digestOf(changes),
        changedStreams: BigInt(changes.length),
        prevSignature: prev?.signature ?? null,
        keyId: key.keyId,
      }
      const anchor: Anchor = { ...unsigned, signature: sign(null, anchorMessage(unsigned), key.privateKey).toString('hex') }
      await client.query({
        text: `insert into "${schema}".anchors (seq, created_at, reason, tx_id, position, events, streams, heads_digest, changes_digest, changed_streams, prev_signature, key_id, signature)
               values ($1, $2, $3, $4::xid8, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        values: [
          anchor.seq.toString(),
          anchor.createdAt,
          anchor.reason,
          upTo?.[0] ?? null,
          upTo?.[1] ?? null,
          anchor.events.toString(),
          anchor.streams.toString(),
          Buffer.from(anchor.headsDigest, 'hex'),
          Buffer.from(anchor.changesDigest, 'hex'),
          anchor.changedStreams.toString(),
          anchor.prevSignature === null ? null : Buffer.from(anchor.prevSignature, 'hex'),
          anchor.keyId,
          Buffer.from(anchor.signature, 'hex'),
        ],
      })
      if (changes.length > 0) {
        await client.query({
          text: `insert into "${schema}".anchor_heads (seq, stream_name, stream_revision, hash)
                 select $1, s, r, decode(h, 'hex') from unnest($2::text[], $3::bigint[], $4::text[]) as u(s, r, h)`,
          values: [anchor.seq.toString(), changes.map((c) => c.stream), changes.map((c) => c.revision.toString()), changes.map((c) => c.hash)],
        })
      }
      await client.query('commit')
      return { anchor, seq: anchor.seq, position: anchor.position, events: anchor.events, streams: anchor.streams, headsDigest: anchor.headsDigest }
    } catch (e) {
      await client.query('rollback').catch(() => undefined)
      throw e
    } finally {
      client.release()
    }
  }, failure('writeAnchor'))

/** Every anchor in `seq` order, and for each the heads it recorded (its changes). */
export const readAnchors = async (pool: Pool, schema: string): Promise<ReadonlyArray<Anchor>> => {
  assertSchema(schema)
  const r = await pool.query<AnchorRow>(`select ${ANCHOR_COLUMNS} from "${schema}".anchors a order by a.seq`)
  return r.rows.map(anchorOf)
}

/** A problem with the anchors themselves (not with the log they describe). */
export type AnchorProblem = { readonly seq: bigint; readonly reason: string }

export type AnchorCheck = {
  readonly anchors: ReadonlyArray<Anchor>
  readonly problems: ReadonlyArray<AnchorProblem>
  /** Every head as of the latest anchor, each with the anchor that recorded it (when its changes verified). */
  readonly heads: ReadonlyArray<StreamHead & { readonly seq: bigint }>
}

/**
 * Checks the anchors: every signature by `publicKey` (when given), the chain of signatures and
 * sequence numbers, each anchor's recorded changes against its signed digest, and the folded heads
 * against the latest anchor's signed heads digest.
 */
export const checkAnchors = async (pool: Pool, schema: string, publicKey: KeyObject | null): Promise<AnchorCheck> => {
  const anchors = await readAnchors(pool, schema)
  const problems: AnchorProblem[] = []
  const keyId = publicKey === null ? null : anchorKeyIdOf(publicKey)
  let prev: Anchor | undefined
  for (const a of anchors) {
    if (a.seq !== (prev?.seq ?? 0n) + 1n) problems.push({ seq: a.seq, reason: `anchor #${a.seq.toString()} follows anchor #${(prev?.seq ?? 0n).toString()}: anchors ${((prev?.seq ?? 0n) + 1n).toString()} to ${(a.seq - 1n).toString()} were deleted` })
    else if ((a.prevSignature ?? null) !== (prev?.signature ?? null)) problems.push({ seq: a.seq, reason: `anchor #${a.seq.toString()} does not sign the signature of anchor #${(prev?.seq ?? 0n).toString()}: an anchor was replaced` })
    if (publicKey !== null && keyId !== null) {
      if (a.keyId !== keyId) problems.push({ seq: a.seq, reason: `anchor #${a.seq.toString()} is signed by key ${a.keyId}, not by the anchor key ${keyId}` })
      else if (!anchorSignatureValid(a, publicKey)) problems.push({ seq: a.seq, reason: `anchor #${a.seq.toString()} (${a.createdAt}): its signature does not verify: its fields were altered` })
    }
    prev = a
  }
  const byStream = new Map<string, StreamHead & { readonly seq: bigint }>()
  const r = await pool.query<{ seq: string; stream_name: string; stream_revision: string; hash: Buffer }>(
    `select h.seq::text, h.stream_name, h.stream_revision::text, h.hash from "${schema}".anchor_heads h order by h.seq, h.stream_name`,
  )
  const changesOf = new Map<string, StreamHead[]>()
  for (const row of r.rows) {
    const list = changesOf.get(row.seq) ?? []
    list.push({ stream: row.stream_name, revision: BigInt(row.stream_revision), hash: row.hash.toString('hex') })
    changesOf.set(row.seq, list)
  }
  for (const a of anchors) {
    const changes = changesOf.get(a.seq.toString()) ?? []
    if (digestOf(changes) !== a.changesDigest || BigInt(changes.length) !== a.changedStreams) {
      problems.push({ seq: a.seq, reason: `anchor #${a.seq.toString()} (${a.createdAt}): the stream heads it recorded were altered (their digest is not the signed one)` })
    }
    for (const c of changes) byStream.set(c.stream, { ...c, seq: a.seq })
  }
  const heads = [...byStream.values()].sort((x, y) => byteOrder(x.stream, y.stream))
  const latest = anchors.at(-1)
  if (latest !== undefined && digestOf(heads) !== latest.headsDigest) {
    problems.push({ seq: latest.seq, reason: `anchor #${latest.seq.toString()} (${latest.createdAt}): the recorded stream heads do not fold to its signed heads digest: heads were removed or changed` })
  }
  return { anchors, problems, heads }
}

export const anchorJson = (a: Anchor): Record<string, string | null> => ({
  format: ANCHOR_FORMAT,
  seq: a.seq.toString(),
  created_at: a.createdAt,
  reason: a.reason,
  position: a.position,
  events: a.events.toString(),
  streams: a.streams.toString(),
  heads_digest: a.headsDigest,
  changes_digest: a.changesDigest,
  changed_streams: a.changedStreams.toString(),
  prev_signature: a.prevSignature,
  key_id: a.keyId,
  signature: a.signature,
})
