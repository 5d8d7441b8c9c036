import type { Pool } from 'pg'
import type { ConsoleAccount, ConsoleAccounts } from '../../application/ports/console-accounts.ts'
import type { AccountThrottleState } from '../../domain/console-users/account-throttle.ts'
import { isConsoleRole } from '../../domain/console-users/account.ts'
import { consoleUsersTable } from '../../platform/postgres/console-users.ts'

type Row = {
  name: string
  role: string
  password_hash: string
  password_set_at: Date
  disabled_at: Date | null
  created_at: Date
  failures: number
  window_start: Date | null
  locked_until: Date | null
  lockouts: number
}

const COLUMNS = 'name, role, password_hash, password_set_at, disabled_at, created_at, failures, window_start, locked_until, lockouts'

// The column window_start holds when the last counted failure came (account-throttle.ts): its name is
// from when failures were counted per window from the first one.
const throttleOf = (r: Row): AccountThrottleState => ({ failures: r.failures, lastFailureAt: r.window_start, lockedUntil: r.locked_until, lockouts: r.lockouts })

const accountOf = (r: Row): ConsoleAccount => {
  // The table's check constraint admits only the three roles.
  if (!isConsoleRole(r.role)) throw new Error(`console_users: account ${r.name} has an unknown role`)
  return { name: r.name, role: r.role, passwordHash: r.password_hash, passwordSetAt: r.password_set_at, disabledAt: r.disabled_at, createdAt: r.created_at, throttle: throttleOf(r) }
}

/** Console accounts in `<schema>.console_users` (platform/postgres/console-users.ts). */
export const makePostgresConsoleAccounts = (db: { readonly pool: Pool; readonly schema: string }): ConsoleAccounts => {
  const table = consoleUsersTable(db.schema)
  return {
    add: async (a) => {
      const r = await db.pool.query({
        text: `insert into ${table} (name, role, password_hash, password_set_at, created_at) values ($1, $2, $3, $4, $4) on conflict (name) do nothing`,
        values: [a.name, a.role, a.passwordHash, a.at],
      })
      return (r.rowCount ?? 0) > 0 ? 'added' : 'exists'
    },
    find: async (name) => {
      const r = await db.pool.query<Row>({ name: 'console-account', text: `select ${COLUMNS} from ${table} where name = $1`, values: [name] })
      const row = r.rows[0]
      return row === undefined ? undefined : accountOf(row)
    },
    list: async () => (await db.pool.query<Row>(`select ${COLUMNS} from ${table} order by name`)).rows.map(accountOf),
    any: async () => ((await db.pool.query({ name: 'console-accounts-any', text: `select 1 from ${table} limit 1` })).rowCount ?? 0) > 0,
    disable: async (name, at) => {
      const r = await db.pool.query({ text: `update ${table} set disabled_at = $2 where name = $1 and disabled_at is null`, values: [name, at] })
      if ((r.rowCount ?? 0) > 0) return 'disabled'
      const exists = await db.pool.query({ text: `select 1 from ${table} where name = $1`, values: [name] })
      return (exists.rowCount ?? 0) > 0 ? 'already' : 'missing'
    },
    setPassword: async (name, passwordHash, at) => {
      const r = await db.pool.query({
        text: `update ${table} set password_hash = $2, password_set_at = $3, disabled_at = null, failures = 0, window_start = null, locked_until = null where name = $1`,
        values: [name, passwordHash, at],
      })
      return (r.rowCount ?? 0) > 0
    },
    withThrottle: async (name, step) => {
      const client = await db.pool.connect()
      try {
        await client.query('begin')
        const r = await client.query<Row>({ text: `select ${COLUMNS} from ${table} where name = $1 for update`, values: [name] })
        const row = r.rows[0]
        if (row === undefined) {
          await client.query('rollback')
          return undefined
        }
        const out = step(throttleOf(row))
        await client.query({
          text: `update ${table} set failures = $2, window_start = $3, locked_until = $4, lockouts = $5 where name = $1`,
          values: [name, out.state.failures, out.state.lastFailureAt, out.state.lockedUntil, out.state.lockouts],
        })
        await client.query('commit')
        return out.result
      } catch (e) {
        await client.query('rollback').catch(() => undefined)
        throw e
      } finally {
        client.release()
      }
    },
  }
}
