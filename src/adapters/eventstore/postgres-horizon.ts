/**
 * The horizon of the PostgreSQL event store: the transaction id below which every event that will
 * ever commit is committed already. Readers of the global order read only below it (see
 * src/adapters/eventstore/postgres.ts); it is satang's own, made of satang's appends in flight,
 * never of other transactions of the cluster.
 *
 * Appenders register: each transaction that inserts events holds `(HORIZON_LOCKS, HORIZON_APPENDERS)`
 * (since migration 0010, a key of the range `HORIZON_APPENDER_KEYS` long that starts there, chosen by
 * its backend's pid) shared from before it has a transaction id to its end (the events table's
 * statement trigger, or `register_append()`; migration 0004). A transaction lock ends with the transaction, its rollback
 * or its session, so an appender that crashed or was terminated never holds the horizon.
 *
 * A reader takes the horizon in one statement (snapshot S1, then `pg_locks` read once, at a moment
 * L after S1), and reads in a later statement (snapshot S2, after L):
 *   horizon = the smallest of xmax(S1) and every id in xip(S1) (running at S1) that is not known, at L,
 *   to belong to a transaction other than a registered appender (one whose backend holds its
 *   transactionid lock and not the registration lock).
 * Why nothing below it can still appear: take an appender T with id < horizon. If T was not running
 * at S1 (id < xmax(S1), not in xip), it had ended before S1. If it was, its id is known at L as not
 * registered; but T registered before it had its id, so before S1, and holds the registration until
 * after it has ended (PostgreSQL releases a transaction's locks after marking it ended), so T had
 * ended before L, hence before S2. Either way S2 sees T's outcome. An appender that registers after
 * S1 gets an id ≥ xmax(S1) ≥ horizon. Anything PostgreSQL shows incompletely (an id without its lock
 * row yet, a prepared transaction) counts as an appender: the horizon only waits longer. Taking both
 * in one statement would not do: an appender ending between S1 and L would be read with S1, before
 * its commit.
 *
 * When nobody is running (xip empty) the horizon is xmax(S1) and `pg_locks` is not read.
 */
import type { Pool, PoolClient } from 'pg'
import { HORIZON_APPENDER_KEYS, HORIZON_APPENDERS, HORIZON_LOCKS } from '../../platform/postgres/names.ts'

type Queryable = Pick<Pool | PoolClient, 'query'>

/**
 * The registration's keys a reader accepts: the first alone (migration 0005's `read_live`, as it was
 * written), or the whole range (this code and 0009's `read_live`). A reader must accept every key
 * an appender may take, or it would pass over that appender's events: readers learn the range in a
 * release before appenders use it (docs/architecture.md "The horizon").
 */
const registeredKey = (keys: number): string =>
  keys === 1 ? `a.objid = ${String(HORIZON_APPENDERS)}` : `a.objid between ${String(HORIZON_APPENDERS)} and ${String(HORIZON_APPENDERS + keys - 1)}`

const held = (keys: number): string => `s as materialized (select pg_current_snapshot() as snap),
     l as materialized (
       select locktype, database, classid, objid, objsubid, transactionid, pid, mode, granted
         from pg_locks where locktype in ('transactionid', 'advisory')),
     others as (
       select t.transactionid from l t
        where t.locktype = 'transactionid' and t.mode = 'ExclusiveLock' and t.granted and t.pid is not null
          and not exists (
            select 1 from l a
             where a.locktype = 'advisory' and a.pid = t.pid and a.granted and a.objsubid = 2
               and a.classid = ${String(HORIZON_LOCKS)} and ${registeredKey(keys)}
               and a.database = (select d.oid from pg_database d where d.datname = current_database()))),
     held as (
       select x from s, pg_snapshot_xip(s.snap) x
        where not exists (select 1 from others o where o.transactionid = x::xid))`

/**
 * The horizon as one statement: (below as text, appenders waited for), accepting `keys` keys of the
 * registration. Also the first statement of `read_live` (migrations 0005 and 0009).
 */
export const horizonSql = (keys: number): string => `with ${held(keys)}
select case when pg_snapshot_xmin(s.snap) = pg_snapshot_xmax(s.snap) then pg_snapshot_xmax(s.snap)
            else coalesce((select min(h.x) from held h), pg_snapshot_xmax(s.snap)) end::text,
       case when pg_snapshot_xmin(s.snap) = pg_snapshot_xmax(s.snap) then 0 else (select count(*) from held)::int end
  from s`

const HORIZON_SQL = horizonSql(HORIZON_APPENDER_KEYS)

const HOLDERS_SQL = `with ${held(HORIZON_APPENDER_KEYS)}
select h.x::text, t.pid, extract(epoch from clock_timestamp() - a.xact_start)::float8, a.application_name, a.state
  from held h
  left join l t on t.locktype = 'transactionid' and t.mode = 'ExclusiveLock' and t.granted and t.transactionid = h.x::xid
  left join pg_stat_activity a on a.pid = t.pid
 order by h.x`

export type Horizon = {
  /** Read events whose `tx_id` is below this transaction id (xid8 as text). */
  readonly below: string
  /** Registered appenders (or transactions not known not to be) in flight below the cluster's next id. */
  readonly waitingFor: number
}

/** Takes the horizon. Read with it in a later statement (its own snapshot), never in this one. */
export const readHorizon = async (db: Queryable): Promise<Horizon> => {
  const row = (await db.query<unknown[]>({ name: 'satang_es_horizon', text: HORIZON_SQL, rowMode: 'array' })).rows[0]
  const below = row?.[0]
  const waitingFor = row?.[1]
  if (typeof below !== 'string' || typeof waitingFor !== 'number') throw new Error('unexpected answer to the horizon query')
  return { below, waitingFor }
}

export type HorizonHolder = {
  readonly txId: string
  /** The backend holding it, when PostgreSQL shows it. */
  readonly pid: number | null
  /** Seconds since its transaction began, when PostgreSQL shows it. */
  readonly openSeconds: number | null
  readonly applicationName: string | null
  readonly state: string | null
}

/** The transactions the horizon waits for now, oldest first. */
export const horizonHolders = async (db: Queryable): Promise<ReadonlyArray<HorizonHolder>> => {
  const rows = (await db.query<unknown[]>({ name: 'satang_es_horizon_holders', text: HOLDERS_SQL, rowMode: 'array' })).rows
  return rows.map((r) => ({
    txId: typeof r[0] === 'string' ? r[0] : String(r[0]),
    pid: typeof r[1] === 'number' ? r[1] : null,
    openSeconds: typeof r[2] === 'number' ? r[2] : null,
    applicationName: typeof r[3] === 'string' ? r[3] : null,
    state: typeof r[4] === 'string' ? r[4] : null,
  }))
}
