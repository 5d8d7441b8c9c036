/**
 * The horizon of the PostgreSQL event store: the transaction id below which every event that will
 * ever commit is committed already. Readers of the global order read only below it (see
 * src/adapters/eventstore/postgres.ts); it is satang's own, made of satang's appends in flight,
 * never of other transactions of the cluster.
 *
 * Appenders register from before they have a transaction id to their end. Since migration 0010 the
 * registration is the insert's own lock: every INSERT into `<schema>.events` holds the table's
 * `RowExclusiveLock` from before its statement runs (PostgreSQL takes it while preparing the
 * statement, and the transaction id is assigned by the first row written) to the end of its
 * transaction; `register_append()` takes the same lock for a transaction that writes elsewhere
 * first. Before 0010 (migrations 0004 and 0007), appenders held `(HORIZON_LOCKS, HORIZON_APPENDERS)`
 * shared: readers accept both, so an upgraded log is read right while appenders of the earlier
 * release still run. A transaction lock ends with the transaction, its rollback or its session, so
 * an appender that crashed or was terminated never holds the horizon.
 *
 * A reader takes the horizon in one statement (snapshot S1, then `pg_locks` read once, at a moment
 * L after S1), and reads in a later statement (snapshot S2, after L):
 *   horizon = the smallest of xmax(S1) and every id in xip(S1) (running at S1) that is not known, at L,
 *   to belong to a transaction other than a registered appender (one whose backend holds its
 *   transactionid lock and no registration).
 * Why nothing below it can still appear: take an appender T with id < horizon. If T was not running
 * at S1 (id < xmax(S1), not in xip), it had ended before S1. If it was, its id is known at L as not
 * registered; but T registered before it had its id, so before S1, and holds the registration until
 * after it has ended (PostgreSQL releases a transaction's locks after marking it ended), so T had
 * ended before L, hence before S2. Either way S2 sees T's outcome. An appender that registers after
 * S1 gets an id ≥ xmax(S1) ≥ horizon. Anything PostgreSQL shows incompletely (an id without its lock
 * row yet, a prepared transaction) counts as an appender: the horizon only waits longer. Taking both
 * in one statement would not do: an appender ending between S1 and L would be read with S1, before
 * its commit. A transaction holding the events table's lock without appending (a `LOCK TABLE` in that
 * mode) only makes readers wait for it.
 *
 * When nobody is running (xip empty) the horizon is xmax(S1) and `pg_locks` is not read.
 */
import type { Pool, PoolClient } from 'pg'
import { eventsTable, HORIZON_APPENDERS, HORIZON_LOCKS, schemaTag } from '../../platform/postgres/names.ts'

type Queryable = Pick<Pool | PoolClient, 'query'>

/**
 * The registration of 0004 and 0007, held by appenders of an upgraded log until 0010: the advisory
 * lock, granted to the backend of transaction `t`. Written as migration 0005's `read_live` has it.
 */
const advisoryRegistration = `a.locktype = 'advisory' and a.pid = t.pid and a.granted and a.objsubid = 2
               and a.classid = ${String(HORIZON_LOCKS)} and a.objid = ${String(HORIZON_APPENDERS)}`

/**
 * What a registered appender holds besides its transaction id: the advisory registration alone (as
 * migration 0005's `read_live` was written), or either it or the `RowExclusiveLock` of `events` (the
 * events table, schema-qualified: this code and 0009's `read_live`). Readers must accept a
 * registration before any appender relies on it, or they would pass over that appender's events:
 * readers learn the insert's lock in a release before appenders use it alone (docs/architecture.md
 * "The horizon").
 */
const registration = (events?: string): string =>
  events === undefined
    ? advisoryRegistration
    : `((${advisoryRegistration})
                or (a.locktype = 'relation' and a.pid = t.pid and a.granted and a.relation = '${events}'::regclass and a.mode = 'RowExclusiveLock'))`

const held = (events?: string): string => `s as materialized (select pg_current_snapshot() as snap),
     l as materialized (
       select locktype, database, ${events === undefined ? '' : 'relation, '}classid, objid, objsubid, transactionid, pid, mode, granted
         from pg_locks where locktype in ('transactionid', 'advisory'${events === undefined ? '' : `, 'relation'`})),
     others as (
       select t.transactionid from l t
        where t.locktype = 'transactionid' and t.mode = 'ExclusiveLock' and t.granted and t.pid is not null
          and not exists (
            select 1 from l a
             where ${registration(events)}
               and a.database = (select d.oid from pg_database d where d.datname = current_database()))),
     held as (
       select x from s, pg_snapshot_xip(s.snap) x
        where not exists (select 1 from others o where o.transactionid = x::xid))`

/**
 * The horizon as one statement: (below as text, appenders waited for). Also the first statement of
 * `read_live`: migration 0005 without `events` (the advisory registration alone), 0009 with it.
 */
export const horizonSql = (events?: string): string => `with ${held(events)}
select case when pg_snapshot_xmin(s.snap) = pg_snapshot_xmax(s.snap) then pg_snapshot_xmax(s.snap)
            else coalesce((select min(h.x) from held h), pg_snapshot_xmax(s.snap)) end::text,
       case when pg_snapshot_xmin(s.snap) = pg_snapshot_xmax(s.snap) then 0 else (select count(*) from held)::int end
  from s`

const holdersSql = (events: string): string => `with ${held(events)}
select h.x::text, t.pid, extract(epoch from clock_timestamp() - a.xact_start)::float8, a.application_name, a.state
  from held h
  left join l t on t.locktype = 'transactionid' and t.mode = 'ExclusiveLock' and t.granted and t.transactionid = h.x::xid
  left join pg_stat_activity a on a.pid = t.pid
 order by h.x`

type Named = { readonly name: string; readonly text: string }
type HorizonStatements = { readonly horizon: Named; readonly holders: Named }

/** The two statements of one schema's horizon, named per schema (a name stands for one text per connection). */
const statements = new Map<string, HorizonStatements>()
const statementsOf = (schema: string): HorizonStatements => {
  let found = statements.get(schema)
  if (found === undefined) {
    const tag = schemaTag(schema)
    found = {
      horizon: { name: `satang_es_horizon_${tag}`, text: horizonSql(eventsTable(schema)) },
      holders: { name: `satang_es_horizon_holders_${tag}`, text: holdersSql(eventsTable(schema)) },
    }
    statements.set(schema, found)
  }
  return found
}

export type Horizon = {
  /** Read events whose `tx_id` is below this transaction id (xid8 as text). */
  readonly below: string
  /** Registered appenders (or transactions not known not to be) in flight below the cluster's next id. */
  readonly waitingFor: number
}

/** Takes the horizon of `schema`'s log. Read with it in a later statement (its own snapshot), never in this one. */
export const readHorizon = async (db: Queryable, schema: string): Promise<Horizon> => {
  const row = (await db.query<unknown[]>({ ...statementsOf(schema).horizon, rowMode: 'array' })).rows[0]
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

/** The transactions the horizon of `schema`'s log waits for now, oldest first. */
export const horizonHolders = async (db: Queryable, schema: string): Promise<ReadonlyArray<HorizonHolder>> => {
  const rows = (await db.query<unknown[]>({ ...statementsOf(schema).holders, rowMode: 'array' })).rows
  return rows.map((r) => ({
    txId: typeof r[0] === 'string' ? r[0] : String(r[0]),
    pid: typeof r[1] === 'number' ? r[1] : null,
    openSeconds: typeof r[2] === 'number' ? r[2] : null,
    applicationName: typeof r[3] === 'string' ? r[3] : null,
    state: typeof r[4] === 'string' ? r[4] : null,
  }))
}
