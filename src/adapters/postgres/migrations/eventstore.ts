import { randomBytes } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import * as t from 'io-ts'
import type { Knex } from 'knex'
import type { EventStoreFailure } from '../../../application/ports/event-store.ts'
import type { Logger } from '../../../logger.ts'
import { isRetriablePgError } from '../../../platform/postgres/errors.ts'
import { eventsTable, HORIZON_APPENDERS, HORIZON_LOCKS, isValidSchemaName, SERVICE_LOCK, SERVICE_LOCKS, STREAM_LOCKS } from '../../../platform/postgres/names.ts'
import { grantEventStoreToServiceSql, isValidRoleName } from '../../../platform/postgres/roles.ts'
import { announcementKeyOf } from '../../eventstore/announcements.ts'
import { horizonSql } from '../../eventstore/postgres-horizon.ts'

// The lock that serialises concurrent migrations of one database.
const MIGRATION_LOCK = [SERVICE_LOCKS, SERVICE_LOCK.eventStoreMigrations] as const

type Migration = {
  readonly name: string
  readonly up: (db: Knex) => Promise<void>
  /**
   * A migration that may not run while processes of an earlier release may still be at work: it is
   * applied to a new installation (nothing of an earlier release can be reading it), or when the
   * operator says every process runs this release (`satang migrate --every-process-upgraded`); until then it
   * waits, unrecorded, and a later release applies it unconditionally.
   */
  readonly afterEveryProcessUpgraded?: true
}

// The events table is append-only: the adapter never updates or deletes a row (0002 adds triggers
// that enforce it). Columns and the (tx_id, position) method are described in
// src/adapters/eventstore/postgres.ts.
const createEvents = (s: string): string => `
create table "${s}".events (
  tx_id           xid8        not null default pg_current_xact_id(),
  position        bigint      not null generated always as identity,
  stream_name     text        collate "C" not null,
  stream_revision bigint      not null check (stream_revision >= 0),
  event_id        uuid        not null,
  type            text        not null,
  schema_version  integer     not null check (schema_version > 0),
  data            jsonb       not null,
  metadata        jsonb       not null,
  recorded_at     timestamptz not null default now(),
  constraint events_pkey primary key (tx_id, position),
  constraint events_event_id_key unique (event_id),
  constraint events_stream_revision_key unique (stream_name, stream_revision)
);
comment on table "${s}".events is 'satang event log: append-only; global order is (tx_id, position); read only below pg_snapshot_xmin(pg_current_snapshot())';
`

// Appends under `any` and `stream_exists` queue on a per-stream lock instead of racing on the
// unique (stream_name, stream_revision) index: a lost race costs a failed insert, its rollback and
// a retry, and under contention that costs every writer (measured: 2-3x slower). The lock is taken
// before the transaction's first write, so before it has a transaction id, and the insert runs in
// a second statement whose snapshot is taken after the lock was granted: it sees the previous
// holder's events (see src/adapters/eventstore/postgres.ts on why that keeps each stream in order).
// Returns the last event's revision, transaction id and position; no row when the stream must
// exist and does not.
const createAppendQueued = (s: string): string => `
create function "${s}".append_queued(p_stream text, p_must_exist boolean, p_events jsonb)
returns table (out_revision bigint, out_tx_id text, out_position bigint)
language plpgsql volatile as $fn$
begin
  perform pg_advisory_xact_lock(${String(STREAM_LOCKS)}, hashtext(p_stream));
  return query
    with inserted as (
      insert into "${s}".events (stream_name, stream_revision, event_id, type, schema_version, data, metadata)
      select p_stream, coalesce(c.revision, -1) + b.ord, (b.e->>'eventId')::uuid, b.e->>'type',
             (b.e->>'schemaVersion')::integer, b.e->'data', b.e->'metadata'
        from (select max(e.stream_revision) as revision from "${s}".events e where e.stream_name = p_stream) c,
             jsonb_array_elements(p_events) with ordinality as b(e, ord)
       where not p_must_exist or c.revision is not null
       order by b.ord
      returning stream_revision, position
    )
    select i.stream_revision, pg_current_xact_id()::text, i.position from inserted i order by i.position desc limit 1;
end
$fn$;
`

// Tamper evidence (0002). Every event carries `hash`, chained to the previous event of its stream:
//   hash = sha256(prev_hash || field(event_id) || field(stream_name) || field(stream_revision)
//                 || field(type) || field(schema_version) || field(data) || field(metadata)
//                 || field(recorded_at) || field(position) || field(tx_id))
// where prev_hash is the hash of revision - 1 of the same stream (no bytes for revision 0), and
// field(v) is the UTF-8 bytes of v's text form (uuid::text, bigint::text, jsonb::text; recorded_at
// as whole epoch microseconds; tx_id::text) preceded by their length as a 4-byte big-endian
// integer. `prev_hash` is kept too, so a verifier can tell an altered event (its own hash no longer
// matches) from a rewritten predecessor (the link no longer matches). The verifier in
// src/adapters/eventstore/chain.ts recomputes the same bytes; change both together, or never. (0008
// computes the same bytes from a smaller expression.)
const createChainHash = (s: string): string => `
create function "${s}".chain_field(v text) returns bytea
language sql stable parallel safe strict as $fn$
  select int4send(octet_length(convert_to(v, 'UTF8'))) || convert_to(v, 'UTF8')
$fn$;

create function "${s}".event_chain_hash(
  p_prev bytea, p_event_id uuid, p_stream_name text, p_stream_revision bigint, p_type text, p_schema_version integer,
  p_data jsonb, p_metadata jsonb, p_recorded_at timestamptz, p_position bigint, p_tx_id xid8
) returns bytea
language sql stable parallel safe as $fn$
  select sha256(
    coalesce(p_prev, ''::bytea)
    || "${s}".chain_field(p_event_id::text)
    || "${s}".chain_field(p_stream_name)
    || "${s}".chain_field(p_stream_revision::text)
    || "${s}".chain_field(p_type)
    || "${s}".chain_field(p_schema_version::text)
    || "${s}".chain_field(p_data::text)
    || "${s}".chain_field(p_metadata::text)
    || "${s}".chain_field(((extract(epoch from p_recorded_at) * 1000000)::bigint)::text)
    || "${s}".chain_field(p_position::text)
    || "${s}".chain_field(p_tx_id::text))
$fn$;
`

// Existing events get their hashes in stream order, before the triggers exist. Adding the columns
// takes the table's exclusive lock first, so no append runs until the migration commits. A stream
// that was already missing events is chained over what is there; `satang audit verify` reports the gap.
const backfillChain = (s: string): string => `
alter table "${s}".events add column prev_hash bytea, add column hash bytea;

do $do$
declare
  r record;
  v_stream text;
  v_prev bytea;
  v_hash bytea;
  v_tx xid8[] := '{}';
  v_pos bigint[] := '{}';
  v_prevs bytea[] := '{}';
  v_hashes bytea[] := '{}';
begin
  for r in
    select e.tx_id, e.position, e.stream_name, e.stream_revision, e.event_id, e.type, e.schema_version, e.data, e.metadata, e.recorded_at
      from "${s}".events e order by e.stream_name, e.stream_revision
  loop
    if v_stream is distinct from r.stream_name then
      v_stream := r.stream_name;
      v_prev := null;
    end if;
    v_hash := "${s}".event_chain_hash(v_prev, r.event_id, r.stream_name, r.stream_revision, r.type, r.schema_version,
                                      r.data, r.metadata, r.recorded_at, r.position, r.tx_id);
    v_tx := array_append(v_tx, r.tx_id);
    v_pos := array_append(v_pos, r.position);
    v_prevs := array_append(v_prevs, v_prev);
    v_hashes := array_append(v_hashes, v_hash);
    v_prev := v_hash;
    if cardinality(v_pos) >= 10000 then
      update "${s}".events e set prev_hash = u.prev_hash, hash = u.hash
        from unnest(v_tx, v_pos, v_prevs, v_hashes) as u(tx_id, position, prev_hash, hash)
       where e.tx_id = u.tx_id and e.position = u.position;
      v_tx := '{}'; v_pos := '{}'; v_prevs := '{}'; v_hashes := '{}';
    end if;
  end loop;
  update "${s}".events e set prev_hash = u.prev_hash, hash = u.hash
    from unnest(v_tx, v_pos, v_prevs, v_hashes) as u(tx_id, position, prev_hash, hash)
   where e.tx_id = u.tx_id and e.position = u.position;
end
$do$;

alter table "${s}".events
  alter column hash set not null,
  add constraint events_hash_check check (octet_length(hash) = 32),
  add constraint events_prev_hash_check check (prev_hash is null or octet_length(prev_hash) = 32);
comment on column "${s}".events.hash is 'sha256 of prev_hash and this event''s columns (see event_chain_hash); set by the events_chain trigger';
comment on column "${s}".events.prev_hash is 'hash of the previous event of the stream (null for revision 0)';
`

// Set by a BEFORE INSERT row trigger, so no writer can skip or forge it. A row-level BEFORE trigger
// sees the rows its own statement inserted before it (the batch inserts run in revision order), so
// a batch chains within itself. An event whose previous revision is not there is refused: the
// chain never has a broken link.
const createChainTrigger = (s: string): string => `
create function "${s}".events_chain() returns trigger
language plpgsql volatile as $fn$
declare
  v_prev bytea;
begin
  if new.stream_revision > 0 then
    select e.hash into v_prev from "${s}".events e
     where e.stream_name = new.stream_name and e.stream_revision = new.stream_revision - 1;
    if v_prev is null then
      raise exception 'satang event log: cannot append % revision %: revision % of that stream is not stored, and every event is chained to the previous one',
        new.stream_name, new.stream_revision, new.stream_revision - 1
        using errcode = 'integrity_constraint_violation';
    end if;
  end if;
  new.prev_hash := v_prev;
  new.hash := "${s}".event_chain_hash(v_prev, new.event_id, new.stream_name, new.stream_revision, new.type, new.schema_version,
                                      new.data, new.metadata, new.recorded_at, new.position, new.tx_id);
  return new;
end
$fn$;

create trigger events_chain before insert on "${s}".events for each row execute function "${s}".events_chain();
`

// The log is append-only: UPDATE and DELETE (row triggers) and TRUNCATE (a statement trigger) are
// refused, whoever asks. Created after the backfill, which is the only update the table ever gets.
const createAppendOnly = (s: string): string => `
create function "${s}".events_refuse_change() returns trigger
language plpgsql as $fn$
begin
  raise exception 'satang event log is append-only: % refused on %.%', tg_op, tg_table_schema, tg_table_name
    using errcode = 'insufficient_privilege',
          hint = 'Events are never changed or removed: record a new event that corrects or supersedes the old one.';
end
$fn$;

create trigger events_append_only before update or delete on "${s}".events for each row execute function "${s}".events_refuse_change();
create trigger events_no_truncate before truncate on "${s}".events for each statement execute function "${s}".events_refuse_change();
comment on table "${s}".events is 'satang event log: append-only (UPDATE, DELETE and TRUNCATE refused by triggers), each event hash-chained to the previous one of its stream; global order is (tx_id, position); read only below pg_snapshot_xmin(pg_current_snapshot())';
`

// Anchors (0003): signed statements of the log's extent, written by the scheduler and at every
// reconciliation run (src/adapters/eventstore/anchors.ts). `heads_digest` is the digest of every
// stream's head as of `position` (the same digest `satang audit verify` prints), `anchor_heads` the
// heads that changed since the previous anchor (folded, they give every head; their digest is signed
// too), `prev_signature` chains each anchor to the one before. Insert-only, like the events.
const createAnchors = (s: string): string => `
create table "${s}".anchors (
  seq             bigint      primary key check (seq > 0),
  created_at      timestamptz not null,
  reason          text        not null,
  tx_id           xid8,
  position        bigint,
  events          bigint      not null check (events >= 0),
  streams         bigint      not null check (streams >= 0),
  heads_digest    bytea       not null check (octet_length(heads_digest) = 32),
  changes_digest  bytea       not null check (octet_length(changes_digest) = 32),
  changed_streams bigint      not null check (changed_streams >= 0),
  prev_signature  bytea,
  key_id          text        not null,
  signature       bytea       not null
);
create table "${s}".anchor_heads (
  seq             bigint      not null references "${s}".anchors (seq),
  stream_name     text        collate "C" not null,
  stream_revision bigint      not null,
  hash            bytea       not null,
  primary key (seq, stream_name)
);
create index anchor_heads_stream_idx on "${s}".anchor_heads (stream_name, seq desc);
create trigger anchors_append_only before update or delete on "${s}".anchors for each row execute function "${s}".events_refuse_change();
create trigger anchors_no_truncate before truncate on "${s}".anchors for each statement execute function "${s}".events_refuse_change();
create trigger anchor_heads_append_only before update or delete on "${s}".anchor_heads for each row execute function "${s}".events_refuse_change();
create trigger anchor_heads_no_truncate before truncate on "${s}".anchor_heads for each statement execute function "${s}".events_refuse_change();
comment on table "${s}".anchors is 'satang anchors: signed (Ed25519) global position and stream heads digest of the event log; insert-only';
`

/** register_append()'s refusal of a transaction that already has an id (0004, and again in 0007). */
const refuseUnregistered = (s: string): string => `  if pg_current_xact_id_if_assigned() is not null then
    raise exception 'satang event log: transaction % wrote before it registered as an appender, so readers could pass over its events', pg_current_xact_id_if_assigned()
      using errcode = 'object_not_in_prerequisite_state',
            hint = 'Call select "${s}".register_append() as the first statement of a transaction that appends events, before it writes anything (docs/architecture.md "The horizon").';
  end if;
`

// The horizon (0004): readers of the global order wait only for transactions registered as
// appenders (src/adapters/eventstore/postgres-horizon.ts says why that is enough). A transaction
// registers by taking (HORIZON_LOCKS, HORIZON_APPENDERS) shared for its duration, and must do so
// before it has a transaction id: the statement trigger does it for every INSERT into the events
// table (a statement trigger fires before the statement's first row, so before the id it assigns),
// whichever code runs it; a transaction that wrote something else first must call register_append()
// first, or its insert is refused. The setting records that the lock was taken while the
// transaction had no id (a rolled back savepoint undoes both).
const createHorizon = (s: string): string => `
create function "${s}".register_append() returns void
language plpgsql volatile as $fn$
begin
  if current_setting('satang.horizon_registered', true) = 'on' then
    return;
  end if;
${refuseUnregistered(s)}  perform pg_advisory_xact_lock_shared(${String(HORIZON_LOCKS)}, ${String(HORIZON_APPENDERS)});
  perform set_config('satang.horizon_registered', 'on', true);
end
$fn$;

-- register_append() inlined: this runs at every append.
create function "${s}".events_register() returns trigger
language plpgsql volatile as $fn$
begin
  if pg_current_xact_id_if_assigned() is null then
    perform pg_advisory_xact_lock_shared(${String(HORIZON_LOCKS)}, ${String(HORIZON_APPENDERS)});
    perform set_config('satang.horizon_registered', 'on', true);
  elsif current_setting('satang.horizon_registered', true) is distinct from 'on' then
    perform "${s}".register_append(); -- raises, naming the rule
  end if;
  return null;
end
$fn$;

create trigger events_register before insert on "${s}".events for each statement execute function "${s}".events_register();
comment on table "${s}".events is 'satang event log: append-only (UPDATE, DELETE and TRUNCATE refused by triggers), each event hash-chained to the previous one of its stream; global order is (tx_id, position); appenders register (register_append, the events_register trigger) and readers read below the oldest registered appender still running';
`

// Live reads in one round trip (0005): a subscriber woken by a notification takes the horizon and
// reads below it in one call instead of two. Correct for the same reason as two calls
// (src/adapters/eventstore/postgres-horizon.ts): the function is volatile, so under READ COMMITTED
// each of its statements takes a snapshot of its own, and the read's snapshot (S2) is taken after
// the horizon statement (S1 and its pg_locks read) has finished. The first row is a header: the
// horizon in o_tx_id and the number of appenders it waits for in o_position, every other column
// null. With a pattern, every row up to the limit is returned (so the cursor moves past other
// streams), with its payload only when its stream name matches.
const createReadLive = (s: string, events?: string, create: 'create' | 'create or replace' = 'create'): string => `
${create} function "${s}".read_live(p_tx xid8, p_position bigint, p_limit integer, p_pattern text)
returns table (o_tx_id text, o_position bigint, o_matches boolean, o_stream_name text, o_stream_revision bigint, o_event_id uuid,
               o_type text, o_schema_version integer, o_data jsonb, o_metadata jsonb, o_recorded_ms bigint)
language plpgsql volatile as $fn$
declare
  v_below text;
  v_waiting integer;
begin
  select h.below, h.waiting into v_below, v_waiting from (${horizonSql(events)}) h(below, waiting);
  o_tx_id := v_below;
  o_position := v_waiting;
  return next;
  return query
    select e.tx_id::text, e.position, f.m, e.stream_name, e.stream_revision, e.event_id, e.type, e.schema_version,
           case when f.m then e.data end, case when f.m then e.metadata end, (extract(epoch from e.recorded_at) * 1000)::bigint
      from "${s}".events e, lateral (select coalesce(e.stream_name like p_pattern, true) as m) f
     where (e.tx_id, e.position) > (p_tx, p_position)
       and e.tx_id < v_below::xid8
     order by e.tx_id, e.position
     limit p_limit;
end
$fn$;
`

// Announcements (0006): an append made in one statement of its own transaction may, instead of a bare
// wake-up, notify its own events together with what a subscriber needs to deliver them without a read
// (src/adapters/eventstore/announcements.ts says why that is safe): the transaction's id, a snapshot
// taken after its insert (its xmax and the ids running then that are older than this one), and the
// last event older than it visible then. The payload is signed with a key of this installation
// (HMAC-SHA-256, written here as two SHA-256 over the key's inner and outer pads): any role that can
// connect may NOTIFY on the channel, and only a payload carrying this key's signature is believed. The
// key is readable by the event store's owner and the service role only, and the function, which reads
// it, is not executable by others. A payload too large for NOTIFY (8000 bytes) goes out as a bare
// wake-up: subscribers read those events as before.
const createAnnounce = (s: string): string => `
create table "${s}".announce_key (
  only_row boolean primary key default true check (only_row),
  key      bytea not null check (length(key) = 32),
  ipad     bytea not null check (length(ipad) = 64),
  opad     bytea not null check (length(opad) = 64)
);
revoke all on "${s}".announce_key from public;
comment on table "${s}".announce_key is 'satang event log: the key that signs announcements (0006); generated per installation, never derived from configuration';

create function "${s}".announce(p_channel text) returns boolean
language plpgsql volatile as $fn$
declare
  v_tx xid8 := pg_current_xact_id();
  v_snap pg_snapshot;
  v_below json;
  v_body text;
  v_ipad bytea;
  v_opad bytea;
begin
  -- A statement of its own: its snapshot is taken after this transaction's insert.
  select pg_current_snapshot(),
         (select json_build_array(e.tx_id::text, e.position::text) from "${s}".events e
           where e.tx_id < v_tx order by e.tx_id desc, e.position desc limit 1)
    into v_snap, v_below;
  select json_build_object(
           't', v_tx::text,
           'x', pg_snapshot_xmax(v_snap)::text,
           'r', coalesce((select json_agg(x::text) from pg_snapshot_xip(v_snap) x where x < v_tx), '[]'::json),
           'm', v_below,
           'e', coalesce((select json_agg(json_build_array(e.position::text, e.stream_name, e.stream_revision::text, e.event_id, e.type,
                                                           e.schema_version, e.data, e.metadata, ((extract(epoch from e.recorded_at) * 1000)::bigint)::text)
                                          order by e.position)
                            from "${s}".events e where e.tx_id = v_tx), '[]'::json))::text
    into v_body;
  if octet_length(v_body) > 7900 then
    v_body := json_build_object('t', v_tx::text)::text;
  end if;
  select k.ipad, k.opad into strict v_ipad, v_opad from "${s}".announce_key k;
  perform pg_notify(p_channel, encode(sha256(v_opad || sha256(v_ipad || convert_to(v_body, 'UTF8'))), 'hex') || v_body);
  return true;
end
$fn$;
revoke all on function "${s}".announce(text) from public;
`

/** 0007's registration, in register_append() and in the trigger alike: the lock, then the setting. */
const takeRegistration = (indent: string): string => `${indent}if not pg_try_advisory_xact_lock_shared(${String(HORIZON_LOCKS)}, ${String(HORIZON_APPENDERS)}) then
${indent}  perform pg_advisory_xact_lock_shared(${String(HORIZON_LOCKS)}, ${String(HORIZON_APPENDERS)});
${indent}end if;
${indent}v_set := set_config('satang.horizon_registered', 'on', true);
`

// The registration without the executor (0007): the same rule as 0004's, written with simple
// expressions only (an IF's condition, an assignment), which PL/pgSQL evaluates directly, where each
// PERFORM starts and ends an executor through SPI: the trigger's own time fell from 10.4–10.8 to
// 7.5–8.1 µs per call (docs/development.md "Appends against the code before issue 24"). A shared lock
// is refused at once only while someone holds or awaits it exclusively; then the append waits for it
// as before.
const registerWithoutExecutor = (s: string): string => `
create or replace function "${s}".register_append() returns void
language plpgsql volatile as $fn$
declare
  v_set text;
begin
  if current_setting('satang.horizon_registered', true) = 'on' then
    return;
  end if;
${refuseUnregistered(s)}${takeRegistration('  ')}end
$fn$;

create or replace function "${s}".events_register() returns trigger
language plpgsql volatile as $fn$
declare
  v_set text;
begin
  if pg_current_xact_id_if_assigned() is null then
${takeRegistration('    ')}  elsif current_setting('satang.horizon_registered', true) is distinct from 'on' then
    perform "${s}".register_append(); -- raises, naming the rule
  end if;
  return null;
end
$fn$;
`

// The chain's hash in one array (0008): the same bytes as 0002's `event_chain_hash`, from an
// expression about a third its size. PostgreSQL builds a PL/pgSQL expression's state again in every
// transaction, and every append is a transaction of its own, so each node of the inlined expression
// was paid at every append: 0002's ten `chain_field` calls (five functions and a cast each, the
// field's text converted twice) cost 12.7 µs per evaluation in a transaction of its own, this one 6.8
// (docs/development.md "The chain's hash in one array"). The binary form of a one-dimensional bytea
// array without nulls (array_send) is a 20-byte header (dimensions, null flag, element type, length,
// lower bound) and then each element as its length in 4 big-endian bytes and its bytes: after the
// header, exactly field(v) of each element in order. Every field is a NOT NULL column, so no element
// is null in a stored row (a null one fails the insert at its NOT NULL check either way). 0002's
// `chain_field` is called by nothing else and goes.
const chainHashInOneArray = (s: string): string => `
create or replace function "${s}".event_chain_hash(
  p_prev bytea, p_event_id uuid, p_stream_name text, p_stream_revision bigint, p_type text, p_schema_version integer,
  p_data jsonb, p_metadata jsonb, p_recorded_at timestamptz, p_position bigint, p_tx_id xid8
) returns bytea
language sql stable parallel safe as $fn$
  select sha256(coalesce(p_prev, ''::bytea) || substr(array_send(array[
    convert_to(p_event_id::text, 'UTF8'),
    convert_to(p_stream_name, 'UTF8'),
    convert_to(p_stream_revision::text, 'UTF8'),
    convert_to(p_type, 'UTF8'),
    convert_to(p_schema_version::text, 'UTF8'),
    convert_to(p_data::text, 'UTF8'),
    convert_to(p_metadata::text, 'UTF8'),
    convert_to(((extract(epoch from p_recorded_at) * 1000000)::bigint)::text, 'UTF8'),
    convert_to(p_position::text, 'UTF8'),
    convert_to(p_tx_id::text, 'UTF8')]), 21))
$fn$;

drop function "${s}".chain_field(text);
`

// The registration by the insert's own lock (0009, 0010). Every appender took an advisory lock shared
// in the events table's statement trigger (0004, 0007): a PL/pgSQL call, a lock-table entry made and
// freed in a partition every appender shares, and a setting, at every append: 6 % of the appends per
// second with 8 writers (docs/development.md "The registration by the insert's own lock"). An INSERT
// already holds a lock that says the same: the events table's RowExclusiveLock, taken while its
// statement is prepared, before its first row gives the transaction an id, and held to the end of the
// transaction (a fast-path lock: no shared lock-table entry). So 0009 lets readers accept it beside
// the advisory lock (read_live here, this release's processes in postgres-horizon.ts), and 0010 makes
// it the registration. A transaction that had an id before the statement (it wrote before) is
// registered only if it registered then: register_append() took the table's lock and set the
// setting, or an earlier INSERT of its own registered it (its events are there, with its id). The
// trigger's WHEN keeps every other append out of PL/pgSQL. Readers must accept the insert's lock
// before appenders rely on it alone, or they would pass over their events: 0010 is applied at once
// to a new installation and on request to an upgraded one, when no process of an earlier release
// (reading with the advisory lock alone) can still be at work. An operator pauses appends with the
// table's SHARE lock (docs/operations.md "Event store operations").
const registerByInsertLock = (s: string): string => `
create or replace function "${s}".register_append() returns void
language plpgsql volatile as $fn$
begin
  if current_setting('satang.horizon_registered', true) = 'on' then
    return;
  end if;
${refuseUnregistered(s)}  lock table "${s}".events in row exclusive mode;
  perform set_config('satang.horizon_registered', 'on', true);
end
$fn$;

-- Called only for a statement of a transaction that had an id before it (the trigger's WHEN).
create or replace function "${s}".events_register() returns trigger
language plpgsql volatile as $fn$
begin
  if current_setting('satang.horizon_registered', true) is distinct from 'on'
     and not exists (select 1 from "${s}".events e where e.tx_id = pg_current_xact_id()) then
    perform "${s}".register_append(); -- raises, naming the rule
  end if;
  return null;
end
$fn$;

drop trigger events_register on "${s}".events;
create trigger events_register before insert on "${s}".events for each statement
  when (pg_current_xact_id_if_assigned() is not null) execute function "${s}".events_register();
`

/** The announcement key of a new installation, and its HMAC pads (RFC 2104), the same ones its subscribers check with. */
const announceKey = (): { key: Buffer; ipad: Buffer; opad: Buffer } => {
  const key = randomBytes(32)
  const { ipad, opad } = announcementKeyOf(key)
  return { key, ipad, opad }
}

const migrations = (schema: string): ReadonlyArray<Migration> => [
  {
    name: '0001_events',
    up: async (db) => {
      await db.raw(createEvents(schema))
      await db.raw(createAppendQueued(schema))
    },
  },
  {
    name: '0002_tamper_evidence',
    up: async (db) => {
      await db.raw(createChainHash(schema))
      await db.raw(backfillChain(schema))
      await db.raw(createChainTrigger(schema))
      await db.raw(createAppendOnly(schema))
    },
  },
  { name: '0003_anchors', up: async (db) => void (await db.raw(createAnchors(schema))) },
  { name: '0004_horizon', up: async (db) => void (await db.raw(createHorizon(schema))) },
  { name: '0005_read_live', up: async (db) => void (await db.raw(createReadLive(schema))) },
  { name: '0006_announce', up: async (db) => void (await db.raw(createAnnounce(schema))) },
  { name: '0007_register_without_executor', up: async (db) => void (await db.raw(registerWithoutExecutor(schema))) },
  { name: '0008_chain_hash_in_one_array', up: async (db) => void (await db.raw(chainHashInOneArray(schema))) },
  { name: '0009_read_live_insert_lock', up: async (db) => void (await db.raw(createReadLive(schema, eventsTable(schema), 'create or replace'))) },
  { name: '0010_register_by_insert_lock', up: async (db) => void (await db.raw(registerByInsertLock(schema))), afterEveryProcessUpgraded: true },
]

/** The migrations in order, for tests that make a log as an earlier release left it (apply a prefix, record its names). */
export const eventStoreMigrations = migrations

const AppliedMigrations = t.array(t.type({ name: t.string }))
const Horizon = t.array(t.type({ stored: t.union([t.string, t.null]), current: t.string }))

/**
 * The global order relies on new transactions getting larger ids than every stored event's. A
 * logical dump restored into another cluster breaks that (the stored ids come from the old
 * cluster); appending then would put new events before old ones and subscribers would miss them.
 */
const assertTransactionIdsAhead = async (trx: Knex.Transaction, schema: string): Promise<void> => {
  const rows = Horizon.decode(
    (await trx.raw(`select (select max(tx_id) from "${schema}".events)::text as stored, pg_current_xact_id()::text as current`)).rows,
  )
  if (E.isLeft(rows)) throw new Error('unexpected answer to the transaction id check')
  const [row] = rows.right
  if (row?.stored != null && BigInt(row.stored) >= BigInt(row.current)) {
    throw new Error(
      `${schema}.events holds transaction ids up to ${row.stored} but this cluster is at ${row.current}: ` +
        'the data looks restored from a logical dump. Advance the transaction id epoch (docs/operations.md "Event store operations") before appending.',
    )
  }
}

/** What a migration run did: the migrations it applied, and those that wait until every process is upgraded. */
export type EventStoreMigrated = { readonly applied: ReadonlyArray<string>; readonly waiting: ReadonlyArray<string> }

/** What to tell the operator about the migrations that wait (`satang up`'s log, `satang migrate`'s output). */
export const waitingNotice = (waiting: ReadonlyArray<string>): string =>
  `event store: ${waiting.join(', ')} waits until every satang process reading this log runs this release; then run satang migrate --every-process-upgraded`

/**
 * Creates or upgrades the event store's schema: plain SQL migrations applied in order inside one
 * transaction and recorded in `<schema>.eventstore_migrations`. Idempotent, and safe to run from
 * several processes at once (an advisory lock orders them; the second finds nothing to do).
 */
export const migrateEventStore = (
  deps: { readonly db: Knex; readonly log: Logger },
  config: {
    readonly schema: string
    readonly serviceRole?: string
    /** Every process reading this log runs this release or a later one: apply the migrations that wait for that (0010). */
    readonly everyProcessUpgraded?: boolean
  },
): TE.TaskEither<EventStoreFailure, EventStoreMigrated> => {
  const schema = config.schema
  const service = config.serviceRole
  const log = deps.log.child({ component: 'eventstore', schema })
  if (!isValidSchemaName(schema)) {
    return TE.left({ _tag: 'EventStoreFailure', operation: 'migrate', retriable: false, cause: new Error(`invalid schema name ${JSON.stringify(schema)}`) })
  }
  if (service !== undefined && !isValidRoleName(service)) {
    return TE.left({ _tag: 'EventStoreFailure', operation: 'migrate', retriable: false, cause: new Error(`invalid service role name ${JSON.stringify(service)}`) })
  }
  return TE.tryCatch(
    async () => {
      const migrated = await deps.db.transaction(async (trx): Promise<EventStoreMigrated> => {
        await trx.raw('select pg_advisory_xact_lock(?, ?)', [...MIGRATION_LOCK])
        await trx.raw(`create schema if not exists "${schema}"`)
        await trx.raw(`create table if not exists "${schema}".eventstore_migrations (name text primary key, applied_at timestamptz not null default now())`)
        const rows = AppliedMigrations.decode(await trx.withSchema(schema).from('eventstore_migrations').select('name'))
        if (E.isLeft(rows)) throw new Error('unexpected rows in eventstore_migrations')
        const done = new Set(rows.right.map((r) => r.name))
        // A new installation: nothing of an earlier release can be reading it.
        const fresh = done.size === 0
        const pending = migrations(schema).filter((m) => !done.has(m.name))
        const waiting = pending.filter((m) => m.afterEveryProcessUpgraded === true && !fresh && config.everyProcessUpgraded !== true)
        const applying = pending.filter((m) => !waiting.includes(m))
        for (const m of applying) {
          await m.up(trx)
          await trx.withSchema(schema).into('eventstore_migrations').insert({ name: m.name })
        }
        await assertTransactionIdsAhead(trx, schema)
        // A new key when there is none: made by 0006, or deleted by an operator to rotate it
        // (docs/operations.md "Event store operations").
        const k = announceKey()
        await trx.raw(`insert into "${schema}".announce_key (key, ipad, opad) select ?, ?, ? where not exists (select 1 from "${schema}".announce_key)`, [k.key, k.ipad, k.opad])
        // The service role reads and appends, nothing more (see src/platform/postgres/roles.ts).
        if (service !== undefined) await trx.raw(grantEventStoreToServiceSql(schema, service))
        return { applied: applying.map((m) => m.name), waiting: waiting.map((m) => m.name) }
      })
      if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'event store migrated')
      if (migrated.waiting.length > 0) {
        log.info(
          { waiting: migrated.waiting },
          `${waitingNotice(migrated.waiting)} (docs/operations.md "Event store operations")`,
        )
      }
      return migrated
    },
    (cause): EventStoreFailure => ({ _tag: 'EventStoreFailure', operation: 'migrate', retriable: isRetriablePgError(cause), cause }),
  )
}
