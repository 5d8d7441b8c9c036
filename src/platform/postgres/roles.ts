import type { ClientBase, Pool } from 'pg'
import { isValidSchemaName } from './names.ts'

/**
 * Least privilege in one database: an *owner* role owns the event store's schema and runs its
 * migrations; the *service* role, which the running satang connects as, may read and append events
 * (and anchors) but never change or remove them, and owns only the read models' schema (derived data,
 * rebuilt from the log). See docs/operations.md "Least privilege".
 */

export type RoleCredentials = { readonly name: string; readonly password: string }

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Role names are interpolated into SQL: plain lowercase identifiers only. */
export const isValidRoleName = (name: string): boolean => ROLE_NAME.test(name)

const ident = (name: string): string => {
  if (!isValidRoleName(name) && !isValidSchemaName(name)) throw new Error(`invalid SQL identifier ${JSON.stringify(name)}`)
  return `"${name}"`
}

/** A string literal for DDL that takes no parameters (`password '…'`). */
const literal = (s: string): string => `'${s.replaceAll("'", "''")}'`

/**
 * Moves every object of `schema` (the schema itself, tables, views, sequences not tied to a column,
 * functions) to `role`, when another role owns it: the upgrade of a database whose objects were
 * created by the superuser before the roles existed. Idempotent.
 */
const reassignSchemaSql = (schema: string, role: string): string => `
do $do$
declare
  r record;
begin
  if not exists (select 1 from pg_namespace where nspname = ${literal(schema)}) then return; end if;
  execute format('alter schema %I owner to %I', ${literal(schema)}, ${literal(role)});
  for r in
    select c.oid::regclass as rel, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${literal(schema)} and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
       and pg_get_userbyid(c.relowner) <> ${literal(role)}
       and not (c.relkind = 'S' and exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype in ('a', 'i')))
  loop
    execute format('alter %s %s owner to %I', case r.relkind when 'S' then 'sequence' when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table' else 'table' end, r.rel, ${literal(role)});
  end loop;
  for r in
    select p.oid::regprocedure as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = ${literal(schema)} and pg_get_userbyid(p.proowner) <> ${literal(role)}
  loop
    execute format('alter routine %s owner to %I', r.fn, ${literal(role)});
  end loop;
end
$do$`

export type RoleSetup = {
  /** The database both roles work in. */
  readonly database: string
  readonly owner: RoleCredentials
  readonly service: RoleCredentials
  /** Owned by `owner`; the service reads and appends. */
  readonly eventSchema: string
  /** Owned by `service` (read models, checkpoints). */
  readonly readModelSchema: string
}

/**
 * Creates (or updates) both roles, run by a superuser connected to `setup.database`: each a login
 * role with its password, neither a superuser nor able to create roles or databases; the owner may
 * create schemas in the database, the service too (the read models' schema, and the scratch schemas of
 * rebuilds and as-of reads). Objects created earlier by another role (a data directory from before
 * the roles) change hands: the event store's to the owner, the read models' to the service. Then the
 * owner's grants to the service are (re)applied by the event store migration.
 */
export const ensureSatangRoles = async (admin: ClientBase, setup: RoleSetup): Promise<void> => {
  for (const role of [setup.owner, setup.service]) {
    if (!isValidRoleName(role.name)) throw new Error(`invalid role name ${JSON.stringify(role.name)}`)
    const exists = await admin.query({ text: 'select 1 from pg_roles where rolname = $1', values: [role.name] })
    const verb = exists.rowCount === 0 ? 'create' : 'alter'
    await admin.query(`${verb} role ${ident(role.name)} with login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password ${literal(role.password)}`)
  }
  const db = `"${setup.database.replaceAll('"', '""')}"`
  await admin.query(`grant connect, create on database ${db} to ${ident(setup.owner.name)}, ${ident(setup.service.name)}`)
  await admin.query(reassignSchemaSql(setup.eventSchema, setup.owner.name))
  await admin.query(reassignSchemaSql(setup.readModelSchema, setup.service.name))
}

/**
 * The owner's grants to the service on the event store's schema: usage, and on every table select and
 * select on every table, insert on the events and the anchors; nothing else — no update, delete, truncate,
 * references or trigger, and no ownership (so no `alter table … disable trigger`). Run by the owner
 * after each migration; idempotent.
 */
export const grantEventStoreToServiceSql = (eventSchema: string, service: string): string => `
grant usage on schema ${ident(eventSchema)} to ${ident(service)};
revoke all on all tables in schema ${ident(eventSchema)} from ${ident(service)};
grant select on all tables in schema ${ident(eventSchema)} to ${ident(service)};
grant insert on ${ident(eventSchema)}.events, ${ident(eventSchema)}.anchors, ${ident(eventSchema)}.anchor_heads to ${ident(service)};
grant usage on all sequences in schema ${ident(eventSchema)} to ${ident(service)};
grant execute on all functions in schema ${ident(eventSchema)} to ${ident(service)};
`

/** Who a connection is, and what it could do to the event log. */
export type ConnectionRole = {
  readonly user: string
  readonly superuser: boolean
  /** Owns the event store's schema or its events table (could disable the triggers). */
  readonly ownsEventStore: boolean
}

export const connectionRoleOf = async (pool: Pool, eventSchema: string): Promise<ConnectionRole> => {
  const r = await pool.query<{ user: string; superuser: boolean; owns: boolean }>({
    text: `select current_user::text as user,
                  coalesce((select rolsuper from pg_roles where rolname = current_user), false) as superuser,
                  exists (select 1 from pg_namespace where nspname = $1 and pg_has_role(current_user, nspowner, 'USAGE'))
                  or exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
                              where n.nspname = $1 and c.relname = 'events' and pg_has_role(current_user, c.relowner, 'USAGE')) as owns`,
    values: [eventSchema],
  })
  const row = r.rows[0]
  if (row === undefined) throw new Error('no answer to the role check')
  return { user: row.user, superuser: row.superuser, ownsEventStore: row.owns }
}
