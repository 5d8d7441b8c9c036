import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Client, DatabaseError } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../../src/adapters/eventstore/postgres.ts'
import type { EventToAppend } from '../../../src/application/ports/event-store.ts'
import { checkServiceRole, type Database } from '../../../src/composition/database.ts'
import { StartupError } from '../../../src/composition/startup.ts'
import { decodeConfig, type Config } from '../../../src/config.ts'
import { eventSourceOf, toEventToAppend } from '../../../src/domain/events/registry.ts'
import { silentLogger } from '../../../src/logger.ts'
import { EVENT_STORE_SCHEMA, READ_MODEL_SCHEMA, migrate, openDatabase } from '../../../src/main.ts'
import { ensureSatangRoles } from '../../../src/platform/postgres/roles.ts'
import * as order from '../../domain/order/builders.ts'
import { runCli } from '../../support/cli.ts'
import { envWithoutSatangSettings, startSatangProcess } from '../../support/process.ts'
import { freshDatabase } from '../http/database.ts'

/**
 * Least privilege on real PostgreSQL: migrations as an owner role, the service as a role that reads and
 * appends the event log and owns the read models, and cannot change, remove or unprotect an event.
 */

const log = silentLogger()
const suffix = randomUUID().replaceAll('-', '').slice(0, 8)
const OWNER = `t_owner_${suffix}`
const SERVICE = `t_service_${suffix}`
const PASSWORDS = { owner: `owner-${randomUUID()}`, service: `service-${randomUUID()}` }

const urlAs = (base: string, user: string, password: string): string => {
  const u = new URL(base)
  u.username = user
  u.password = password
  return u.toString()
}

const events = (n = 2): ReadonlyArray<EventToAppend> =>
  order
    .anAcceptedCheckout()
    .slice(0, n)
    .map((e) => toEventToAppend(e, randomUUID(), { correlationId: 'c', causationId: 'c', recordedAt: '2026-01-01T03:00:00.000Z', source: eventSourceOf(e) }))

const asSuperuser = async <A>(url: string, f: (c: Client) => Promise<A>): Promise<A> => {
  const c = new Client({ connectionString: url })
  await c.connect()
  try {
    return await f(c)
  } finally {
    await c.end()
  }
}

const configOf = (env: Record<string, string>): Config => {
  const c = decodeConfig({ SATANG_LOG_LEVEL: 'silent', ...env })
  if (E.isLeft(c)) throw new Error(JSON.stringify(c.left))
  return c.right
}

/** The SQLSTATE a statement fails with, or 'ok'. */
const outcome = async (c: Client, sql: string): Promise<string> =>
  c.query(sql).then(
    () => 'ok',
    (e: unknown) => (e instanceof DatabaseError ? (e.code ?? 'error') : 'error'),
  )

let database: Awaited<ReturnType<typeof freshDatabase>>
let db: Database
let service: Client

beforeAll(async () => {
  database = await freshDatabase('privilege')
  const dbName = new URL(database.url).pathname.slice(1)
  await asSuperuser(database.url, (c) =>
    ensureSatangRoles(c, { database: dbName, owner: { name: OWNER, password: PASSWORDS.owner }, service: { name: SERVICE, password: PASSWORDS.service }, eventSchema: EVENT_STORE_SCHEMA, readModelSchema: READ_MODEL_SCHEMA }),
  )
  db = await openDatabase(
    configOf({ SATANG_DATABASE_URL: urlAs(database.url, SERVICE, PASSWORDS.service), SATANG_DATABASE_OWNER_URL: urlAs(database.url, OWNER, PASSWORDS.owner) }),
    log,
  )
  await migrate(db, log)
  const store = makePostgresEventStore({ pool: db.pool, log }, { schema: EVENT_STORE_SCHEMA })
  const appended = await store.append(`order-140000000000000001-LP-${suffix}`, events(), 'no_stream')()
  await store.close()
  if (E.isLeft(appended)) throw new Error(`the service role could not append: ${JSON.stringify(appended.left)}`)
  service = new Client({ connectionString: urlAs(database.url, SERVICE, PASSWORDS.service) })
  await service.connect()
})

afterAll(async () => {
  await service.end()
  await db.close()
  await database.drop()
  await asSuperuser(database.url.replace(/\/[^/]*$/, '/postgres'), async (c) => {
    for (const r of [SERVICE, OWNER]) await c.query(`drop role if exists "${r}"`)
  })
})

describe('the service role on the event table (real PostgreSQL)', () => {
  const t = `${EVENT_STORE_SCHEMA}.events`

  it('can read and append the log (the appends above went through it)', async () => {
    expect((await service.query(`select count(*)::int as n from ${t}`)).rows[0]).toEqual({ n: 2 })
  })

  it('reads the announcement key and may announce (live delivery, migration 0006), but cannot change or replace the key', async () => {
    const key = await service.query<{ n: number }>(`select length(key)::int as n from ${EVENT_STORE_SCHEMA}.announce_key`)
    expect(key.rows[0]).toEqual({ n: 32 })
    const may = await service.query<{ f: boolean }>(`select has_function_privilege(current_user, $1, 'execute') as f`, [`${EVENT_STORE_SCHEMA}.announce(text)`])
    expect(may.rows[0]).toEqual({ f: true })
    expect(await outcome(service, `update ${EVENT_STORE_SCHEMA}.announce_key set key = key`)).toBe('42501')
    expect(await outcome(service, `delete from ${EVENT_STORE_SCHEMA}.announce_key`)).toBe('42501')
    expect(await outcome(service, `insert into ${EVENT_STORE_SCHEMA}.announce_key (only_row, key, ipad, opad) values (false, '', '', '')`)).toBe('42501')
  })

  it.each([
    ['UPDATE', `update ${t} set data = '{}'::jsonb`],
    ['DELETE', `delete from ${t}`],
    ['TRUNCATE', `truncate ${t}`],
    ['ALTER TABLE … DISABLE TRIGGER', `alter table ${t} disable trigger user`],
    ['ALTER TABLE … DISABLE TRIGGER (one trigger)', `alter table ${t} disable trigger events_append_only`],
    ['DROP TABLE', `drop table ${t}`],
    ['UPDATE of an anchor', `update ${EVENT_STORE_SCHEMA}.anchors set reason = 'x'`],
    ['TRUNCATE of the anchors', `truncate ${EVENT_STORE_SCHEMA}.anchors, ${EVENT_STORE_SCHEMA}.anchor_heads`],
    ['ALTER SCHEMA … OWNER', `alter schema ${EVENT_STORE_SCHEMA} owner to ${SERVICE}`],
    ['CREATE in the event store schema', `create table ${EVENT_STORE_SCHEMA}.shadow (x int)`],
  ])('%s fails with a privilege error', async (_what, sql) => {
    // 42501 insufficient_privilege (no privilege, or "must be owner of table")
    expect(await outcome(service, sql)).toBe('42501')
    expect((await service.query(`select count(*)::int as n from ${t}`)).rows[0]).toEqual({ n: 2 })
  })

  it('owns no schema of the event store and is no superuser; the owner role owns it', async () => {
    const r = await service.query<{ owner: string }>(`select pg_get_userbyid(nspowner) as owner from pg_namespace where nspname = $1`, [EVENT_STORE_SCHEMA])
    expect(r.rows[0]?.owner).toBe(OWNER)
    const tables = await service.query<{ owner: string }>(`select distinct tableowner as owner from pg_tables where schemaname = $1`, [EVENT_STORE_SCHEMA])
    expect(tables.rows).toEqual([{ owner: OWNER }])
    expect((await service.query(`select rolsuper from pg_roles where rolname = current_user`)).rows[0]).toEqual({ rolsuper: false })
  })

  it('writes its read models and checkpoints (it owns the read-model schema)', async () => {
    const r = await service.query<{ owner: string }>(`select pg_get_userbyid(nspowner) as owner from pg_namespace where nspname = $1`, [READ_MODEL_SCHEMA])
    expect(r.rows[0]?.owner).toBe(SERVICE)
    expect(await outcome(service, `insert into ${READ_MODEL_SCHEMA}.projection_checkpoints (name) values ('privilege-test') on conflict do nothing`)).not.toBe('42501')
  })

  it('start-up accepts the service role without a warning, and refuses a superuser unless allowed (then warns)', async () => {
    const config = configOf({ SATANG_DATABASE_URL: database.url })
    expect(await checkServiceRole(db, config, log, false)).toEqual([])
    const superDb = await openDatabase(config, log)
    try {
      await expect(checkServiceRole(superDb, config, log, false)).rejects.toThrow(StartupError)
      await expect(checkServiceRole(superDb, config, log, false)).rejects.toThrow(/superuser.*--allow-superuser/s)
      const warnings = await checkServiceRole(superDb, config, log, true)
      expect(warnings.join('\n')).toMatch(/WARNING: .*SUPERUSER/)
    } finally {
      await superDb.close()
    }
  })
})

describe('upgrade: a database migrated by the superuser before the roles existed', () => {
  it('hands the event store to the owner and the read models to the service; the service then appends and cannot update', async () => {
    const old = await freshDatabase('privupgrade')
    const name = new URL(old.url).pathname.slice(1)
    const superDb = await openDatabase(configOf({ SATANG_DATABASE_URL: old.url }), log)
    let upgraded: Database | undefined
    try {
      await migrate(superDb, log)
      const store = makePostgresEventStore({ pool: superDb.pool, log }, { schema: EVENT_STORE_SCHEMA })
      const stream = `order-140000000000000001-UP-${suffix}`
      expect(E.isRight(await store.append(stream, events(1), 'no_stream')())).toBe(true)
      await store.close()

      await asSuperuser(old.url, (c) =>
        ensureSatangRoles(c, { database: name, owner: { name: OWNER, password: PASSWORDS.owner }, service: { name: SERVICE, password: PASSWORDS.service }, eventSchema: EVENT_STORE_SCHEMA, readModelSchema: READ_MODEL_SCHEMA }),
      )
      upgraded = await openDatabase(configOf({ SATANG_DATABASE_URL: urlAs(old.url, SERVICE, PASSWORDS.service), SATANG_DATABASE_OWNER_URL: urlAs(old.url, OWNER, PASSWORDS.owner) }), log)
      await migrate(upgraded, log)
      const owners = await upgraded.pool.query<{ schema: string; owner: string }>(
        `select nspname as schema, pg_get_userbyid(nspowner) as owner from pg_namespace where nspname in ($1, $2) order by 1`,
        [EVENT_STORE_SCHEMA, READ_MODEL_SCHEMA],
      )
      expect(owners.rows).toEqual([
        { schema: EVENT_STORE_SCHEMA, owner: OWNER },
        { schema: READ_MODEL_SCHEMA, owner: SERVICE },
      ])
      const leftBehind = await upgraded.pool.query(
        `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname in ($1, $2) and c.relkind in ('r', 'v', 'S') and pg_get_userbyid(c.relowner) not in ($3, $4)`,
        [EVENT_STORE_SCHEMA, READ_MODEL_SCHEMA, OWNER, SERVICE],
      )
      expect(leftBehind.rows).toEqual([])
      const again = makePostgresEventStore({ pool: upgraded.pool, log }, { schema: EVENT_STORE_SCHEMA })
      expect(E.isRight(await again.append(stream, events(2).slice(1), 'any')())).toBe(true)
      await again.close()
      const c = new Client({ connectionString: urlAs(old.url, SERVICE, PASSWORDS.service) })
      await c.connect()
      try {
        expect(await outcome(c, `update ${EVENT_STORE_SCHEMA}.events set data = '{}'::jsonb`)).toBe('42501')
        expect(await outcome(c, `alter table ${EVENT_STORE_SCHEMA}.events disable trigger user`)).toBe('42501')
      } finally {
        await c.end()
      }
    } finally {
      await upgraded?.close()
      await superDb.close()
      await old.drop()
    }
  })
})

describe('satang up as a superuser', () => {
  it('refuses to start (exit 2, naming the way out) unless --allow-superuser, which starts with a loud warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satang-superuser-'))
    const env = envWithoutSatangSettings({ SATANG_DATABASE_URL: database.url, SATANG_HTTP_PORT: '0', SATANG_SANDBOX_PORT: '0', SATANG_DATA_DIR: dir, SATANG_LOG_LEVEL: 'warn' })
    const refused = await runCli(['up'], { env, cwd: dir, allowSuperuser: false })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/^satang: SATANG_DATABASE_URL connects as \w+, a PostgreSQL superuser, .*docs\/operations\.md "Least privilege".*--allow-superuser/m)
    expect(refused.stdout).not.toMatch(/satang: up/)
    const allowed = startSatangProcess(['up', '--allow-superuser'], { env, cwd: dir })
    try {
      await allowed.waitFor(/satang: up\./, 90_000)
      expect(allowed.stdout()).toMatch(/satang: WARNING: connected as \w+, a PostgreSQL SUPERUSER \(--allow-superuser\)/)
    } finally {
      await allowed.stop('SIGTERM')
    }
  }, 120_000)
})
