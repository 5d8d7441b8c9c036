/**
 * The PostgreSQL event store (the embedded default).
 *
 * Table `<schema>.events`, one row per event: `tx_id` (the writing transaction's id,
 * `pg_current_xact_id()`), `position` (an identity), stream name and revision, event id, type,
 * schema version, `data` and `metadata` (jsonb), `recorded_at`. Unique: (tx_id, position),
 * event_id, (stream_name, stream_revision).
 *
 * Why the global order is (tx_id, position) and not position alone: a position is taken when a
 * row is inserted, but becomes visible only when its transaction commits, and concurrent writers
 * commit out of position order. A reader that asks for "position > last seen" can pass over a
 * smaller position that commits a moment later, and never come back for it. Instead:
 *  - each row stores the id of the transaction that wrote it;
 *  - a reader only reads rows whose transaction id is below the horizon, taken in a statement of
 *    its own just before (src/adapters/eventstore/postgres-horizon.ts): the oldest append
 *    transaction of satang's still running, or the cluster's next transaction id. Every append below
 *    it has finished, and every append that starts later gets a larger id, so the set of rows below
 *    the horizon is final: no row can appear there after the read. Other transactions of the
 *    cluster never hold it back;
 *  - rows are read in (tx_id, position) order and the cursor (the checkpoint, the opaque position
 *    string) is that same pair, compared as a row value, matching the primary key index.
 * So a reader never skips an event. The price: an event becomes readable only once every older
 * append has ended (see docs/operations.md "Event store operations").
 *
 * Each stream's events keep their order in the global log: an append reads the stream's revision
 * and inserts the next ones in one statement, in its own transaction. Its snapshot includes the
 * stream's previous event, so that event's transaction had committed before the statement began,
 * and this transaction gets its id (at its first write, inside the statement) after that: a larger
 * one. Two appends racing for the same revision meet on the unique (stream_name, stream_revision)
 * index; the loser gets a unique violation: a conflict for `no_stream` and exact revisions. Appends
 * under `any` and `stream_exists`, which would only retry, instead queue on a per-stream advisory
 * lock taken before the insert statement (`append_queued`, in the migration), and retry only if
 * they still lose a race to an exact-revision writer.
 */
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Pool, PoolClient, QueryArrayConfig } from 'pg'
import type {
  AppendError,
  AppendResult,
  EventStore,
  EventStoreFailure,
  EventToAppend,
  ExpectedRevision,
  InvalidPosition,
  Position,
  ReadAllOptions,
  ReadError,
  ReadItem,
  ReadStreamOptions,
  SubscribeOptions,
  Subscription,
  SubscriptionError,
  StreamAppend,
  SubscriptionHandler,
} from '../../application/ports/event-store.ts'
import type { Logger } from '../../logger.ts'
import { constraintOf, isRetriablePgError, sqlStateOf } from '../../platform/postgres/errors.ts'
import { eventsTable, isValidSchemaName, schemaTag } from '../../platform/postgres/names.ts'
import { decodeEvent, pad20, sleep, validateAppend } from './envelope.ts'
import { announcementKeyOf, blockersOf, lastPosition, readAnnouncement, verdictOf, type Announcement, type AnnouncementKey, type FollowState } from './announcements.ts'
import { horizonHolders, readHorizon, type Horizon } from './postgres-horizon.ts'
import { makeWakeups } from './postgres-wakeups.ts'
import { DEFAULT_PAGE_BYTES, makePageSizer } from './page-bytes.ts'

export type PostgresEventStoreConfig = {
  /** The schema that `migrateEventStore` created. Default `eventstore`. */
  readonly schema?: string
  /** How often an idle subscriber polls when no notification arrives. Default 1000 ms. */
  readonly pollIntervalMs?: number
  /** Events per read while a subscriber catches up. Default 1000. */
  readonly pageSize?: number
  /** Bytes of decoded events per read while a subscriber catches up (estimated; fewer events per read when they are large). Default 8 MiB. */
  readonly pageBytes?: number
  /**
   * Notifications to other processes are coalesced to at most one per this interval. Default 1 ms: with
   * 10 ms, live delivery to another process took p99 7.1 ms / p50 1.5 ms in the bench (8 writers, 400
   * events/s), with 1 ms 2.3 ms / 0.4 ms, appends unchanged (docs/architecture.md "The horizon", live following).
   */
  readonly notifyIntervalMs?: number
  /** A subscriber held back this long by the horizon logs the appenders it waits for (at most once per this interval per store). Default 10 s. */
  readonly horizonWarnSeconds?: number
  /**
   * How often an appending store looks for subscribers of its schema in other sessions (it announces its
   * events only while there are some, docs/architecture.md "Live following"). Default 1000 ms: a new
   * subscriber elsewhere gets announcements within about a second, bare wake-ups until then.
   */
  readonly listenerLookupMs?: number
  /**
   * Above how many appends of this store running at once, and above which rate of its appends
   * (per second, over windows of 100 ms), appends send bare wake-ups rather than announce. Defaults
   * 4 and 1,000 (docs/architecture.md "Live following").
   */
  readonly announceLimits?: { readonly running?: number; readonly perSecond?: number }
  /**
   * Told of every batch a subscriber delivers, and how: from an announcement (no read) or from a read.
   * For an announcement, also when its notification was heard (epoch ms, `performance.timeOrigin +
   * performance.now()`) and whether it waited for an older transaction first (the bench splits live
   * delivery's tail by these, docs/development.md "Benchmarks").
   */
  readonly observeDelivery?: (how: 'announcement' | 'read', events: number, announcement?: AnnouncementDelivery) => void
}

/** How an announcement was delivered: when its notification was heard (epoch ms), whether it waited for an older transaction. */
export type AnnouncementDelivery = { readonly heardAt: number; readonly waited: boolean }

export type PostgresEventStoreDeps = {
  /** Owned by the caller; `close()` does not end it. */
  readonly pool: Pool
  readonly log: Logger
}

type Cursor = { readonly txId: string; readonly position: string }

const START: Cursor = { txId: '0', position: '0' }
const POSITION = /^(\d{20})-(\d{20})$/
const DEFAULT_PAGE = 1000
const MAX_BLOCKED_BACKOFF_MS = 100
/** Reads held back by an append in flight look again every 1 ms this many times before backing off. */
const BLOCKED_STEADY_POLLS = 10
const ACTIVE_POLL_MS = 2
const MAX_FAILURE_BACKOFF_MS = 5_000
const MAX_RACE_ATTEMPTS = 1_000
/**
 * Appends of one store running at most (this one included) for an append to announce its events
 * rather than send a coalesced wake-up (announcements.ts). With more, commits that each notify would
 * queue on PostgreSQL's notify lock (docs/architecture.md "Live following").
 */
const ANNOUNCE_CONCURRENCY = 4
/**
 * ... unless the store's appends committed at fewer than this many per second over the last window:
 * commits that rare hardly meet on the notify lock, however many are running at once.
 */
const ANNOUNCE_MAX_RATE = 1_000
const ANNOUNCE_RATE_WINDOW_MS = 100
/** Announcements a subscriber holds while they wait for a read; beyond, a notification only calls for a read. */
const MAX_ANNOUNCED = 256
/** How long an announcement that must wait gives the older append's own announcement before a read. */
const ANNOUNCED_WAIT_MS = 3
/** While waiting does not pay, one wait in this many still does, to notice when it pays again. */
const WAIT_PROBE = 16
/** The most transaction ids a subscriber asks about at once (settle); more are read as before. */
const MAX_SETTLE_IDS = 256
/** Ids a subscriber keeps as known empty; past this, those below resolvedBelow go, then the oldest. */
const MAX_KNOWN_EMPTY = 4_096
/** How often a store without the announcement key tries to read it again while announcements arrive. */
const KEY_RETRY_MS = 30_000
/** The application_name of a store's LISTEN connection, then the schema's tag: appenders look for it to know whether anyone listens. */
const LISTENER_NAME = 'satang-listen-'

const encodePosition = (txId: string, position: string): Position => `${pad20(txId)}-${pad20(position)}` as Position

const decodePosition = (position: Position | undefined): E.Either<InvalidPosition, Cursor> => {
  if (position === undefined) return E.right(START)
  const m = POSITION.exec(position)
  return m === null ? E.left({ _tag: 'InvalidPosition', position }) : E.right({ txId: BigInt(m[1] ?? '0').toString(), position: BigInt(m[2] ?? '0').toString() })
}

const failure = (operation: string) => (cause: unknown): EventStoreFailure => ({ _tag: 'EventStoreFailure', operation, retriable: isRetriablePgError(cause), cause })

// Rows come back as arrays (no per-row objects on the hot path). Column types are fixed by the
// schema, so a mismatch is a defect, not bad data.
const text = (v: unknown): string => {
  if (typeof v !== 'string') throw new Error(`expected a text column, got ${typeof v}`)
  return v
}
const epochMs = (v: unknown): Date => new Date(Number(text(v)))

// recorded_at travels as epoch milliseconds: building a Date from a number is far cheaper than parsing timestamptz text.
const EVENT_COLUMNS = 'e.tx_id::text, e.position, e.stream_name, e.stream_revision, e.event_id, e.type, e.schema_version, e.data, e.metadata, (extract(epoch from e.recorded_at) * 1000)::bigint'

const toItem = (row: ReadonlyArray<unknown>): ReadItem =>
  decodeEvent({
    position: encodePosition(text(row[0]), text(row[1])),
    streamName: text(row[2]),
    streamRevision: BigInt(text(row[3])),
    eventId: text(row[4]),
    type: text(row[5]),
    schemaVersion: row[6],
    data: row[7],
    metadata: row[8],
    recordedAt: epochMs(row[9]),
  })

/**
 * The rows of one statement, through pg's callback form of `query`. With its promise form a
 * subscriber's pages survived young-generation collections (why, inside pg and V8, is not known): a
 * catch-up of a million events spent 1.4–2.4 s in scavenges and ran 20–27 full collections, against
 * 0.2–0.3 s and one this way (docs/development.md "A catch-up's pages and pg's promise form"). A
 * failure rejects with pg's error as it is (the promise form only adds a stack trace leading back to
 * the caller).
 */
const rowsOf = (client: Pick<PoolClient, 'query'>, config: QueryArrayConfig): Promise<unknown[][]> =>
  new Promise((resolve, reject) => {
    client.query<unknown[]>(config, (err: Error | undefined, result) => {
      if (err) reject(err)
      else resolve(result.rows)
    })
  })

/** PostgreSQL's undefined_function: a schema older than the function called. */
const isUndefinedFunction = (err: unknown): boolean => sqlStateOf(err) === '42883'

/** LIKE pattern matching names that start with `prefix` (`%`, `_` and `\` taken literally). */
const prefixPattern = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

// The revision check, as a condition on the stream's current revision `c.revision`
// ($2: the expectation's kind, $3: the exact revision).
const EXPECTATION_HOLDS = `case $2::text
           when 'any' then true
           when 'no_stream' then c.revision is null
           when 'stream_exists' then c.revision is not null
           else c.revision = $3::bigint
         end`

/**
 * One statement per append (see the module comment): the stream's revision, the check, the insert.
 * It returns one row per event (the new revision, the transaction id, the position), none when the
 * expectation fails. One event: parameters $4–$8; a batch: a JSON array in $4. When the next
 * wake-up notification is this append's to send (`Wakeups.claim`), the statement sends it itself
 * ($9/$5, the channel in $10/$6): PostgreSQL delivers it at the commit, with no round trip after.
 * With few appends of this store running and a subscriber listening in another session, the
 * statement announces its events instead (announcements.ts): that subscriber can then deliver them
 * without reading. An append that notifies nothing (nobody listens elsewhere, or a later wake-up
 * covers it) runs the `quiet` form, which has neither parameter nor their expressions: most appends
 * while nobody listens, or while many run at once; about 4 µs less in PostgreSQL, 1 % of an append
 * (docs/development.md "Appends against the code before issue 24").
 */
type Notices = 'quiet' | 'wake' | { readonly announceFn: string }
const appendSql = (t: string, shape: 'one' | 'many', notices: Notices): string => {
  // 'wake' (before migration 0006): $9/$5 a boolean, whether to send a bare wake-up. With announce:
  // 0 none, 1 a bare wake-up, 2 an announcement of the events (announcements.ts).
  const columns = (mode: string, channel: string): string =>
    notices === 'quiet'
      ? ''
      : notices === 'wake'
        ? `, (select pg_notify(${channel}::text, '') where ${mode}::boolean)`
        : // Not a subquery: one with no reference to the rows becomes an init plan, which can run before
          // the last row is inserted. As an expression of the row returned it runs once, after them all.
          `, (select pg_notify(${channel}::text, '') where ${mode}::int = 1), case when ${mode}::int = 2 then ${notices.announceFn}(${channel}::text) end`
  return shape === 'one'
    ? `insert into ${t} (stream_name, stream_revision, event_id, type, schema_version, data, metadata)
       select $1, coalesce(c.revision, -1) + 1, $4::uuid, $5::text, $6::integer, $7::jsonb, $8::jsonb
         from (select max(e.stream_revision) as revision from ${t} e where e.stream_name = $1) c
        where ${EXPECTATION_HOLDS}
       returning stream_revision, pg_current_xact_id()::text, position${columns('$9', '$10')}`
    : `with inserted as (
         insert into ${t} (stream_name, stream_revision, event_id, type, schema_version, data, metadata)
         select $1, coalesce(c.revision, -1) + b.ord, (b.e->>'eventId')::uuid, b.e->>'type', (b.e->>'schemaVersion')::integer, b.e->'data', b.e->'metadata'
           from (select max(e.stream_revision) as revision from ${t} e where e.stream_name = $1) c,
                jsonb_array_elements($4::jsonb) with ordinality as b(e, ord)
          where ${EXPECTATION_HOLDS}
          order by b.ord
         returning stream_revision, position
       )
       select i.stream_revision, pg_current_xact_id()::text, i.position${columns('$5', '$6')} from inserted i order by i.position desc limit 1`
}

/**
 * Appends to several streams in one statement (`appendToStreams`): $1 a JSON array of
 * {s: stream, k: 'no_stream' | 'exact', x: revision, ev: [events]}, distinct streams. Each stream's
 * revision is read and checked as `appendSql` does; the appends whose expectation holds are inserted
 * (in request order, each stream's in revision order), the others not. One row per request: its index,
 * whether it held, the stream's revision before, and for an inserted one its last revision, position
 * and the transaction id. A race for a revision or a stored id fails the whole statement (the caller
 * then appends one by one, which settles each as `append` does).
 */
const appendToStreamsSql = (t: string, announceFn?: string): string => `
  with req as materialized (
         select r.ord, r.a->>'s' as stream, r.a->>'k' as kind, (r.a->>'x')::bigint as exact, r.a->'ev' as ev
           from jsonb_array_elements($1::jsonb) with ordinality as r(a, ord)),
       cur as materialized (
         select q.ord, q.stream, q.ev, c.revision,
                case q.kind when 'no_stream' then c.revision is null else c.revision is not distinct from q.exact end as holds
           from req q, lateral (select max(e.stream_revision) as revision from ${t} e where e.stream_name = q.stream) c),
       inserted as (
         insert into ${t} (stream_name, stream_revision, event_id, type, schema_version, data, metadata)
         select c.stream, coalesce(c.revision, -1) + b.ord, (b.e->>'eventId')::uuid, b.e->>'type', (b.e->>'schemaVersion')::integer, b.e->'data', b.e->'metadata'
           from cur c, jsonb_array_elements(c.ev) with ordinality as b(e, ord)
          where c.holds
          order by c.ord, b.ord
         returning stream_name, stream_revision, position, pg_current_xact_id()::text as tx,
                   (select pg_notify($3::text, '') where ${announceFn === undefined ? '$2::boolean' : '$2::int = 1'}) as n),
       last as (select distinct on (i.stream_name) i.stream_name, i.stream_revision, i.position, i.tx from inserted i order by i.stream_name, i.stream_revision desc)${
         announceFn === undefined
           ? ''
           : `,
       -- Once, after every row is inserted (the count reads them all), and only if one was.
       ann as materialized (select case when $2::int = 2 and n.c > 0 then ${announceFn}($3::text) end as a from (select count(*) as c from inserted) n)`
       }
  select c.ord, c.holds, c.revision::text, l.stream_revision::text, l.position::text, l.tx
    from cur c left join last l on l.stream_name = c.stream${announceFn === undefined ? '' : ' left join ann on true'}
   order by c.ord`

/** The application_name of the LISTEN connection of a store of `schema`: an appender notifies only while one from another session is connected. */
export const listenerNameOf = (schema: string): string => `${LISTENER_NAME}${schemaTag(schema)}`

/** The PostgreSQL event store. Run `migrateEventStore` for the same schema first. */
export const makePostgresEventStore = (deps: PostgresEventStoreDeps, config: PostgresEventStoreConfig = {}): EventStore => {
  const schema = config.schema ?? 'eventstore'
  if (!isValidSchemaName(schema)) throw new Error(`invalid event store schema name ${JSON.stringify(schema)}`)
  const pollIntervalMs = config.pollIntervalMs ?? 1_000
  const pageSize = config.pageSize ?? DEFAULT_PAGE
  const pageBytes = config.pageBytes ?? DEFAULT_PAGE_BYTES
  const log = deps.log.child({ component: 'eventstore', schema })
  const pool = deps.pool
  const tag = schemaTag(schema)
  const listenerLookupMs = config.listenerLookupMs ?? 1_000
  const listenerName = listenerNameOf(schema)
  const wakeups = makeWakeups(
    { pool, log },
    // Twice the lookup interval: an appender elsewhere with the default looks within a second, plus its query's time.
    { channel: `${schema}_events`, minIntervalMs: config.notifyIntervalMs ?? 1, listenerName, othersListen: () => subscribersElsewhere(), startupWindowMs: 2 * listenerLookupMs },
  )
  const subscriptions = new Set<Subscription>()
  const t = eventsTable(schema)
  const horizonWarnMs = (config.horizonWarnSeconds ?? 10) * 1000
  const observeDelivery = config.observeDelivery
  const announceRunning = config.announceLimits?.running ?? ANNOUNCE_CONCURRENCY
  const announcePerSecond = config.announceLimits?.perSecond ?? ANNOUNCE_MAX_RATE
  let lastHorizonWarning = Number.NEGATIVE_INFINITY

  /** Names the appenders that hold the horizon back, rate-limited across this store's subscribers. */
  const warnHeldBack = async (blockedMs: number): Promise<void> => {
    const now = performance.now()
    if (now - lastHorizonWarning < horizonWarnMs) return
    lastHorizonWarning = now
    try {
      const holders = await withConnection((c) => horizonHolders(c, schema))
      const oldest = holders[0]
      log.warn(
        { heldBackMs: Math.round(blockedMs), horizon: oldest?.txId, pid: oldest?.pid, openSeconds: oldest?.openSeconds, holders: holders.slice(0, 10) },
        `event log readers are held back by an append transaction open for ${oldest?.openSeconds == null ? 'an unknown time' : `${oldest.openSeconds.toFixed(1)} s`} (pid ${String(oldest?.pid ?? 'unknown')}, transaction ${oldest?.txId ?? 'unknown'}); docs/operations.md "Event store operations"`,
      )
    } catch (err) {
      log.warn({ err, heldBackMs: Math.round(blockedMs) }, 'event log readers are held back by the horizon; could not list the transactions holding it')
    }
  }

  /**
   * Runs `work` on a connection of the pool. A statement PostgreSQL refused (an error carrying a
   * SQLSTATE: a race lost by `appendToStreams`, text the server cannot store) leaves the connection
   * usable, so it goes back to the pool; anything else ends it. (`pool.query` would end it either
   * way, and the next statement would wait for a new connection.)
   */
  const withConnection = async <T>(work: (client: PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect()
    let broken = false
    try {
      return await work(client)
    } catch (cause) {
      broken = sqlStateOf(cause) === undefined
      throw cause
    } finally {
      client.release(broken)
    }
  }
  /** One statement on a connection of the pool (see `withConnection`). */
  const query = (config: QueryArrayConfig): Promise<ReadonlyArray<ReadonlyArray<unknown>>> => withConnection((client) => rowsOf(client, config))
  /** This log's horizon now, on a connection of the pool (postgres-horizon.ts). */
  const horizonNow = (): Promise<Horizon> => withConnection((client) => readHorizon(client, schema))

  // Named statements are parsed once per connection; the name includes a hash of the schema.
  const sql = {
    appendOne: { name: `satang_es_append1a_${tag}`, text: appendSql(t, 'one', { announceFn: `"${schema}".announce` }) },
    appendMany: { name: `satang_es_appendna_${tag}`, text: appendSql(t, 'many', { announceFn: `"${schema}".announce` }) },
    // Appends that notify nothing, on any schema: $1–$8 (one event) or $1–$4 (a batch).
    appendOneQuiet: { name: `satang_es_append1q_${tag}`, text: appendSql(t, 'one', 'quiet') },
    appendManyQuiet: { name: `satang_es_appendnq_${tag}`, text: appendSql(t, 'many', 'quiet') },
    // Before migration 0006 (a role started before `satang migrate` ran): bare wake-ups only.
    appendOnePre6: { name: `satang_es_append1_${tag}`, text: appendSql(t, 'one', 'wake') },
    appendManyPre6: { name: `satang_es_appendn_${tag}`, text: appendSql(t, 'many', 'wake') },
    announceKey: { name: `satang_es_akey_${tag}`, text: `select k.key from "${schema}".announce_key k` },
    // Whether a LISTEN connection of a subscriber of this schema, other than this store's, is open.
    listening: {
      name: `satang_es_listening_${tag}`,
      text: `select exists (select 1 from pg_stat_activity where datname = current_database() and application_name = $1 and pid <> all($2::int[]))`,
    },
    appendToStreams: { name: `satang_es_appendsa_${tag}`, text: appendToStreamsSql(t, `"${schema}".announce`) },
    appendToStreamsPre6: { name: `satang_es_appends_${tag}`, text: appendToStreamsSql(t) },
    streams: {
      name: `satang_es_streams_${tag}`,
      text: `select ${EVENT_COLUMNS} from ${t} e where e.stream_name = any($1::text[]) order by e.stream_name, e.stream_revision`,
    },
    appendQueued: { name: `satang_es_appendq_${tag}`, text: `select * from "${schema}".append_queued($1, $2, $3::jsonb)` },
    // append_queued returns its rows once it has finished (a set-returning function in FROM is run to
    // the end first), so announce() runs after the insert: once, for its one row (none when nothing was appended).
    appendQueuedA: {
      name: `satang_es_appendqa_${tag}`,
      text: `select q.*, case when $4::int = 2 then "${schema}".announce($5::text) end from "${schema}".append_queued($1, $2, $3::jsonb) q`,
    },
    currentRevision: { name: `satang_es_rev_${tag}`, text: `select max(e.stream_revision) from ${t} e where e.stream_name = $1` },
    byIds: { name: `satang_es_ids_${tag}`, text: `select e.event_id, e.stream_name, e.stream_revision, e.tx_id::text, e.position from ${t} e where e.event_id = any($1::uuid[])` },
    readAll: {
      name: `satang_es_all_${tag}`,
      text: `select ${EVENT_COLUMNS} from ${t} e
              where (e.tx_id, e.position) > ($1::xid8, $2::bigint)
                and e.tx_id < $4::xid8
              order by e.tx_id, e.position limit $3`,
    },
    readCategory: {
      name: `satang_es_cat_${tag}`,
      text: `select ${EVENT_COLUMNS} from ${t} e
              where (e.tx_id, e.position) > ($1::xid8, $2::bigint)
                and e.tx_id < $5::xid8
                and e.stream_name like $4
              order by e.tx_id, e.position limit $3`,
    },
    countAfter: {
      name: `satang_es_count_${tag}`,
      text: `select count(*)::int from (select 1 from ${t} e
              where (e.tx_id, e.position) > ($1::xid8, $2::bigint)
                and e.tx_id < $4::xid8
              order by e.tx_id, e.position limit $3) c`,
    },
    // A subscriber with a prefix scans every row, but reads the payload only of rows that match,
    // so its cursor moves past other streams instead of scanning them again at every poll.
    scanCategory: {
      name: `satang_es_scan_${tag}`,
      text: `select e.tx_id::text, e.position, m, e.stream_name, e.stream_revision, e.event_id, e.type, e.schema_version,
                    case when m then e.data end, case when m then e.metadata end, (extract(epoch from e.recorded_at) * 1000)::bigint
               from ${t} e, lateral (select e.stream_name like $4 as m) f
              where (e.tx_id, e.position) > ($1::xid8, $2::bigint)
                and e.tx_id < $5::xid8
              order by e.tx_id, e.position limit $3`,
    },
    // Whether rows beyond the cursor are visible at all: if so, they are waiting for an older
    // append to finish, and the subscriber should look again soon rather than sleep.
    // (Not `exists (…)`: its generic plan is a sequential scan; ordered with a limit it is an index probe.)
    // The last committed row, visible to readers or not: the primary key index read backwards.
    head: { name: `satang_es_head_${tag}`, text: `select e.tx_id::text, e.position from ${t} e order by e.tx_id desc, e.position desc limit 1` },
    // Horizon and page in one round trip (migration 0005): a header row, then the page.
    readLive: { name: `satang_es_live_${tag}`, text: `select * from "${schema}".read_live($1::xid8, $2::bigint, $3::int, $4::text)` },
    beyond: { name: `satang_es_beyond_${tag}`, text: `select true from ${t} e where (e.tx_id, e.position) > ($1::xid8, $2::bigint) order by e.tx_id, e.position limit 1` },
    // Of the transaction ids in $1, those that had ended before this statement's snapshot with no
    // event in the log: they never hold one (announcements.ts, KnownEmpty). An index probe each.
    endedEmpty: {
      name: `satang_es_ended_empty_${tag}`,
      text: `select u.x from unnest($1::text[]) u(x)
              where pg_visible_in_snapshot(u.x::xid8, pg_current_snapshot())
                and (select e.position from ${t} e where e.tx_id = u.x::xid8 order by e.tx_id, e.position limit 1) is null`,
    },
    streamForward: {
      name: `satang_es_fwd_${tag}`,
      text: `select ${EVENT_COLUMNS} from ${t} e where e.stream_name = $1 and e.stream_revision >= $2 order by e.stream_revision limit $3`,
    },
    streamBackward: {
      name: `satang_es_bwd_${tag}`,
      text: `select ${EVENT_COLUMNS} from ${t} e where e.stream_name = $1 and e.stream_revision <= $2 order by e.stream_revision desc limit $3`,
    },
  }

  /**
   * What the store holds for this batch's ids: nothing, exactly this batch in this stream (then its
   * original result), or something else (a conflict).
   */
  const storedBatch = async (stream: string, events: ReadonlyArray<EventToAppend>): Promise<'none' | 'conflict' | AppendResult> => {
    const rows = await query({ ...sql.byIds, values: [events.map((e) => e.eventId)], rowMode: 'array' })
    if (rows.length === 0) return 'none'
    if (rows.length !== events.length) return 'conflict'
    const byId = new Map(rows.map((r) => [text(r[0]), r]))
    const first = byId.get(events[0]?.eventId ?? '')
    if (first === undefined) return 'conflict'
    const base = BigInt(text(first[2]))
    let last: ReadonlyArray<unknown> = first
    for (const [i, e] of events.entries()) {
      const row = byId.get(e.eventId)
      if (row === undefined || row[1] !== stream || BigInt(text(row[2])) !== base + BigInt(i)) return 'conflict'
      last = row
    }
    return { nextExpectedRevision: BigInt(text(last[2])), position: encodePosition(text(last[3]), text(last[4])), alreadyStored: true }
  }

  const settleByIds = async (stream: string, events: ReadonlyArray<EventToAppend>, otherwise: AppendError): Promise<E.Either<AppendError, AppendResult>> => {
    const stored = await storedBatch(stream, events)
    if (stored === 'none') return E.left(otherwise)
    if (stored === 'conflict') return E.left({ _tag: 'EventIdConflict', stream, eventIds: events.map((e) => e.eventId) })
    return E.right(stored)
  }

  type Attempt = E.Either<'retry', E.Either<AppendError, AppendResult>>

  /** Whether an append with this expectation can send the wake-up in its own statement (not `append_queued`). */
  const notifiesInStatement = (expected: ExpectedRevision): boolean => expected !== 'any' && expected !== 'stream_exists'

  /** Whether the schema has `announce` (migration 0006); false once an append found it missing. */
  let announcing = true
  /**
   * Runs an append's statement in the form that can announce (`run(true)`) while the schema has
   * migration 0006; when PostgreSQL refuses it for a missing function (at prepare: nothing was
   * written), remembers that, says so once, and runs the form from before (`run(false)`).
   */
  const withAnnounce = async <T>(run: (canAnnounce: boolean) => Promise<T>): Promise<T> => {
    if (announcing) {
      try {
        return await run(true)
      } catch (cause) {
        if (!isUndefinedFunction(cause)) throw cause
        announcing = false
        log.warn('the event store schema predates announcements (migration 0006): appends send bare wake-ups until `satang migrate` runs')
      }
    }
    return run(false)
  }
  /**
   * Appends of this store running on a connection: above ANNOUNCE_CONCURRENCY they send bare, coalesced
   * wake-ups. Counted from the moment the connection is theirs, not from the call: appends waiting for
   * a connection (a pool opening its connections at start) do not commit, so do not queue on the lock.
   */
  let appendsRunning = 0
  // Appends of this store that committed in the last whole window of ANNOUNCE_RATE_WINDOW_MS, per second.
  let appendRate = 0
  let rateWindowStart = performance.now()
  let rateWindowCount = 0
  const countAppend = (): void => {
    const now = performance.now()
    const elapsed = now - rateWindowStart
    if (elapsed >= ANNOUNCE_RATE_WINDOW_MS) {
      appendRate = (rateWindowCount * 1000) / elapsed
      rateWindowStart = now
      rateWindowCount = 0
    }
    rateWindowCount += 1
  }
  /** The rate of the last whole window, or of the current one once it is as long (after a quiet spell, low at once). */
  const currentAppendRate = (): number => {
    const elapsed = performance.now() - rateWindowStart
    return elapsed >= ANNOUNCE_RATE_WINDOW_MS ? (rateWindowCount * 1000) / elapsed : appendRate
  }

  // Announcing costs each append about 0.1 ms in PostgreSQL (docs/architecture.md "Live following"),
  // and a wake-up nobody hears is wasted: both only while a subscriber elsewhere listens. Looked up at
  // most once a second, in the background, when an append asks. An answer older than that is not
  // trusted: from the moment a new lookup starts until it answers (the first one included), someone is
  // assumed to listen. So the first append after a quiet spell notifies even if nobody listened when
  // the store last looked: a subscriber may have started since, and be past its start-up polling.
  let othersListen = true
  let listenCheckedAt = Number.NEGATIVE_INFINITY
  let listenCheck: Promise<void> | undefined
  const subscribersElsewhere = (): boolean => {
    const now = performance.now()
    if (listenCheck === undefined && now - listenCheckedAt >= listenerLookupMs) {
      listenCheckedAt = now
      othersListen = true
      const own = wakeups.listenerPid()
      listenCheck = query({ ...sql.listening, values: [listenerName, own === undefined ? [] : [own]], rowMode: 'array' })
        .then((rows) => {
          othersListen = rows[0]?.[0] === true
        })
        .catch((err: unknown) => log.debug({ err }, 'could not tell whether subscribers elsewhere listen; announcing'))
        .finally(() => {
          listenCheck = undefined
        })
    }
    return othersListen
  }

  /**
   * How an append in its own statement notifies: 0 not at all (covered by a later wake-up), 1 a bare
   * wake-up (not through `append_queued`), 2 an announcement.
   */
  const noticeOf = (expected: ExpectedRevision): 0 | 1 | 2 => {
    // Every notifying commit takes PostgreSQL's notify lock until it is durable, so commits that notify
    // do not share a disk flush: announcing while many appends run at a high rate would cut their
    // throughput (docs/architecture.md "Live following"); then one bare wake-up per interval covers
    // them all. Many running at a low rate (a pause of the disk piled them up) still announce.
    const few = appendsRunning <= announceRunning || currentAppendRate() < announcePerSecond
    if (announcing && few && subscribersElsewhere()) return 2
    if (!notifiesInStatement(expected)) return 0
    return wakeups.claim() ? 1 : 0
  }

  /**
   * One try. `notice` is set to how its statement notified (decided once it has a connection); for an
   * append through `append_queued`, 0 (a wake-up follows the commit).
   */
  const appendOnce = async (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision, notice: { value: 0 | 1 | 2 }): Promise<Attempt> => {
    const kind = typeof expected === 'bigint' ? 'exact' : expected
    const exact = typeof expected === 'bigint' ? expected.toString() : null
    const [only] = events
    const queued = kind === 'any' || kind === 'stream_exists'
    notice.value = 0
    const inStatement = (): Promise<ReadonlyArray<ReadonlyArray<unknown>>> => withConnection(async (client) => {
      appendsRunning += 1
      try {
        notice.value = noticeOf(expected)
        return await withAnnounce(async (canAnnounce) => {
          if (queued && !canAnnounce) notice.value = 0 // before 0006: a wake-up follows the commit
          // Since 0006 the notice as 0/1/2, before it whether to send a bare wake-up.
          const n = canAnnounce ? notice.value : notice.value !== 0
          if (queued) {
            const statement: QueryArrayConfig = canAnnounce
              ? { ...sql.appendQueuedA, values: [stream, kind === 'stream_exists', JSON.stringify(events), n, wakeups.channel], rowMode: 'array' }
              : { ...sql.appendQueued, values: [stream, kind === 'stream_exists', JSON.stringify(events)], rowMode: 'array' }
            return await rowsOf(client, statement)
          }
          // In its own statement: the event's columns, or the batch as JSON; then, unless the quiet form
          // runs, how it notifies and on which channel.
          const single = events.length === 1 ? only : undefined
          const eventValues = single === undefined ? [stream, kind, exact, JSON.stringify(events)] : [stream, kind, exact, single.eventId, single.type, single.schemaVersion, JSON.stringify(single.data), JSON.stringify(single.metadata)]
          const quiet = notice.value === 0
          const named = single === undefined ? (quiet ? sql.appendManyQuiet : canAnnounce ? sql.appendMany : sql.appendManyPre6) : quiet ? sql.appendOneQuiet : canAnnounce ? sql.appendOne : sql.appendOnePre6
          const statement: QueryArrayConfig = { ...named, values: quiet ? eventValues : [...eventValues, n, wakeups.channel], rowMode: 'array' }
          return await rowsOf(client, statement)
        })
      } finally {
        appendsRunning -= 1
      }
    })
    const rows = await inStatement()
    const last = rows.at(-1)
    if (last !== undefined) return E.right(E.right({ nextExpectedRevision: BigInt(text(last[0])), position: encodePosition(text(last[1]), text(last[2])) }))
    // The expectation failed: report the actual revision, unless this is a retry of a batch that was
    // stored (its reply lost), which answers as the first time.
    return E.right(await settleByIds(stream, events, { _tag: 'WrongExpectedVersion', stream, expected, actual: await currentRevision(stream) }))
  }

  const currentRevision = async (stream: string): Promise<bigint | 'no_stream'> => {
    const rows = await query({ ...sql.currentRevision, values: [stream], rowMode: 'array' })
    const seen = rows[0]?.[0]
    return seen === null || seen === undefined ? 'no_stream' : BigInt(text(seen))
  }

  /** After losing a race for a revision: a conflict, unless the expectation still holds and another try may succeed. */
  const afterRevisionRace = async (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision): Promise<Attempt> => {
    if (expected === 'any' || expected === 'stream_exists') return E.left('retry')
    return E.right(await settleByIds(stream, events, { _tag: 'WrongExpectedVersion', stream, expected, actual: await currentRevision(stream) }))
  }

  /** One try: the outcome, or `retry` after losing a race that `any`/`stream_exists` may win next time. */
  const attemptAppend = async (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision, notice: { value: 0 | 1 | 2 }): Promise<Attempt> => {
    try {
      return await appendOnce(stream, events, expected, notice)
    } catch (cause) {
      const state = sqlStateOf(cause)
      const constraint = constraintOf(cause)
      if (state === '23505' && constraint === 'events_stream_revision_key') return await afterRevisionRace(stream, events, expected)
      // An id of the batch is stored already (a retry, or a writer of the same ids that committed
      // first): the original result, or a conflict.
      if (state === '23505' && constraint === 'events_event_id_key') {
        return E.right(await settleByIds(stream, events, { _tag: 'EventIdConflict', stream, eventIds: events.map((e) => e.eventId) }))
      }
      // jsonb cannot hold \u0000 (22P05) nor a lone surrogate (22P02: ids and versions are checked
      // before, so only the JSON can be malformed here); that is the caller's data, not an outage.
      if (state === '22P05' || state === '22P02') {
        return E.right(E.left({ _tag: 'InvalidAppend', stream, reason: 'data or metadata contains text PostgreSQL jsonb cannot store (\\u0000 or a lone surrogate)' }))
      }
      throw cause
    }
  }

  const append = (stream: string, events: ReadonlyArray<EventToAppend>, expected: ExpectedRevision): TE.TaskEither<AppendError, AppendResult> =>
    pipe(
      TE.fromEither(validateAppend(stream, events)),
      TE.flatMap(() =>
        pipe(
          TE.tryCatch(async (): Promise<E.Either<AppendError, AppendResult>> => {
            // Whether this append announced its events or sent the next wake-up from its own statement.
            const notice: { value: 0 | 1 | 2 } = { value: 0 }
            for (let attempt = 1; ; attempt++) {
              const outcome = await attemptAppend(stream, events, expected, notice)
              if (E.isRight(outcome)) {
                if (E.isRight(outcome.right)) {
                  countAppend()
                  wakeups.appended(notice.value !== 0 && !outcome.right.right.alreadyStored)
                }
                return outcome.right
              }
              // `any` never fails because of contention: the loser of a race tries again once the
              // winner has committed; under heavy contention a little jitter spreads them out.
              if (attempt >= MAX_RACE_ATTEMPTS) {
                return E.left({ _tag: 'EventStoreFailure', operation: 'append', retriable: true, cause: new Error(`lost ${String(attempt)} races in a row for stream ${stream}`) })
              }
              if (attempt > 2) await sleep(Math.random() * Math.min(attempt, 20))
            }
          }, failure('append')),
          TE.flatMap(TE.fromEither),
        ),
      ),
    )

  /**
   * Several appends in one statement (see `appendToStreamsSql`); when the statement fails on a race, a
   * stored id or data jsonb refuses, or two appends name one stream, each is appended by `append`.
   */
  const appendToStreams = (appends: ReadonlyArray<StreamAppend>): TE.TaskEither<EventStoreFailure, ReadonlyArray<E.Either<AppendError, AppendResult>>> =>
    TE.tryCatch(async () => {
      const one = async (a: StreamAppend): Promise<E.Either<AppendError, AppendResult>> => append(a.stream, a.events, a.expected)()
      const results: Array<E.Either<AppendError, AppendResult> | undefined> = appends.map((a) => {
        const valid = validateAppend(a.stream, a.events)
        return E.isLeft(valid) ? valid : undefined
      })
      const todo = appends.flatMap((a, i) => (results[i] === undefined ? [{ a, i }] : []))
      const streams = new Set(todo.map((x) => x.a.stream))
      if (todo.length <= 1 || streams.size !== todo.length) {
        for (const { a, i } of todo) results[i] = await one(a)
        return results.map((r) => r ?? E.left({ _tag: 'EventStoreFailure', operation: 'appendToStreams', retriable: false, cause: new Error('no answer') }))
      }
      const body = JSON.stringify(todo.map(({ a }) => ({ s: a.stream, k: a.expected === 'no_stream' ? 'no_stream' : 'exact', x: a.expected === 'no_stream' ? null : a.expected.toString(), ev: a.events })))
      let rows: ReadonlyArray<ReadonlyArray<unknown>> | null
      let notice: 0 | 1 | 2 = 0
      try {
        // Counted as running once the connection is its own, as a single append is (appendsRunning).
        rows = await withConnection(async (client) => {
          appendsRunning += 1
          try {
            notice = noticeOf('no_stream')
            const n = notice
            return await withAnnounce(
              async (canAnnounce) =>
                await rowsOf(client, canAnnounce ? { ...sql.appendToStreams, values: [body, n, wakeups.channel], rowMode: 'array' } : { ...sql.appendToStreamsPre6, values: [body, n !== 0, wakeups.channel], rowMode: 'array' }),
            )
          } finally {
            appendsRunning -= 1
          }
        })
      } catch (cause) {
        const state = sqlStateOf(cause)
        // A race for a revision, an id stored already, or data jsonb refuses: each append settles on its own.
        if (state === '23505' || state === '22P05' || state === '22P02') rows = null
        else throw cause
      }
      if (rows === null) {
        wakeups.appended(false)
        for (const { a, i } of todo) results[i] = await one(a)
      } else {
        let wrote = false
        for (const row of rows) {
          const x = todo[Number(text(row[0])) - 1]
          if (x === undefined) throw new Error('appendToStreams: an answer for no request')
          if (row[1] === true) {
            wrote = true
            results[x.i] = E.right({ nextExpectedRevision: BigInt(text(row[3])), position: encodePosition(text(row[5]), text(row[4])) })
          } else {
            // The expectation failed: a conflict, unless this very batch was stored (a retry whose answer was lost).
            const actual = row[2] === null ? 'no_stream' : BigInt(text(row[2]))
            results[x.i] = await settleByIds(x.a.stream, x.a.events, { _tag: 'WrongExpectedVersion', stream: x.a.stream, expected: x.a.expected, actual })
          }
        }
        wakeups.appended(notice !== 0 && wrote)
      }
      return results.map((r) => r ?? E.left({ _tag: 'EventStoreFailure', operation: 'appendToStreams', retriable: false, cause: new Error('no answer') }))
    }, failure('appendToStreams'))

  const readStreams = (streams: ReadonlyArray<string>): TE.TaskEither<EventStoreFailure, ReadonlyMap<string, ReadonlyArray<ReadItem>>> =>
    TE.tryCatch(async () => {
      const byStream = new Map<string, ReadItem[]>()
      if (streams.length === 0) return byStream
      const rows = await query({ ...sql.streams, values: [[...new Set(streams)]], rowMode: 'array' })
      for (const row of rows) {
        const name = text(row[2])
        const list = byStream.get(name)
        if (list === undefined) byStream.set(name, [toItem(row)])
        else list.push(toItem(row))
      }
      return byStream
    }, failure('readStreams'))

  const readStream = (stream: string, options: ReadStreamOptions = {}): TE.TaskEither<EventStoreFailure, ReadonlyArray<ReadItem>> =>
    TE.tryCatch(async () => {
      const backward = options.direction === 'backward'
      const from = options.fromRevision ?? (backward ? 2n ** 63n - 1n : 0n)
      const limit = options.maxCount ?? null
      const rows = await query({ ...(backward ? sql.streamBackward : sql.streamForward), values: [stream, from.toString(), limit], rowMode: 'array' })
      return rows.map(toItem)
    }, failure('readStream'))

  const readPage = (cursor: Cursor, maxCount: number, prefix: string | undefined): TE.TaskEither<EventStoreFailure, ReadonlyArray<ReadItem>> =>
    TE.tryCatch(async () => {
      const { below } = await horizonNow()
      const rows =
        prefix === undefined
          ? await query({ ...sql.readAll, values: [cursor.txId, cursor.position, maxCount, below], rowMode: 'array' })
          : await query({ ...sql.readCategory, values: [cursor.txId, cursor.position, maxCount, prefixPattern(prefix), below], rowMode: 'array' })
      return rows.map(toItem)
    }, failure(prefix === undefined ? 'readAll' : 'readCategory'))

  const readAll = (options: ReadAllOptions = {}): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> =>
    pipe(
      TE.fromEither(decodePosition(options.from)),
      TE.flatMap((cursor): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> => readPage(cursor, options.maxCount ?? DEFAULT_PAGE, undefined)),
    )

  const readCategory = (prefix: string, options: ReadAllOptions = {}): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> =>
    pipe(
      TE.fromEither(decodePosition(options.from)),
      TE.flatMap((cursor): TE.TaskEither<ReadError, ReadonlyArray<ReadItem>> => readPage(cursor, options.maxCount ?? DEFAULT_PAGE, prefix)),
    )

  type Page = { items: ReadonlyArray<readonly [Cursor, ReadItem]>; scanned: number; next: Cursor }

  /** One page for a subscriber: the items to deliver, and where its cursor is after the page. */
  const subscriptionPage = async (cursor: Cursor, prefix: string | undefined, below: string, limit: number): Promise<Page> => {
    if (prefix === undefined) {
      const rows = await query({ ...sql.readAll, values: [cursor.txId, cursor.position, limit, below], rowMode: 'array' })
      const items = rows.map((row) => [{ txId: text(row[0]), position: text(row[1]) }, toItem(row)] as const)
      return { items, scanned: rows.length, next: items.at(-1)?.[0] ?? cursor }
    }
    return scannedPage(await query({ ...sql.scanCategory, values: [cursor.txId, cursor.position, limit, prefixPattern(prefix), below], rowMode: 'array' }), cursor)
  }

  /** A page of scanned rows (position, whether it matches, then the event): the matching ones delivered, the cursor past all. */
  const scannedPage = (rows: ReadonlyArray<ReadonlyArray<unknown>>, cursor: Cursor): Page => {
    const items = rows.filter((row) => row[2] === true).map((row) => [{ txId: text(row[0]), position: text(row[1]) }, toItem([row[0], row[1], ...row.slice(3)])] as const)
    const last = rows.at(-1)
    return { items, scanned: rows.length, next: last === undefined ? cursor : { txId: text(last[0]), position: text(last[1]) } }
  }

  /**
   * The horizon and the page below it in one call (`read_live`, migration 0005), or in two when the
   * database predates that function (a role started before `satang migrate` ran): same answer.
   */
  let liveInOneCall = true
  const horizonAndPage = async (cursor: Cursor, prefix: string | undefined, limit: number): Promise<{ horizon: Horizon; page: Page }> => {
    if (liveInOneCall) {
      try {
        const rows = await query({ ...sql.readLive, values: [cursor.txId, cursor.position, limit, prefix === undefined ? null : prefixPattern(prefix)], rowMode: 'array' })
        const [header, ...events] = rows
        const below = header?.[0]
        const waitingFor = header?.[1]
        if (typeof below !== 'string' || waitingFor === null || waitingFor === undefined) throw new Error('unexpected header row from read_live')
        // Without a prefix every row matches (read_live's pattern is null).
        return { horizon: { below, waitingFor: Number(waitingFor) }, page: scannedPage(events, cursor) }
      } catch (cause) {
        if (!isUndefinedFunction(cause)) throw cause
        liveInOneCall = false
        log.warn('the event store schema predates read_live (migration 0005): live reads take two round trips until `satang migrate` runs')
      }
    }
    const horizon = await horizonNow()
    return { horizon, page: await subscriptionPage(cursor, prefix, horizon.below, limit) }
  }

  /**
   * The installation's announcement key (migration 0006); undefined when the schema predates it, this
   * role may not read it, or the database could not be reached: subscribers then read after every
   * notification, and the key is read again (at most every KEY_RETRY_MS) while announcements arrive.
   */
  let announceKeyRead: Promise<AnnouncementKey | undefined> | undefined
  let keyWarned = false
  const announcementKey = (): Promise<AnnouncementKey | undefined> => {
    announceKeyRead ??= (async () => {
      try {
        const key = (await query({ ...sql.announceKey, rowMode: 'array' }))[0]?.[0]
        return Buffer.isBuffer(key) && key.length === 32 ? announcementKeyOf(key) : undefined
      } catch (err) {
        const text = 'cannot read the announcement key (migration 0006 not run, no access, or the database is away): subscribers read after every notification'
        if (keyWarned) log.debug({ err }, text)
        else log.warn({ err }, text)
        keyWarned = true
        return undefined
      }
    })()
    return announceKeyRead
  }
  let announceKey: AnnouncementKey | undefined
  let keyRetryAt = Number.NEGATIVE_INFINITY
  // Every subscriber of this store hears the same notification: its payload is checked once.
  let lastPayload: string | undefined
  let lastAnnouncement: Announcement | undefined
  const announcementIn = (payload: string): Announcement | undefined => {
    if (payload === '') return undefined
    if (announceKey === undefined) {
      const now = performance.now()
      if (now >= keyRetryAt) {
        keyRetryAt = now + KEY_RETRY_MS
        announceKeyRead = undefined
        void announcementKey().then((key) => {
          announceKey ??= key
        })
      }
      return undefined
    }
    if (payload !== lastPayload) {
      lastPayload = payload
      lastAnnouncement = readAnnouncement(payload, announceKey)
    }
    return lastAnnouncement
  }

  const subscribeToAll = (options: SubscribeOptions, handler: SubscriptionHandler): Subscription => {
    let stopping = false
    // A wake-up that calls for a read: this process appended, or another sent a bare wake-up; or a
    // wait for announcements ran out.
    let woken = false
    // Whether the read called for is a wake-up's with no events in it (`woken` by `wake`).
    let bareWake = false
    // Announcements heard and not yet delivered or found stale, oldest transaction first when examined.
    const announced: Array<{ a: Announcement; examined: boolean; heardAt: number }> = []
    // Transaction ids found to have ended with no event (settle): announcements need not wait for them.
    const knownEmpty = new Set<bigint>()
    // A question asked beside a wait, while it is out.
    let settling: Promise<void> | undefined
    let interrupt: (() => void) | undefined
    const wake = (payload?: string): void => {
      const heardAt = performance.timeOrigin + performance.now()
      const a = payload === undefined ? undefined : announcementIn(payload)
      if (a === undefined || announced.length >= MAX_ANNOUNCED) {
        woken = true
        bareWake = true
      } else announced.push({ a, examined: false, heardAt })
      interrupt?.()
    }
    const pause = (ms: number): Promise<void> =>
      sleep(ms, (resolve) => {
        interrupt = resolve
      }).finally(() => {
        interrupt = undefined
      })

    const run = async (): Promise<E.Either<SubscriptionError, void>> => {
      const start = decodePosition(options.from)
      if (E.isLeft(start)) return start
      let cursor = start.right
      // Every transaction below this has ended and its events past the start are delivered (announcements.ts).
      let resolvedBelow = 0n
      // When a read is due for announcements that wait; how often waiting has paid (1: always).
      let readAt: number | undefined
      let waitScore = 1
      let waits = 0
      // Announcements delivered so far (each one, with or without events for this subscriber).
      let announcedDeliveries = 0
      let deliveriesAtRead = 0
      announceKey ??= await announcementKey()
      const unregister = wakeups.register(wake)
      const prefix = options.streamNamePrefix
      let blockedBackoff = 1
      let blockedPolls = 0
      let blockedSince: number | undefined
      let idleBackoff = ACTIVE_POLL_MS
      let failureBackoff = 100
      // Kept while pages come back full (more lies below it); taken again after a shorter page.
      let horizon: Horizon | undefined
      // Pages bounded by bytes as well as by count (page-bytes.ts).
      const sizer = makePageSizer(pageSize, pageBytes)

      /** Hands one item to the handler, from a read or an announcement; what it threw, as the subscription's end. */
      const hand = async (item: ReadItem): Promise<SubscriptionError | undefined> => {
        try {
          await handler(item)
          return undefined
        } catch (cause) {
          return { _tag: 'SubscriberFailed', position: E.isRight(item) ? item.right.position : item.left.position, cause }
        }
      }

      /** What the verdicts go by: what is resolved, and the cursor (announcements.ts). */
      const followState = (): FollowState => ({ resolvedBelow, cursorTx: BigInt(cursor.txId), cursorPosition: BigInt(cursor.position) })

      /**
       * Asks which of the ids that waiting announcements wait for had ended with no event (a transaction
       * of another database, a session that wrote elsewhere): those are known empty from then on, and
       * an announcement waiting only for such ids goes out without a read. True when some were.
       */
      const settle = async (): Promise<boolean> => {
        const state = followState()
        const ids = new Set<bigint>()
        for (const x of announced) if (x.examined) for (const id of blockersOf(x.a, state, knownEmpty) ?? []) ids.add(id)
        if (ids.size === 0 || ids.size > MAX_SETTLE_IDS) return false
        try {
          const rows = await query({ ...sql.endedEmpty, values: [[...ids].map(String)], rowMode: 'array' })
          if (knownEmpty.size > MAX_KNOWN_EMPTY) for (const id of knownEmpty) if (id < resolvedBelow || knownEmpty.size > MAX_KNOWN_EMPTY) knownEmpty.delete(id)
          for (const r of rows) knownEmpty.add(BigInt(String(r[0])))
          return rows.length > 0
        } catch (err) {
          // Only a read saved: the read that follows reports a failure that lasts.
          log.debug({ err }, 'could not ask which transactions ended with no event; reading instead')
          return false
        }
      }

      /**
       * Delivers the announcements that are next in the global order, drops those delivered already; one
       * that must wait calls for a read the first time it is examined, at once or ANNOUNCED_WAIT_MS later,
       * unless what it waits for is found to have ended with no event (`settle`).
       */
      const deliverAnnounced = async (): Promise<E.Either<SubscriptionError, void>> => {
        announced.sort((x, y) => (x.a.tx < y.a.tx ? -1 : x.a.tx > y.a.tx ? 1 : 0))
        // Announcements examined for the first time that must wait: ask about what they wait for, then
        // wait for announcements ANNOUNCED_WAIT_MS or read at once (`readNow`: waiting has not paid lately).
        let settleNow = false
        let readNow = false
        for (let i = 0; i < announced.length && !stopping; ) {
          const entry = announced[i]
          if (entry === undefined) break
          const verdict = verdictOf(entry.a, followState(), knownEmpty)
          if (verdict === 'wait') {
            // Most often an older append still committing, whose own announcement settles it: a read
            // now would find it unfinished and hold up that announcement's delivery. But the
            // transaction may be one that never announces (an autovacuum's, another database's, a
            // coalesced append). So first ask which of the ids it waits for ended with no event
            // (`settle`, one index probe each, below); then wait ANNOUNCED_WAIT_MS while waits have
            // mostly paid (and one in WAIT_PROBE otherwise, to notice when they do again), and ask
            // again before reading; else read at once, as after a bare wake-up.
            if (!entry.examined) {
              waits += 1
              settleNow = true
              if (waitScore < 0.5 && waits % WAIT_PROBE !== 0) readNow = true
            }
            entry.examined = true
            i++
            continue
          }
          announced.splice(i, 1)
          if (verdict === 'stale') continue
          // A wait settled by announcements before its read was due.
          if (entry.examined && readAt !== undefined) waitScore = waitScore * 0.8 + 0.2
          let delivered = 0
          for (const row of entry.a.rows) {
            if (prefix !== undefined && !String(row[2]).startsWith(prefix)) continue
            const failed = await hand(toItem(row))
            if (failed !== undefined) return E.left(failed)
            delivered++
          }
          cursor = { txId: entry.a.tx.toString(), position: lastPosition(entry.a).toString() }
          resolvedBelow = entry.a.tx + 1n
          announcedDeliveries += 1
          observeDelivery?.('announcement', delivered, { heardAt: entry.heardAt, waited: entry.examined })
          // Later announcements may have become deliverable: look from the start again.
          i = 0
        }
        if (settleNow && !stopping) {
          if (readNow) {
            // Waits have not paid lately: ask, and read at once what that does not settle.
            if (await settle()) {
              const r = await deliverAnnounced()
              if (E.isLeft(r)) return r
            }
            if (announced.some((x) => x.examined)) woken = true
          } else {
            // Most often an older append still committing, whose own announcement comes within the
            // wait; a transaction of the cluster that never appends has often ended by the time the
            // question is answered. So ask beside the wait, and look again when the answer settled some.
            readAt ??= performance.now() + ANNOUNCED_WAIT_MS
            settling ??= settle().then((settled) => {
              settling = undefined
              if (settled) interrupt?.()
            })
          }
        }
        if (announced.every((x) => !x.examined)) readAt = undefined
        return E.right(undefined)
      }

      /**
       * Waits until `ms` pass with no announcement delivered, delivering them as they come; ends early
       * when a read is called for. Each announcement delivered shows that nothing before it is missing
       * (announcements.ts), so the wait for the next look starts again from there: while announcements
       * keep the subscriber up to date, no poll races them for their own events.
       */
      const rest = async (ms: number): Promise<E.Either<SubscriptionError, void>> => {
        let until = performance.now() + ms
        while (!stopping && !woken) {
          if (announced.length > 0) {
            const before = announcedDeliveries
            const r = await deliverAnnounced()
            if (E.isLeft(r) || woken) return r
            if (announcedDeliveries !== before) until = performance.now() + ms
          }
          const now = performance.now()
          if (readAt !== undefined && now >= readAt) {
            // The wait was not settled by announcements: ask whether what it waits for ended with no
            // event meanwhile (then waiting paid all the same); read when that does not settle it either.
            if (await settle()) {
              waitScore = waitScore * 0.8 + 0.2
              readAt = undefined
              const r = await deliverAnnounced()
              if (E.isLeft(r)) return r
              if (woken) return r
              if (announced.some((x) => x.examined)) readAt = performance.now()
              continue
            }
            waitScore *= 0.8
            woken = true
            break
          }
          const left = Math.min(until, readAt ?? until) - now
          if (left <= 0) break
          await pause(left)
        }
        return E.right(undefined)
      }

      try {
        while (!stopping) {
          if (announced.length > 0) {
            const r = await deliverAnnounced()
            if (E.isLeft(r)) return r
          }
          const afterBareWake = bareWake
          // Whether announcements were delivered since the last read (so they are heard and believed).
          const announcementsFlowing = announcedDeliveries !== deliveriesAtRead
          deliveriesAtRead = announcedDeliveries
          woken = false
          bareWake = false
          readAt = undefined
          let page: Page
          let beyond = false
          let complete = false
          try {
            const limit = sizer.limit()
            if (horizon === undefined) {
              const both = await horizonAndPage(cursor, prefix, limit)
              horizon = both.horizon
              page = both.page
            } else {
              page = await subscriptionPage(cursor, prefix, horizon.below, limit)
            }
            const { waitingFor } = horizon
            if (page.scanned < limit) {
              complete = BigInt(horizon.below) > resolvedBelow
              if (complete) resolvedBelow = BigInt(horizon.below)
              horizon = undefined
            }
            sizer.observe(page.items.map(([, item]) => item))
            // Held back only if an append was in flight; otherwise what commits later notifies.
            // Once known held back, the next few empty reads while appends are in flight are too
            // (they look again every 1 ms, BLOCKED_STEADY_POLLS); after those, ask again.
            if (page.scanned === 0 && waitingFor > 0 && blockedSince !== undefined && blockedPolls < BLOCKED_STEADY_POLLS) beyond = true
            else if (page.scanned === 0 && waitingFor > 0) {
              const rows = await query({ ...sql.beyond, values: [cursor.txId, cursor.position], rowMode: 'array' })
              beyond = rows[0]?.[0] === true
            }
            failureBackoff = 100
          } catch (cause) {
            const f = failure('subscribeToAll')(cause)
            if (!f.retriable) return E.left(f)
            log.warn({ err: cause, retryInMs: failureBackoff }, 'subscription read failed; retrying')
            await pause(failureBackoff)
            failureBackoff = Math.min(failureBackoff * 2, MAX_FAILURE_BACKOFF_MS)
            continue
          }
          for (const [at, item] of page.items) {
            if (stopping) return E.right(undefined)
            const failed = await hand(item)
            if (failed !== undefined) return E.left(failed)
            cursor = at
          }
          cursor = page.next
          if (page.items.length > 0) observeDelivery?.('read', page.items.length)
          if (page.scanned > 0) {
            blockedSince = undefined
            blockedBackoff = 1
            blockedPolls = 0
            // Found something: look again soon (wake-ups are coalesced, and a poll that finds events may
            // mean notifications are not arriving). But a read that only beat announcements to their
            // events (a poll, or a wait for them that ran out, while announcements arrive) does not start
            // polling again from the shortest interval: the announcements keep the subscriber up to date.
            if (afterBareWake || !announcementsFlowing) idleBackoff = ACTIVE_POLL_MS
            continue
          }
          if (woken) continue
          // A complete read moved the horizon: announcements held back may be next now.
          if (complete && announced.length > 0) {
            const r = await deliverAnnounced()
            if (E.isLeft(r)) return r
            if (woken) continue
          }
          if (beyond) {
            // Committed rows wait behind an older append that is still running: its commit wakes
            // this subscriber (its process notifies); meanwhile look again soon.
            const now = performance.now()
            blockedSince ??= now
            if (now - blockedSince >= horizonWarnMs) await warnHeldBack(now - blockedSince)
            const r = await rest(blockedBackoff)
            if (E.isLeft(r)) return r
            blockedPolls += 1
            if (blockedPolls >= BLOCKED_STEADY_POLLS) blockedBackoff = Math.min(blockedBackoff * 2, MAX_BLOCKED_BACKOFF_MS)
          } else {
            blockedSince = undefined
            blockedBackoff = 1
            blockedPolls = 0
            // Right after activity, look again soon (notifications are coalesced under load);
            // the wait doubles while nothing comes, up to the polling fallback. A notification
            // ends any wait; an announcement that is next in the order is delivered without one.
            const r = await rest(idleBackoff)
            if (E.isLeft(r)) return r
            idleBackoff = Math.min(idleBackoff * 2, pollIntervalMs)
          }
        }
        return E.right(undefined)
      } finally {
        unregister()
      }
    }

    const closed = run()
    const subscription: Subscription = {
      stop: async () => {
        stopping = true
        interrupt?.()
        await closed
      },
      closed,
    }
    subscriptions.add(subscription)
    void closed.then(() => subscriptions.delete(subscription))
    return subscription
  }

  const close = async (): Promise<void> => {
    await Promise.all([...subscriptions].map((s) => s.stop()))
    await wakeups.close()
  }

  const countAfter = (from: Position | undefined, cap: number): TE.TaskEither<ReadError, number> =>
    pipe(
      TE.fromEither(decodePosition(from)),
      TE.flatMap((cursor): TE.TaskEither<ReadError, number> =>
        TE.tryCatch(async () => {
          const { below } = await horizonNow()
          const rows = await query({ ...sql.countAfter, values: [cursor.txId, cursor.position, Math.max(0, Math.floor(cap)), below], rowMode: 'array' })
          return Number(rows[0]?.[0] ?? 0)
        }, failure('countAfter')),
      ),
    )

  const headPosition = (): TE.TaskEither<EventStoreFailure, Position | undefined> =>
    TE.tryCatch(async () => {
      const row = (await query({ ...sql.head, rowMode: 'array' }))[0]
      return row === undefined ? undefined : encodePosition(text(row[0]), text(row[1]))
    }, failure('headPosition'))

  return { append, appendToStreams, readStream, readStreams, readAll, readCategory, countAfter, headPosition, subscribeToAll, close }
}
