/**
 * Names satang uses inside one PostgreSQL database, shared by the event store's adapter and the read
 * models: the advisory-lock namespace and the rule for schema names.
 */

/** First key of satang's `pg_advisory_xact_lock(int4, int4)` locks; the second names the resource (1: migrations, `hashtext(stream)`: appends, …). */
export const LOCK_NAMESPACE = 1_515_847_681

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/

/** Schema names are interpolated into SQL, so only plain lowercase identifiers are accepted. */
export const isValidSchemaName = (schema: string): boolean => SCHEMA_NAME.test(schema)

/** Second key of the scheduler's session lock `(LOCK_NAMESPACE, SCHEDULER_LOCK_KEY)`: one scheduler acts per database (1 and 2 are the migrations'). */
export const SCHEDULER_LOCK_KEY = 3

/** The resource of a reconciliation run's session lock, `(LOCK_NAMESPACE, hashtext(…))`: one run at a time per merchant. */
export const reconcileLockResource = (merchantId: string): string => `reconcile:${merchantId}`
