/**
 * Tamper evidence of the PostgreSQL event log: the verifier of the hash chain.
 *
 * Migration 0002 (src/adapters/postgres/migrations/eventstore.ts) gives every event a `hash`,
 * computed by a BEFORE INSERT trigger and chained to the previous event of its stream, and keeps that
 * previous hash in `prev_hash`:
 *
 *   hash = sha256(prev_hash || field(event_id) || field(stream_name) || field(stream_revision)
 *                 || field(type) || field(schema_version) || field(data) || field(metadata)
 *                 || field(recorded_at) || field(position) || field(tx_id))
 *
 * `prev_hash` is the hash of revision - 1 of the stream, no bytes for revision 0; `field(v)` is the
 * UTF-8 bytes of v's PostgreSQL text form (`uuid::text`, `bigint::text`, `jsonb::text`, recorded_at as
 * whole epoch microseconds, `xid8::text`) preceded by their length as a 4-byte big-endian integer.
 *
 * `verifyEventChain` reads the whole log stream by stream, in revision order, recomputes every hash
 * here (node:crypto, not the database's function) from the stored columns, and reports the first
 * break. What it can tell:
 *  - `hash_mismatch`: an event's columns no longer give its stored hash: its content (or its hash) was
 *    changed after it was appended;
 *  - `missing_revision`: a stream skips revisions (or does not start at 0): events were deleted;
 *  - `link_mismatch`: an event is consistent in itself but links to a different previous event than
 *    the one stored: the previous event was rewritten together with its hash (or replaced);
 *  - `head_mismatch` / `head_missing`: checked against stream heads kept outside the database
 *    (`keptHeads`): a stream's event at a kept revision has another hash, or the stream ends before
 *    the kept revision (its last events, or the whole stream, were deleted).
 *
 * What it cannot tell on its own: someone who can bypass the triggers (a superuser: `alter table …
 * disable trigger`, `session_replication_role = replica`) and rewrites a stream's chain from the
 * altered event to the stream's end, or deletes a stream's last events or a whole stream, leaves a
 * log that is consistent in itself. Only stream heads (or their digest) kept outside the database
 * reveal that; `headsDigest` and `heads` are for keeping.
 */
import { createHash, type Hash } from 'node:crypto'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Pool, PoolClient } from 'pg'
import type { EventStoreFailure, Position } from '../../application/ports/event-store.ts'
import { isRetriablePgError } from '../../platform/postgres/errors.ts'
import { eventsTable, isValidSchemaName } from '../../platform/postgres/names.ts'
import { inReadOnlySnapshot } from '../../platform/postgres/snapshot.ts'
import { pad20 } from './envelope.ts'

/** The columns of one stored event, as their PostgreSQL text forms (see the module comment). */
export type ChainedEventFields = {
  readonly eventId: string
  readonly streamName: string
  readonly streamRevision: string
  readonly type: string
  readonly schemaVersion: string
  readonly data: string
  readonly metadata: string
  /** Epoch microseconds, as decimal text. */
  readonly recordedAtMicros: string
  readonly position: string
  readonly txId: string
}

const field = (h: Hash, value: string): void => {
  const length = Buffer.allocUnsafe(4)
  length.writeUInt32BE(Buffer.byteLength(value, 'utf8'))
  h.update(length)
  h.update(value, 'utf8')
}

/** The hash of an event chained to `prev` (the previous event's hash, `null` for revision 0). */
export const chainHashOf = (prev: Uint8Array | null, f: ChainedEventFields): Buffer => {
  const h = createHash('sha256')
  if (prev !== null) h.update(prev)
  field(h, f.eventId)
  field(h, f.streamName)
  field(h, f.streamRevision)
  field(h, f.type)
  field(h, f.schemaVersion)
  field(h, f.data)
  field(h, f.metadata)
  field(h, f.recordedAtMicros)
  field(h, f.position)
  field(h, f.txId)
  return h.digest()
}

export type ChainBreakKind = 'hash_mismatch' | 'missing_revision' | 'link_mismatch' | 'head_mismatch' | 'head_missing'

/** The first place where the log is not what was appended. */
export type ChainBreak = {
  readonly kind: ChainBreakKind
  readonly stream: string
  /** The revision of the event where the break shows (for `head_missing`: the kept head's revision). */
  readonly revision: bigint
  /** That event's place in the global log (the store's opaque position) and id; null when no event is there. */
  readonly position: Position | null
  readonly eventId: string | null
  /** For `missing_revision` and `head_missing`: the revisions that are not there. */
  readonly missing?: { readonly from: bigint; readonly to: bigint }
  /** One line for an operator: what is wrong, where. */
  readonly reason: string
}

/** The last event of a stream: its revision and hash (hex). Kept outside the database, these reveal a rewritten chain. */
export type StreamHead = { readonly stream: string; readonly revision: bigint; readonly hash: string }

export type ChainProgress = {
  /** Events checked so far. */
  readonly events: number
  /** Streams started so far. */
  readonly streams: number
  /** The stream being checked. */
  readonly stream: string
}

export type VerifyOptions = {
  /** Called after each page of events. */
  readonly onProgress?: (p: ChainProgress) => void
  /** Events per read. Default 5,000. */
  readonly pageSize?: number
  /** Stream heads kept from an earlier run: each must still be there, with the same hash. */
  readonly keptHeads?: ReadonlyArray<StreamHead>
  /** Return every stream's head (to keep for a later `keptHeads`). Default false. */
  readonly collectHeads?: boolean
  /** Also compute the heads digest of the log as it stood at this position (an anchor's): each stream's last event at or before it. */
  readonly digestAt?: Position
}

export type ChainVerification = {
  /** True when every event verified (and every kept head matched). */
  readonly intact: boolean
  readonly firstBreak: ChainBreak | null
  /** Streams and events checked (up to the break, when there is one). */
  readonly streams: number
  readonly events: number
  /**
   * sha256 (hex) over every stream's head, in stream-name order: for each stream the length-prefixed
   * stream name, the length-prefixed revision text and the 32 hash bytes (`field()` as above). Null
   * when the chain is broken. Equal digests mean equal logs; keep it with the heads.
   */
  readonly headsDigest: string | null
  /** With `collectHeads` (and an intact chain): every stream's head, in stream-name order. */
  readonly heads?: ReadonlyArray<StreamHead>
  /** With `digestAt` (and an intact chain): the heads digest of the log as of that position, with its stream and event counts. */
  readonly atPosition?: { readonly position: Position; readonly headsDigest: string; readonly streams: number; readonly events: number }
}

// Stream by stream, in revision order, on the (stream_name, stream_revision) unique index.
const pageSql = (t: string, first: boolean): string => `
  select e.stream_name, e.stream_revision::text, e.event_id::text, e.type, e.schema_version::text, e.data::text, e.metadata::text,
         ((extract(epoch from e.recorded_at) * 1000000)::bigint)::text, e.position::text, e.tx_id::text, e.prev_hash, e.hash
    from ${t} e
   ${first ? '' : 'where (e.stream_name, e.stream_revision) > ($2::text collate "C", $3::bigint)'}
   order by e.stream_name, e.stream_revision
   limit $1`

type Row = readonly [string, string, string, string, string, string, string, string, string, string, Buffer | null, Buffer | null]

const asText = (v: unknown): string => {
  if (typeof v !== 'string') throw new Error(`expected a text column, got ${typeof v}`)
  return v
}
const asBytes = (v: unknown): Buffer | null => {
  if (v === null) return null
  if (!Buffer.isBuffer(v)) throw new Error(`expected a bytea column, got ${typeof v}`)
  return v
}
const toRow = (r: ReadonlyArray<unknown>): Row => [
  asText(r[0]),
  asText(r[1]),
  asText(r[2]),
  asText(r[3]),
  asText(r[4]),
  asText(r[5]),
  asText(r[6]),
  asText(r[7]),
  asText(r[8]),
  asText(r[9]),
  asBytes(r[10]),
  asBytes(r[11]),
]

const positionOf = (row: Row): Position => `${pad20(row[9])}-${pad20(row[8])}` as Position

const revisions = (from: bigint, to: bigint): string => (from === to ? `revision ${String(from)}` : `revisions ${String(from)} to ${String(to)}`)

/** The digest of stream heads (see `ChainVerification.headsDigest`), built as the walk goes. */
export const makeHeadsDigest = () => {
  const h = createHash('sha256')
  return {
    add: (stream: string, revision: bigint, hash: Uint8Array): void => {
      field(h, stream)
      field(h, revision.toString())
      h.update(hash)
    },
    hex: (): string => h.digest('hex'),
  }
}

const failure = (cause: unknown): EventStoreFailure => ({ _tag: 'EventStoreFailure', operation: 'verifyEventChain', retriable: isRetriablePgError(cause), cause })

/**
 * Walks the whole event log in `schema` (stream by stream, revision order, keyset pages), recomputes
 * every event's hash and checks every link; stops at the first break. Reads one consistent snapshot
 * (a read-only repeatable-read transaction, which takes no transaction id and so holds back no
 * subscriber). The result's digest is that of the snapshot.
 */
export const verifyEventChain = (pool: Pool, schema: string, options: VerifyOptions = {}): TE.TaskEither<EventStoreFailure, ChainVerification> =>
  TE.tryCatch(async () => {
    if (!isValidSchemaName(schema)) throw new Error(`invalid event store schema name ${JSON.stringify(schema)}`)
    return inReadOnlySnapshot(pool, (client) => walk(client, schema, options))
  }, failure)

const assertChained = async (client: PoolClient, schema: string): Promise<void> => {
  const r = await client.query<{ n: string }>(
    `select count(*)::text as n from information_schema.columns where table_schema = $1 and table_name = 'events' and column_name in ('hash', 'prev_hash')`,
    [schema],
  )
  if (r.rows[0]?.n !== '2') throw new Error(`${schema}.events has no hash chain (missing table or migration 0002_tamper_evidence): run satang migrate`)
}

const walk = async (client: PoolClient, schema: string, options: VerifyOptions): Promise<ChainVerification> => {
  await assertChained(client, schema)
  const t = eventsTable(schema)
  const pageSize = options.pageSize ?? 5_000
  const firstSql = pageSql(t, true)
  const nextSql = pageSql(t, false)
  const fetch = async (after: Row | undefined): Promise<ReadonlyArray<Row>> => {
    const r = await client.query<unknown[]>({
      text: after === undefined ? firstSql : nextSql,
      values: after === undefined ? [pageSize] : [pageSize, after[0], after[1]],
      rowMode: 'array',
    })
    return r.rows.map(toRow)
  }

  const kept = new Map<string, StreamHead>()
  for (const head of options.keptHeads ?? []) kept.set(head.stream, head)
  const keptStreamsSeen = new Set<string>()
  const heads: StreamHead[] = []
  const digest = makeHeadsDigest()
  const digestAt = options.digestAt
  const at = makeHeadsDigest()
  let atHead: { readonly revision: bigint; readonly hash: Buffer } | undefined
  let atStreams = 0
  let atEvents = 0

  let events = 0
  let streams = 0
  let prev: { readonly stream: string; readonly revision: bigint; readonly hash: Buffer; readonly eventId: string } | undefined

  const result = (firstBreak: ChainBreak | null): ChainVerification => ({
    intact: firstBreak === null,
    firstBreak,
    streams,
    events,
    headsDigest: firstBreak === null ? digest.hex() : null,
    ...(options.collectHeads === true && firstBreak === null ? { heads } : {}),
    ...(digestAt !== undefined && firstBreak === null ? { atPosition: { position: digestAt, headsDigest: at.hex(), streams: atStreams, events: atEvents } } : {}),
  })

  /** A stream ended at `last`: its head is recorded, and a kept head beyond it is a break. */
  const endStream = (last: NonNullable<typeof prev>): ChainBreak | null => {
    digest.add(last.stream, last.revision, last.hash)
    if (atHead !== undefined) {
      at.add(last.stream, atHead.revision, atHead.hash)
      atStreams += 1
      atHead = undefined
    }
    if (options.collectHeads === true) heads.push({ stream: last.stream, revision: last.revision, hash: last.hash.toString('hex') })
    const k = kept.get(last.stream)
    if (k !== undefined && k.revision > last.revision) {
      return {
        kind: 'head_missing',
        stream: last.stream,
        revision: k.revision,
        position: null,
        eventId: null,
        missing: { from: last.revision + 1n, to: k.revision },
        reason: `stream ${last.stream}: ${revisions(last.revision + 1n, k.revision)} missing: the kept head is revision ${String(k.revision)} but the stream ends at revision ${String(last.revision)} (its last events were deleted)`,
      }
    }
    return null
  }

  const checkPage = (page: ReadonlyArray<Row>): ChainBreak | null => {
    for (const row of page) {
      if (prev === undefined || prev.stream !== row[0]) {
        if (prev !== undefined) {
          const ended = endStream(prev)
          if (ended !== null) return ended
        }
        streams += 1
        if (kept.has(row[0])) keptStreamsSeen.add(row[0])
      }
      const broken = check(row)
      if (broken !== null) return broken
      events += 1
      prev = { stream: row[0], revision: BigInt(row[1]), hash: row[11] ?? Buffer.alloc(0), eventId: row[2] }
      if (digestAt !== undefined && positionOf(row) <= digestAt) {
        atHead = { revision: prev.revision, hash: prev.hash }
        atEvents += 1
      }
    }
    return null
  }

  const check = (row: Row): ChainBreak | null => {
    const [stream, revisionText, eventId] = row
    const revision = BigInt(revisionText)
    const storedPrev = row[10]
    const stored = row[11]
    const where = `stream ${stream} revision ${revisionText} (position ${positionOf(row)}, event ${eventId})`
    const at = { stream, revision, position: positionOf(row), eventId }
    const expected = prev !== undefined && prev.stream === stream ? prev.revision + 1n : 0n
    if (revision !== expected) {
      const from = expected
      const to = revision - 1n
      return {
        kind: 'missing_revision',
        ...at,
        missing: { from, to },
        reason: `${where}: ${revisions(from, to)} of the stream ${from === to ? 'is' : 'are'} missing (deleted)`,
      }
    }
    const link = revision === 0n ? null : (prev?.hash ?? null)
    if (link === null ? storedPrev !== null : storedPrev === null || !storedPrev.equals(link)) {
      return {
        kind: 'link_mismatch',
        ...at,
        reason:
          link === null
            ? `${where}: the first event of the stream links to a previous event: it was moved or renumbered`
            : `${where}: chain link mismatch: it was appended after a different revision ${String(revision - 1n)} than the stored one (event ${prev?.eventId ?? '?'}), which was rewritten with its hash or replaced`,
      }
    }
    const recomputed = chainHashOf(storedPrev, {
      eventId,
      streamName: stream,
      streamRevision: revisionText,
      type: row[3],
      schemaVersion: row[4],
      data: row[5],
      metadata: row[6],
      recordedAtMicros: row[7],
      position: row[8],
      txId: row[9],
    })
    if (stored === null || !stored.equals(recomputed)) {
      return {
        kind: 'hash_mismatch',
        ...at,
        reason: `${where}: hash mismatch: the event's stored columns (data, metadata, type, times or ids) no longer give the hash it was appended with: its content was altered`,
      }
    }
    const k = kept.get(stream)
    if (k !== undefined && k.revision === revision) {
      if (k.hash !== stored.toString('hex')) {
        return {
          kind: 'head_mismatch',
          ...at,
          reason: `${where}: the hash differs from the kept head: the stream was rewritten from this revision or earlier, hashes included`,
        }
      }
    }
    return null
  }

  let page = await fetch(undefined)
  while (page.length > 0) {
    // Ask for the next page before checking this one: the database works while we hash.
    const next = page.length < pageSize ? Promise.resolve<ReadonlyArray<Row>>([]) : fetch(page.at(-1))
    const broken = checkPage(page)
    if (broken !== null) {
      // Never leave the prefetch unobserved: its failure after a break must not go unhandled.
      await next.catch(() => undefined)
      return result(broken)
    }
    options.onProgress?.({ events, streams, stream: prev?.stream ?? '' })
    page = await next
  }
  if (prev !== undefined) {
    const ended = endStream(prev)
    if (ended !== null) return result(ended)
  }
  const gone = [...kept.values()].find((k) => !keptStreamsSeen.has(k.stream))
  if (gone !== undefined) {
    return result({
      kind: 'head_missing',
      stream: gone.stream,
      revision: gone.revision,
      position: null,
      eventId: null,
      missing: { from: 0n, to: gone.revision },
      reason: `stream ${gone.stream}: the whole stream is missing; the kept head is its revision ${String(gone.revision)} (the stream was deleted)`,
    })
  }
  return result(null)
}
