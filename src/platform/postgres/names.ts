/**
 * Names satang uses inside one PostgreSQL database, shared by the event store's adapter and the read
 * models: the advisory-lock namespaces and the rule for schema names.
 *
 * Advisory locks take two int4 keys, `(namespace, resource)`. Each kind of lock has a namespace of its
 * own, so that a stream whose name hashes to a small number can never contend with a service's lock.
 */

/** Appends serialise per stream on `(STREAM_LOCKS, hashtext(stream))` (transaction locks; see the event store migration). */
export const STREAM_LOCKS = 1_515_847_681

/**
 * The appenders' registration of migrations 0004 and 0007: every transaction that appended events
 * held `(HORIZON_LOCKS, HORIZON_APPENDERS)` in shared mode (a transaction lock taken before the
 * transaction had an id, by the events table's statement trigger or `register_append()`). Since
 * 0010 the insert's own lock on the events table is the registration; readers still accept this one,
 * for appenders of an earlier release during an upgrade (see
 * src/adapters/eventstore/postgres-horizon.ts). One pair per database, whatever the schema: it must
 * not change when a schema is renamed.
 */
export const HORIZON_LOCKS = 1_515_847_686
export const HORIZON_APPENDERS = 1

/** The event log's table in `schema`, quoted as statements name it. */
export const eventsTable = (schema: string): string => `"${schema}".events`

/**
 * A short tag of a schema's name (FNV-1a, base 36), for the names of prepared statements and
 * sessions that must differ between schemas of one database.
 */
export const schemaTag = (schema: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < schema.length; i++) h = Math.imul(h ^ schema.charCodeAt(i), 0x01000193) >>> 0
  return h.toString(36)
}

/** Locks of satang's services: `(SERVICE_LOCKS, SERVICE_LOCK.…)`. */
export const SERVICE_LOCKS = 1_515_847_682

/** The second key of each service lock. */
export const SERVICE_LOCK = {
  /** Serialises concurrent migrations of the event store (transaction lock). */
  eventStoreMigrations: 1,
  /** Serialises concurrent migrations of the read models (transaction lock). */
  readModelMigrations: 2,
  /** Held (session lock) by the one relay that publishes. */
  relay: 3,
  /** Held (session lock) by the one reconciliation scheduler that acts. */
  scheduler: 4,
  /** Serialises anchor writers (transaction lock). */
  anchors: 5,
} as const

/** A rebuild of one projection holds `(REBUILD_LOCKS, hashtext('rebuild:<schema>:<projection>'))`. */
export const REBUILD_LOCKS = 1_515_847_683

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/

/** Schema names are interpolated into SQL, so only plain lowercase identifiers are accepted. */
export const isValidSchemaName = (schema: string): boolean => SCHEMA_NAME.test(schema)

/** A reconciliation run holds `(RECONCILE_LOCKS, hashtext(reconcileLockResource(merchant)))`: one run at a time per merchant. */
export const RECONCILE_LOCKS = 1_515_847_684

/** The resource of a reconciliation run's session lock. */
export const reconcileLockResource = (merchantId: string): string => `reconcile:${merchantId}`

/**
 * Who acts on one order's create whose outcome is not recorded (its sender, or one resolver in any
 * process) holds `(RESOLUTION_LOCKS, hashtext(stream))`, a session lock on the process's lock session.
 */
export const RESOLUTION_LOCKS = 1_515_847_685
