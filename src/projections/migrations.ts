import type { Knex } from 'knex'
import type { Pool } from 'pg'
import { addRelayHeartbeatColumn, createRelayCheckpointsTable } from '../jobs/relay/relay-checkpoint.ts'
import type { Logger } from '../logger.ts'
import { createConsoleSessionsEndedTable } from '../platform/postgres/console-sessions.ts'
import { createConsoleUsersTable } from '../platform/postgres/console-users.ts'
import { isValidSchemaName, SERVICE_LOCK, SERVICE_LOCKS } from '../platform/postgres/names.ts'
import { makeKnex } from '../platform/postgres/pool.ts'
import { CHECKPOINTS_TABLE, createCheckpointsTable } from './checkpoints.ts'
import { openBreaksOrderIndex } from './reconciliation/projection.ts'
import { qualified, type Projection } from './types.ts'

/**
 * The read models' schema, as knex migrations (`<schema>.knex_migrations`): the checkpoints table,
 * then one migration per projection and version that creates its tables and views and its checkpoint
 * at the start of the log, and the Kafka relay's checkpoints table. A projection whose tables change gets a new migration; the usual one drops
 * its tables and resets the checkpoint (the projector then rebuilds it), or, to keep serving while it
 * rebuilds, leaves that to `satang project --rebuild NAME`.
 */

type ReadModelMigration = { readonly name: string; readonly up: (db: Knex) => Promise<void> }

// The lock that serialises read-model migrations of one database (the event store's is [ns, 1]).
const MIGRATION_LOCK = [SERVICE_LOCKS, SERVICE_LOCK.readModelMigrations] as const

const projectionMigration = (schema: string, p: Projection): ReadModelMigration => ({
  name: `projection_${p.name}_v1`,
  up: async (db) => {
    for (const sql of p.createTables(schema)) await db.raw(sql)
    for (const sql of p.createViews?.(schema) ?? []) await db.raw(sql)
    await db.raw(`insert into ${qualified(schema, CHECKPOINTS_TABLE)} (name) values (?) on conflict (name) do nothing`, [p.name])
  },
})

export const readModelMigrations = (schema: string, projections: ReadonlyArray<Projection>): ReadonlyArray<ReadModelMigration> => [
  { name: '0001_projection_checkpoints', up: async (db) => void (await db.raw(createCheckpointsTable(schema))) },
  ...projections.map((p) => projectionMigration(schema, p)),
  // The Kafka relay's checkpoints live beside the projections' (its SQL is the relay's: jobs/relay/relay-checkpoint.ts).
  { name: 'relay_checkpoints_v1', up: async (db) => void (await db.raw(createRelayCheckpointsTable(schema))) },
  // The ledger with rule versions and closed periods: its tables change, so they are created again and
  // rebuilt from the log (no close can exist before this migration).
  ...ledgerV2Migration(schema, projections),
  // An index added to a table that exists already (created with the table from then on).
  ...(projections.some((p) => p.name === 'reconciliation') ? [{ name: 'reconciliation_breaks_open_order_idx_v1', up: async (db: Knex) => void (await db.raw(openBreaksOrderIndex(schema))) }] : []),
  // Console sessions signed out, refused by every api process (SQL: platform/postgres/console-sessions.ts).
  { name: 'console_sessions_ended_v1', up: async (db) => void (await db.raw(createConsoleSessionsEndedTable(schema))) },
  // The relay's heartbeat, read by the console and satang relay --status whatever their own configuration.
  { name: 'relay_checkpoints_heartbeat_v1', up: async (db) => void (await db.raw(addRelayHeartbeatColumn(schema))) },
  // Console accounts and their password hashes, never in the log (SQL: platform/postgres/console-users.ts).
  { name: 'console_users_v1', up: async (db) => void (await db.raw(createConsoleUsersTable(schema))) },
]

const ledgerV2Migration = (schema: string, projections: ReadonlyArray<Projection>): ReadonlyArray<ReadModelMigration> => {
  const ledger = projections.find((p) => p.name === 'ledger')
  if (ledger === undefined) return []
  return [
    {
      name: 'projection_ledger_v2_rule_versions',
      up: async (db) => {
        for (const view of ledger.views ?? []) await db.raw(`drop view if exists ${qualified(schema, view)}`)
        for (const table of ledger.tables) await db.raw(`drop table if exists ${qualified(schema, table)}`)
        for (const sql of ledger.createTables(schema)) await db.raw(sql)
        for (const sql of ledger.createViews?.(schema) ?? []) await db.raw(sql)
        await db.raw(
          `update ${qualified(schema, CHECKPOINTS_TABLE)} set position = null, last_recorded_at = null, events_applied = 0, updated_at = now(),
             failed_at = null, failure = null, failure_stream = null, failure_position = null where name = ?`,
          [ledger.name],
        )
      },
    },
  ]
}

const sourceOf = (migrations: ReadonlyArray<ReadModelMigration>): Knex.MigrationSource<ReadModelMigration> => ({
  getMigrations: async () => [...migrations],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => ({ up: m.up, down: async () => Promise.reject(new Error(`${m.name}: read-model migrations are not reversed; rebuild instead`)) }),
})

/**
 * Creates or upgrades the read models in `schema`. Idempotent, and safe from several processes at
 * once (an advisory lock orders them). Returns the names of the migrations applied.
 */
export const migrateReadModels = async (deps: { readonly pool: Pool; readonly log: Logger }, config: { readonly schema: string; readonly projections: ReadonlyArray<Projection> }): Promise<ReadonlyArray<string>> => {
  const { schema } = config
  if (!isValidSchemaName(schema)) throw new Error(`invalid read-model schema name ${JSON.stringify(schema)}`)
  const lock = await deps.pool.connect()
  const knex = makeKnex(deps.pool)
  try {
    await lock.query('select pg_advisory_lock($1, $2)', [...MIGRATION_LOCK])
    await lock.query(`create schema if not exists "${schema}"`)
    const [, applied] = (await knex.migrate.latest({ migrationSource: sourceOf(readModelMigrations(schema, config.projections)), schemaName: schema, tableName: 'knex_migrations' })) as [number, string[]]
    if (applied.length > 0) deps.log.child({ component: 'read-models', schema }).info({ applied }, 'read models migrated')
    return applied
  } finally {
    await lock.query('select pg_advisory_unlock($1, $2)', [...MIGRATION_LOCK]).catch(() => undefined)
    lock.release()
    await knex.destroy().catch(() => undefined)
  }
}
