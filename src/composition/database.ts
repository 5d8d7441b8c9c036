import * as E from 'fp-ts/lib/Either.js'
import { Client, type Pool } from 'pg'
import { makePostgresEventStore } from '../adapters/eventstore/postgres.ts'
import { describeHolder, lockDataDir, type InstanceLock } from '../adapters/os/instance-lock.ts'
import { startEmbeddedPostgres } from '../adapters/postgres/embedded.ts'
import { migrateEventStore, waitingNotice, type EventStoreMigrated } from '../adapters/postgres/migrations/eventstore.ts'
import type { EventStore } from '../application/ports/event-store.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { makeKnex, makePostgresPool } from '../platform/postgres/pool.ts'
import { connectionRoleOf, ensureSatangRoles, isValidRoleName } from '../platform/postgres/roles.ts'
import { loadOrCreateRolePasswords } from '../local-secrets.ts'
import { PROJECTIONS, READ_MODEL_SCHEMA, migrateReadModels, type ReadModels } from '../projections/index.ts'
import { ConfigurationError, DataDirInUse, StartupError, StartupFailure, dataPath } from './startup.ts'
import type * as EsdbAdapter from '../adapters/eventstore/esdb.ts'

export const EVENT_STORE_SCHEMA = 'eventstore'
export { READ_MODEL_SCHEMA }

/** Takes the data directory's lock for `command`, or fails naming the satang that holds it. */
export const lockDataDirOf = async (config: Config, log: Logger, command: string, whenHeld = ''): Promise<InstanceLock> => {
  const locked = await lockDataDir({ log }, dataPath(config), command)
  if (E.isRight(locked)) return locked.right
  const f = locked.left
  if (f._tag === 'LockFailed') throw new StartupError(`SATANG_DATA_DIR: ${f.message}`)
  throw new DataDirInUse(
    `the data directory ${dataPath(config)} is in use by ${describeHolder(f.holder)}${whenHeld}; stop that satang first, or give this one its own SATANG_DATA_DIR (lock file ${f.path})`,
  )
}

/** Where the read models and (by default) the event log live, and how it was reached. */
export type Database = {
  /** The service role's pool: what the running satang reads and writes with. */
  readonly pool: Pool
  /** The owner role's pool and the service role's name, when migrations run as another role than the service. */
  readonly owner?: { readonly pool: Pool; readonly serviceRole: string }
  /** Human description for start-up output, without credentials. */
  readonly description: string
  readonly close: () => Promise<void>
}

/** The roles embedded PostgreSQL gets (src/platform/postgres/roles.ts). */
export const EMBEDDED_OWNER_ROLE = 'satang_owner'
export const EMBEDDED_SERVICE_ROLE = 'satang_service'
const EMBEDDED_DATABASE = 'satang'

const roleUrl = (port: number, user: string, password: string): string =>
  `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${String(port)}/${EMBEDDED_DATABASE}`

const rolePasswords = async (config: Config) => {
  const passwords = await loadOrCreateRolePasswords(dataPath(config, 'postgres-roles.json'))
  if (E.isLeft(passwords)) throw new StartupError(`embedded PostgreSQL roles: ${passwords.left}`)
  return passwords.right
}

/** The service role named by a URL (its user name), for the owner's grants. */
const serviceRoleOf = (url: string): string => {
  const user = decodeURIComponent(new URL(url).username)
  if (!isValidRoleName(user)) {
    throw new StartupError('SATANG_DATABASE_OWNER_URL is set, so SATANG_DATABASE_URL must name its user (the service role the owner grants to), a plain lowercase name of letters, digits and underscores')
  }
  return user
}

/**
 * The EventStoreDB adapter, whose gRPC client is some 150 modules: loaded by `openDatabase` and
 * `openDatabaseForTool` only when SATANG_EVENT_STORE=eventstoredb, so no other run loads it.
 */
let esdbAdapter: typeof EsdbAdapter | undefined
const loadEventStoreAdapter = async (config: Pick<Config, 'SATANG_EVENT_STORE'>): Promise<void> => {
  if (config.SATANG_EVENT_STORE === 'eventstoredb' && esdbAdapter === undefined) esdbAdapter = await import('../adapters/eventstore/esdb.ts')
}

/** Connects to `SATANG_DATABASE_URL`, or starts embedded PostgreSQL in the data folder when it is unset. */
export const openDatabase = async (config: Config, log: Logger): Promise<Database> => {
  await loadEventStoreAdapter(config)
  if (config.SATANG_DATABASE_URL !== undefined) {
    const ownerUrl = config.SATANG_DATABASE_OWNER_URL
    const serviceRole = ownerUrl === undefined ? undefined : serviceRoleOf(config.SATANG_DATABASE_URL)
    const pool = makePostgresPool({ url: config.SATANG_DATABASE_URL, ...(config.SATANG_DATABASE_POOL_SIZE === undefined ? {} : { poolMax: config.SATANG_DATABASE_POOL_SIZE }) }, log)
    const owner = ownerUrl === undefined || serviceRole === undefined ? undefined : { pool: makePostgresPool({ url: ownerUrl, poolMax: 2, applicationName: 'satang-owner' }, log), serviceRole }
    const u = new URL(config.SATANG_DATABASE_URL)
    return {
      pool,
      ...(owner === undefined ? {} : { owner }),
      description: `PostgreSQL at ${u.hostname}:${u.port || '5432'}${u.pathname}${owner === undefined ? '' : ` (service role ${owner.serviceRole}; migrations as the owner role)`}`,
      close: async () => {
        await owner?.pool.end()
        await pool.end()
      },
    }
  }
  const dataDir = dataPath(config, 'postgres')
  const passwords = await rolePasswords(config)
  const started = await startEmbeddedPostgres({ log }, { dataDir, port: config.SATANG_EMBEDDED_PG_PORT, database: EMBEDDED_DATABASE })()
  if (E.isLeft(started)) throw new StartupFailure(`embedded PostgreSQL: ${started.left.message}`)
  const embedded = started.right
  try {
    // As the cluster's superuser: both roles, and (a data folder from before them) the schemas handed over.
    const admin = new Client({ connectionString: embedded.url })
    await admin.connect()
    try {
      await ensureSatangRoles(admin, {
        database: EMBEDDED_DATABASE,
        owner: { name: EMBEDDED_OWNER_ROLE, password: passwords.owner },
        service: { name: EMBEDDED_SERVICE_ROLE, password: passwords.service },
        eventSchema: EVENT_STORE_SCHEMA,
        readModelSchema: READ_MODEL_SCHEMA,
      })
    } finally {
      await admin.end()
    }
  } catch (e) {
    await embedded.stop()
    throw new StartupFailure(`embedded PostgreSQL: the owner and service roles could not be set up: ${e instanceof Error ? e.message : String(e)}`)
  }
  const pool = makePostgresPool({ url: roleUrl(embedded.port, EMBEDDED_SERVICE_ROLE, passwords.service), ...(config.SATANG_DATABASE_POOL_SIZE === undefined ? {} : { poolMax: config.SATANG_DATABASE_POOL_SIZE }) }, log)
  const ownerPool = makePostgresPool({ url: roleUrl(embedded.port, EMBEDDED_OWNER_ROLE, passwords.owner), poolMax: 2, applicationName: 'satang-owner' }, log)
  return {
    pool,
    owner: { pool: ownerPool, serviceRole: EMBEDDED_SERVICE_ROLE },
    description: `embedded PostgreSQL on 127.0.0.1:${String(embedded.port)}, data in ${embedded.dataDir} (${embedded.initialised ? 'new cluster initialised' : embedded.adopted ? 'existing data reused; server left running by a previous satang taken over' : 'existing data reused'}), as role ${EMBEDDED_SERVICE_ROLE} (migrations as ${EMBEDDED_OWNER_ROLE})`,
    close: async () => {
      await ownerPool.end()
      await pool.end()
      await embedded.stop()
    },
  }
}

/**
 * The database of a running (or stopped) satang, for tools such as `satang audit`: the configured URL;
 * else the embedded cluster — the one `satang up` is running on its port (as a client, never its
 * owner, with satang's own roles), or started here, holding the data directory's lock, and stopped
 * again by `close`.
 */
export const openDatabaseForTool = async (config: Config, log: Logger, command = 'a satang command'): Promise<Database> => {
  await loadEventStoreAdapter(config)
  if (config.SATANG_DATABASE_URL !== undefined) return openDatabase(config, log)
  const port = config.SATANG_EMBEDDED_PG_PORT
  const passwords = await rolePasswords(config)
  const running = makePostgresPool({ url: roleUrl(port, EMBEDDED_SERVICE_ROLE, passwords.service), connectionTimeoutMs: 2_000 }, log)
  const reachable = await running.query('select 1').then(
    () => true,
    () => false,
  )
  if (reachable) {
    const ownerPool = makePostgresPool({ url: roleUrl(port, EMBEDDED_OWNER_ROLE, passwords.owner), poolMax: 2, connectionTimeoutMs: 2_000, applicationName: 'satang-owner' }, log)
    return {
      pool: running,
      owner: { pool: ownerPool, serviceRole: EMBEDDED_SERVICE_ROLE },
      description: `embedded PostgreSQL on 127.0.0.1:${String(port)} (running)`,
      close: async () => {
        await ownerPool.end()
        await running.end()
      },
    }
  }
  await running.end()
  // Starting the embedded server makes this command its owner for a while: only with the data directory's lock.
  const lock = await lockDataDirOf(config, log, command, `, whose database does not answer on port ${String(port)}`)
  const db = await openDatabase(config, log).catch(async (e: unknown) => {
    await lock.release()
    throw e
  })
  return {
    ...db,
    close: async () => {
      await db.close()
      await lock.release()
    },
  }
}

/** What to tell the operator about event store migrations that wait for every process to be upgraded. */
export { waitingNotice }

/** What `migrate` did: the read-model migrations applied, and the event store's run (none when the log is EventStoreDB). */
export type Migrated = { readonly readModels: ReadonlyArray<string>; readonly eventStore: EventStoreMigrated | undefined }

/**
 * Applies every pending migration: the event store's (when it lives in PostgreSQL) and the read
 * models' (knex migrations in `satang`). Safe to run repeatedly and from several processes at once.
 * `everyProcessUpgraded` applies the event store's migrations that wait until no process of an
 * earlier release reads the log (`satang migrate --every-process-upgraded`).
 */
export const migrate = async (
  db: Database,
  log: Logger,
  config?: Pick<Config, 'SATANG_EVENT_STORE'>,
  options: { readonly everyProcessUpgraded?: boolean } = {},
): Promise<Migrated> => {
  let eventStore: EventStoreMigrated | undefined
  if (config?.SATANG_EVENT_STORE !== 'eventstoredb') {
    // The event store belongs to the owner role when there is one; the read models to the service.
    const knex = makeKnex(db.owner?.pool ?? db.pool)
    try {
      const done = await migrateEventStore(
        { db: knex, log },
        { schema: EVENT_STORE_SCHEMA, ...(db.owner === undefined ? {} : { serviceRole: db.owner.serviceRole }), ...(options.everyProcessUpgraded === true ? { everyProcessUpgraded: true } : {}) },
      )()
      if (E.isLeft(done)) throw new StartupFailure(`migration of the event store failed: ${done.left.cause instanceof Error ? done.left.cause.message : done.left.operation}`)
      eventStore = done.right
    } finally {
      // the pool belongs to the caller; knex only borrowed it
      await knex.destroy().catch((e: unknown) => log.debug({ err: e }, 'knex destroy'))
    }
  }
  try {
    return { readModels: await migrateReadModels({ pool: db.pool, log }, { schema: READ_MODEL_SCHEMA, projections: PROJECTIONS }), eventStore }
  } catch (e) {
    throw new StartupFailure(`migration of the read models failed: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** The read models of this database, for code that reads them. */
export const readModelsOf = (db: Database): ReadModels => ({ pool: db.pool, schema: READ_MODEL_SCHEMA })

/**
 * `{ eventTable }` for the projector and rebuilds (`ProjectionTarget.eventTable`): the event table the
 * projections may copy payloads from, only when the log is PostgreSQL in the same database; else nothing.
 */
export const withEventTable = (config: Pick<Config, 'SATANG_EVENT_STORE'>): { readonly eventTable?: string } =>
  config.SATANG_EVENT_STORE === 'eventstoredb' ? {} : { eventTable: `"${EVENT_STORE_SCHEMA}".events` }

export const makeEventStore = (config: Config, db: Database, log: Logger): EventStore => {
  if (config.SATANG_EVENT_STORE === 'eventstoredb' && config.SATANG_EVENTSTOREDB_URL !== undefined) {
    if (esdbAdapter === undefined) throw new Error('makeEventStore: the EventStoreDB adapter is loaded by openDatabase, which was not called with this configuration (defect)')
    return esdbAdapter.makeEsdbEventStore({ log }, { connectionString: config.SATANG_EVENTSTOREDB_URL })
  }
  return makePostgresEventStore({ pool: db.pool, log }, { schema: EVENT_STORE_SCHEMA, horizonWarnSeconds: config.SATANG_HORIZON_WARN_SECONDS })
}

/**
 * Refuses a service connection as a superuser (it could rewrite the log, bypassing every trigger)
 * unless `allowSuperuser`; warns when the service role owns the event store (it could disable its
 * triggers: give migrations an owner role of their own, SATANG_DATABASE_OWNER_URL). Returns the
 * warnings for the start-up output.
 */
export const checkServiceRole = async (db: Database, config: Config, log: Logger, allowSuperuser: boolean): Promise<ReadonlyArray<string>> => {
  const role = await connectionRoleOf(db.pool, EVENT_STORE_SCHEMA)
  if (role.superuser) {
    if (!allowSuperuser) {
      // A configuration to change (exit 2, as for every bad setting), not a runtime failure.
      throw new ConfigurationError(
        `SATANG_DATABASE_URL connects as ${role.user}, a PostgreSQL superuser, which can change or delete events behind every trigger. ` +
          'Connect as a service role that may only read and append (docs/operations.md "Least privilege": the SQL to create it, and SATANG_DATABASE_OWNER_URL for migrations), ' +
          'or, for a test database only, pass --allow-superuser',
      )
    }
    const warning = `WARNING: connected as ${role.user}, a PostgreSQL SUPERUSER (--allow-superuser): this process can rewrite or delete the event log; never run production like this`
    log.warn({ user: role.user }, warning)
    return [warning]
  }
  if (config.SATANG_EVENT_STORE === 'postgres' && role.ownsEventStore) {
    const warning = `WARNING: the service role ${role.user} owns the event store (${EVENT_STORE_SCHEMA}): it could disable the append-only triggers; set SATANG_DATABASE_OWNER_URL so that migrations run as an owner role of their own (docs/operations.md "Least privilege")`
    log.warn({ user: role.user }, warning)
    return [warning]
  }
  return []
}
