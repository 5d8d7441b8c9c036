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
import type { AnchorFailure, AnchorWriteOptions, AnchorWritten } from '../../application/ports/anchors.ts'
import type { Position } from '../../application/ports/event-store.ts'
import { isRetriablePgError } from '../../platform/postgres/errors.ts'
import { eventsTable, isValidSchemaName, SERVICE_LOCK, SERVICE_LOCKS } from '../../platform/postgres/names.ts'
import { inReadOnlySnapshot } from '../../platform/postgres/snapshot.ts'
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

const failure = (operation: string) => (cause: unknown): AnchorFailure => ({ _tag: 'AnchorFailure', operation, retriable: isRetriablePgError(cause), cause })

const assertSchema = (schema: string): void => {
  if (!isValidSchemaName(schema)) throw new Error(`invalid event store schema name ${JSON.stringify(schema)}`)
}

/** Rows per read of the heads an anchor digests: the process holds at most one page of each kind, whatever the number of streams. */
export const ANCHOR_PAGE_SIZE = 5_000

type HeadRow = { stream_name: string; stream_revision: string; hash: Buffer }

/** One row after another of a query, through a cursor of the open transaction: the query runs once, the process holds one page of `pageSize` rows. */
type RowCursor<R> = { readonly next: () => Promise<R | undefined> }

const rowCursor = async <R extends object>(client: PoolClient, name: string, text: string, values: ReadonlyArray<string>, pageSize: number): Promise<RowCursor<R>> => {
  await client.query({ text: `declare ${name} no scroll cursor for ${text}`, values: [...values] })
  let page: ReadonlyArray<R> = []
  let i = 0
  let done = false
  return {
    next: async () => {
      if (i >= page.length) {
        if (done) return undefined
        page = (await client.query<R>(`fetch forward ${String(pageSize)} from ${name}`)).rows
        i = 0
        if (page.length < pageSize) {
          done = true
          await client.query(`close ${name}`)
        }
      }
      const row = page[i]
      i += 1
      return row
    },
  }
}

/** Reads heads one after another from a query in stream-name byte order (see rowCursor). */
type HeadCursor = RowCursor<StreamHead>

const headCursor = async (client: PoolClient, name: string, text: string, values: ReadonlyArray<string>, pageSize: number): Promise<HeadCursor> => {
  const rows = await rowCursor<HeadRow>(client, name, text, values, pageSize)
  let last: string | undefined
  return {
    next: async () => {
      const row = await rows.next()
      if (row === undefined) return undefined
      // The fold and both digests need stream-name byte order; stream_name is collate "C" (bytes of the
      // UTF-8 database encoding). Anything else would give a wrong digest: refuse instead.
      if (last !== undefined && byteOrder(last, row.stream_name) >= 0) {
        throw new Error(`anchor heads out of stream-name byte order: ${JSON.stringify(row.stream_name)} after ${JSON.stringify(last)} (stream_name must be collate "C" in a UTF8 database)`)
      }
      last = row.stream_name
      return { stream: row.stream_name, revision: BigInt(row.stream_revision), hash: row.hash.toString('hex') }
    },
  }
}

const noHeads: HeadCursor = { next: () => Promise.resolve(undefined) }

const addHead = (d: ReturnType<typeof makeHeadsDigest>, h: StreamHead): void => d.add(h.stream, h.revision, Buffer.from(h.hash, 'hex'))

/**
 * Merges the heads that changed into the anchored ones (both in stream-name byte order), as they are
 * read: the heads digest of the result (every stream's head), the digest of the changes and their count.
 */
const foldDigests = async (anchored: HeadCursor, changed: HeadCursor): Promise<{ readonly headsDigest: string; readonly changesDigest: string; readonly changedStreams: bigint }> => {
  const heads = makeHeadsDigest()
  const changes = makeHeadsDigest()
  let changedStreams = 0n
  let h = await anchored.next()
  let c = await changed.next()
  while (h !== undefined || c !== undefined) {
    const order = h === undefined ? 1 : c === undefined ? -1 : byteOrder(h.stream, c.stream)
    if (order < 0 && h !== undefined) {
      addHead(heads, h)
      h = await anchored.next()
      continue
    }
    if (c === undefined) break
    addHead(heads, c)
    addHead(changes, c)
    changedStreams += 1n
    // A changed stream replaces its anchored head.
    if (order === 0) h = await anchored.next()
    c = await changed.next()
  }
  return { headsDigest: heads.hex(), changesDigest: changes.hex(), changedStreams }
}

export type WriteAnchorOptions = AnchorWriteOptions & {
  /** Heads per read (of the anchored heads and of the changed ones); default ANCHOR_PAGE_SIZE. */
  readonly pageSize?: number
}

const writtenOf = (anchor: Anchor): AnchorWritten<Anchor> => ({ anchor, seq: anchor.seq, position: anchor.position, events: anchor.events, streams: anchor.streams, headsDigest: anchor.headsDigest })

/**
 * Writes an anchor of the log as it is readable now, signed with `key`; none (right(null)) when the
 * log is empty or has not moved since the last anchor. With `options.covering`: none, and null, until the
 * log is readable up to that position; the last anchor (`existing`) when it covers it already. Anchor
 * writers queue on one advisory lock.
 *
 * Memory does not grow with the log: the heads that changed since the previous anchor are selected
 * in SQL and read through a cursor, page by page, in stream-name byte order, merged with the anchored
 * heads (read the same way) into the digests as they come; the changed heads are then recorded by
 * one INSERT … SELECT of the same query, without passing through the process.
 */
export const writeAnchor = (
  pool: Pool,
  schema: string,
  key: { readonly privateKey: KeyObject; readonly keyId: string },
  reason: string,
  now: () => Date = () => new Date(),
  options: WriteAnchorOptions = {},
): TE.TaskEither<AnchorFailure, AnchorWritten<Anchor> | null> =>
  TE.tryCatch(async () => {
    assertSchema(schema)
    const pageSize = options.pageSize ?? ANCHOR_PAGE_SIZE
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) throw new Error(`writeAnchor: pageSize must be a whole number of at least 1, got ${String(pageSize)}`)
    const t = eventsTable(schema)
    const client = await pool.connect()
    try {
      await client.query('begin')
      await client.query('select pg_advisory_xact_lock($1, $2)', [SERVICE_LOCKS, SERVICE_LOCK.anchors])
      const last = await client.query<AnchorRow>(`select ${ANCHOR_COLUMNS} from "${schema}".anchors a order by a.seq desc limit 1`)
      const prev = last.rows[0] === undefined ? null : anchorOf(last.rows[0])
      // Everything at or before the head is committed (below the horizon): the range is final.
      const { below } = await readHorizon(client, schema)
      const head = await client.query<{ tx_id: string; position: string }>(
        `select e.tx_id::text, e.position::text from ${t} e where e.tx_id < $1::xid8 order by e.tx_id desc, e.position desc limit 1`,
        [below],
      )
      const h = head.rows[0]
      const position = h === undefined ? null : (`${pad20(h.tx_id)}-${pad20(h.position)}` as Position)
      // Asked to cover a position: the last anchor may do so already; else none until it is readable.
      const covering = options.covering
      if (covering !== undefined) {
        if (prev?.position != null && prev.position >= covering) {
          await client.query('rollback')
          return { ...writtenOf(prev), existing: true }
        }
        if (position === null || position < covering) {
          await client.query('rollback')
          return null
        }
      }
      // Nothing readable yet, or nothing new since the last anchor: no anchor.
      if (position === null || (prev !== null && prev.position === position)) {
        await client.query('rollback')
        return null
      }
      const after = prev?.position == null ? null : splitPosition(prev.position)
      const upTo = splitPosition(position)
      const values: string[] = []
      const conditions: string[] = []
      if (after !== null) {
        values.push(...after)
        conditions.push('(e.tx_id, e.position) > ($1::xid8, $2::bigint)')
      }
      values.push(...upTo)
      conditions.push(`(e.tx_id, e.position) <= ($${String(values.length - 1)}::xid8, $${String(values.length)}::bigint)`)
      const where = conditions.join(' and ')
      // Each stream's last event in the range, in stream-name order (collate "C": byte order).
      const changedHeads = (revision: string): string =>
        `select distinct on (e.stream_name) e.stream_name, ${revision}, e.hash from ${t} e where ${where} order by e.stream_name, e.stream_revision desc`
      const counts = await client.query<{ events: string; streams: string }>({
        text: `select count(*)::text as events, count(*) filter (where e.stream_revision = 0)::text as streams from ${t} e where ${where}`,
        values,
      })
      const anchored =
        prev === null
          ? noHeads
          : await headCursor(
              client,
              'anchored_heads',
              `select distinct on (h.stream_name) h.stream_name, h.stream_revision::text, h.hash from "${schema}".anchor_heads h order by h.stream_name, h.seq desc`,
              [],
              pageSize,
            )
      const changed = await headCursor(client, 'changed_heads', changedHeads('e.stream_revision::text'), values, pageSize)
      const digests = await foldDigests(anchored, changed)
      const unsigned: Omit<Anchor, 'signature'> = {
        seq: (prev?.seq ?? 0n) + 1n,
        createdAt: now().toISOString(),
        reason,
        position,
        events: (prev?.events ?? 0n) + BigInt(counts.rows[0]?.events ?? '0'),
        streams: (prev?.streams ?? 0n) + BigInt(counts.rows[0]?.streams ?? '0'),
        headsDigest: digests.headsDigest,
        changesDigest: digests.changesDigest,
        changedStreams: digests.changedStreams,
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
          upTo[0],
          upTo[1],
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
      // The same heads, recorded by the database itself (the range is final: below the horizon).
      const recorded = await client.query({
        text: `insert into "${schema}".anchor_heads (seq, stream_name, stream_revision, hash)
               select $${String(values.length + 1)}::bigint, c.stream_name, c.stream_revision, c.hash from (${changedHeads('e.stream_revision')}) c`,
        values: [...values, anchor.seq.toString()],
      })
      if (BigInt(recorded.rowCount ?? 0) !== anchor.changedStreams) {
        throw new Error(`anchor #${anchor.seq.toString()}: ${String(recorded.rowCount)} changed heads recorded, but ${anchor.changedStreams.toString()} digested`)
      }
      await client.query('commit')
      return writtenOf(anchor)
    } catch (e) {
      await client.query('rollback').catch(() => undefined)
      throw e
    } finally {
      client.release()
    }
  }, failure('writeAnchor'))

/** Every anchor in `seq` order, and for each the heads it recorded (its changes). */
export const readAnchors = async (pool: Pool | PoolClient, schema: string): Promise<ReadonlyArray<Anchor>> => {
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
 * against the latest anchor's signed heads digest. Reads one snapshot; the recorded changes are read
 * in pages and digested as they come (only the folded heads, which it returns, stay in memory).
 */
export const checkAnchors = async (pool: Pool, schema: string, publicKey: KeyObject | null, options: { readonly pageSize?: number } = {}): Promise<AnchorCheck> => {
  assertSchema(schema)
  return inReadOnlySnapshot(pool, (client) => checkAnchorsIn(client, schema, publicKey, options.pageSize ?? ANCHOR_PAGE_SIZE))
}

const checkAnchorsIn = async (client: PoolClient, schema: string, publicKey: KeyObject | null, pageSize: number): Promise<AnchorCheck> => {
  const anchors = await readAnchors(client, schema)
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
  const rows = await rowCursor<{ seq: string; stream_name: string; stream_revision: string; hash: Buffer }>(
    client,
    'recorded_heads',
    `select h.seq::text, h.stream_name, h.stream_revision::text, h.hash from "${schema}".anchor_heads h order by h.seq, h.stream_name`,
    [],
    pageSize,
  )
  let row = await rows.next()
  for (const a of anchors) {
    const seq = a.seq.toString()
    // Heads recorded for anchors that are not there (deleted) are passed over, as before.
    while (row !== undefined && BigInt(row.seq) < a.seq) row = await rows.next()
    const changes = makeHeadsDigest()
    let count = 0n
    for (; row?.seq === seq; row = await rows.next()) {
      const head = { stream: row.stream_name, revision: BigInt(row.stream_revision), hash: row.hash.toString('hex') }
      addHead(changes, head)
      count += 1n
      byStream.set(head.stream, { ...head, seq: a.seq })
    }
    if (changes.hex() !== a.changesDigest || count !== a.changedStreams) {
      problems.push({ seq: a.seq, reason: `anchor #${a.seq.toString()} (${a.createdAt}): the stream heads it recorded were altered (their digest is not the signed one)` })
    }
  }
  const heads = [...byStream.values()].sort((x, y) => byteOrder(x.stream, y.stream))
  const latest = anchors.at(-1)
  if (latest !== undefined) {
    const all = makeHeadsDigest()
    for (const h of heads) addHead(all, h)
    if (all.hex() !== latest.headsDigest) {
      problems.push({ seq: latest.seq, reason: `anchor #${latest.seq.toString()} (${latest.createdAt}): the recorded stream heads do not fold to its signed heads digest: heads were removed or changed` })
    }
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
