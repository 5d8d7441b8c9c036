/**
 * Console accounts, in `<schema>.console_users` (beside the read models, but no read model: nothing
 * rebuilds it from the log, which never holds a password hash, since every event is relayed to Kafka).
 * One row per account: its role, its scrypt hash (`scrypt$N$r$p$salt$hash`), when it was disabled,
 * when its password was last set (sessions issued before are refused), and the wrong passwords
 * counted against it (src/domain/console-users/account-throttle.ts), shared by every api process.
 */
export const CONSOLE_USERS_TABLE = 'console_users'

export const consoleUsersTable = (schema: string): string => `"${schema}"."${CONSOLE_USERS_TABLE}"`

export const createConsoleUsersTable = (schema: string): string => `
create table if not exists ${consoleUsersTable(schema)} (
  name             text collate "C" primary key check (length(name) between 1 and 64),
  role             text not null check (role in ('finance', 'auditor', 'admin')),
  password_hash    text not null check (length(password_hash) <= 512),
  password_set_at  timestamptz not null,
  disabled_at      timestamptz,
  created_at       timestamptz not null,
  failures         integer not null default 0,
  window_start     timestamptz,
  locked_until     timestamptz,
  lockouts         integer not null default 0
)`
