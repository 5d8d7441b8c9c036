/**
 * Names satang uses inside one PostgreSQL database, shared by the event store's adapter and the read
 * models: the advisory-lock namespace and the rule for schema names.
 */

/**
 * First key of satang's `pg_advisory_(xact_)lock(int4, int4)` locks; the second names the resource
 * (1: event store migrations, 2: read-model migrations, 3: the Kafka relay, `hashtext(stream)`: appends, …).
 */
export const LOCK_NAMESPACE = 1_515_847_681

/** Second key of the session lock held by the one relay that publishes (`satang relay`, or inside `satang up`). */
export const RELAY_LOCK_KEY = 3

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/

/** Schema names are interpolated into SQL, so only plain lowercase identifiers are accepted. */
export const isValidSchemaName = (schema: string): boolean => SCHEMA_NAME.test(schema)
