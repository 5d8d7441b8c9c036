import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import * as t from 'io-ts'
import type { Knex } from 'knex'
import type { EventStoreFailure } from '../../../domain/event-store.ts'
import type { Logger } from '../../../logger.ts'
import { isRetriablePgError } from '../errors.ts'

/** First key of satang's `pg_advisory_xact_lock(int4, int4)` locks; the second is `hashtext(stream)` for appends. */
export const LOCK_NAMESPACE = 1_515_847_681
// The lock that serialises concurrent migrations of one database.
const MIGRATION_LOCK = [LOCK_NAMESPACE, 1] as const

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/

/** Schema names are interpolated into SQL, so only plain lowercase identifiers are accepted. */
export const isValidSchemaName = (schema: string): boolean => SCHEMA_NAME.test(schema)

type Migration = { readonly name: string; readonly up: (db: Knex) => Promise<void> }

// The events table is append-only: the adapter never updates or deletes a row (a later migration
// adds a trigger that enforces it). Columns and the (tx_id, position) method are described in
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
  perform pg_advisory_xact_lock(${String(LOCK_NAMESPACE)}, hashtext(p_stream));
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

const migrations = (schema: string): ReadonlyArray<Migration> => [
  {
    name: '0001_events',
    up: async (db) => {
      await db.raw(createEvents(schema))
      await db.raw(createAppendQueued(schema))
    },
  },
]

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
        'the data looks restored from a logical dump. Advance the transaction id epoch (README, event store operations) before appending.',
    )
  }
}

/**
 * Creates or upgrades the event store's schema: plain SQL migrations applied in order inside one
 * transaction and recorded in `<schema>.eventstore_migrations`. Idempotent, and safe to run from
 * several processes at once (an advisory lock orders them; the second finds nothing to do).
 */
export const migrateEventStore = (deps: { readonly db: Knex; readonly log: Logger }, config: { readonly schema: string }): TE.TaskEither<EventStoreFailure, void> => {
  const schema = config.schema
  const log = deps.log.child({ component: 'eventstore', schema })
  if (!isValidSchemaName(schema)) {
    return TE.left({ _tag: 'EventStoreFailure', operation: 'migrate', retriable: false, cause: new Error(`invalid schema name ${JSON.stringify(schema)}`) })
  }
  return TE.tryCatch(
    async () => {
      const applied = await deps.db.transaction(async (trx) => {
        await trx.raw('select pg_advisory_xact_lock(?, ?)', [...MIGRATION_LOCK])
        await trx.raw(`create schema if not exists "${schema}"`)
        await trx.raw(`create table if not exists "${schema}".eventstore_migrations (name text primary key, applied_at timestamptz not null default now())`)
        const rows = AppliedMigrations.decode(await trx.withSchema(schema).from('eventstore_migrations').select('name'))
        if (E.isLeft(rows)) throw new Error('unexpected rows in eventstore_migrations')
        const done = new Set(rows.right.map((r) => r.name))
        const pending = migrations(schema).filter((m) => !done.has(m.name))
        for (const m of pending) {
          await m.up(trx)
          await trx.withSchema(schema).into('eventstore_migrations').insert({ name: m.name })
        }
        await assertTransactionIdsAhead(trx, schema)
        return pending.map((m) => m.name)
      })
      if (applied.length > 0) log.info({ applied }, 'event store migrated')
    },
    (cause): EventStoreFailure => ({ _tag: 'EventStoreFailure', operation: 'migrate', retriable: isRetriablePgError(cause), cause }),
  )
}
