import { randomUUID } from 'node:crypto'
import { userInfo } from 'node:os'
import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import { makeScryptPasswords } from '../adapters/crypto/scrypt-passwords.ts'
import { makePostgresConsoleAccounts } from '../adapters/postgres/console-accounts.ts'
import { addConsoleUser, describeConsoleUserFailure, disableConsoleUser, listConsoleUsers, resetConsoleUserPassword, type ConsoleUserDeps, type ConsoleUserFailure } from '../application/console-users.ts'
import { CONSOLE_ROLES, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, nameViolations, roleViolations } from '../domain/console-users/account.ts'
import { makeEventStore, readModelsOf } from '../composition/database.ts'
import { EXIT, readTextFile, UsageError } from './io.ts'
import { READ_LIMITS } from '../adapters/os/bounded-read.ts'
import { configOrUsage, openMigratedDatabase, quietLogger } from './tool-config.ts'

const USERS_HELP = `
People who sign in to the web console (/console) as themselves, with a name and a password. Each has
one role, which grants the scopes of the API's tokens:
  finance   read, reconcile:write   (sees everything, acknowledges breaks)
  auditor   read, audit             (sees everything, and the raw payloads of audit trails)
  admin     every scope
Accounts and their password hashes (scrypt) are kept in the table satang.console_users of satang's
database, never in the event log; what happens to them (added, disabled, password reset) is recorded
in the log as events without any secret (stream console-users). Once an account exists the console's
sign-in form no longer takes API tokens (they keep working for machines, in the Authorization header).
Companies with an OpenID Connect provider can use single sign-on instead or beside: docs/console-users.md.

Exit codes: 0 done; 1 refused (the name exists, or there is no such user); 2 bad usage; 3 the
database or the event log failed.`

const PASSWORD_HELP = `The password comes from --password-file FILE (its first line; keep the file private and remove it
after), or is asked for twice when the command runs in a terminal (not echoed). ${String(MIN_PASSWORD_LENGTH)} to ${String(MAX_PASSWORD_LENGTH)} characters, no
control characters, not containing the name.`

type Common = { by?: string; json?: boolean }

/** Reads a password from a file (its first line) or, on a terminal, twice from a prompt that does not echo. */
const readPassword = async (file: string | undefined): Promise<string> => {
  if (file !== undefined) {
    const text = await readTextFile(file, '--password-file', READ_LIMITS.password)
    return text.split(/\r?\n/)[0] ?? ''
  }
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) throw new UsageError('--password-file is required when not run in a terminal (the password is never taken from an argument)')
  const ask = async (question: string): Promise<string> => {
    let muted = false
    const out = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        if (!muted) process.stderr.write(chunk)
        done()
      },
    })
    const rl = createInterface({ input: process.stdin, output: out, terminal: true })
    try {
      return await new Promise<string>((resolve) => {
        rl.question(question, resolve)
        muted = true
      })
    } finally {
      rl.close()
      process.stderr.write('\n')
    }
  }
  const first = await ask('password: ')
  const again = await ask('the same password again: ')
  if (first !== again) throw new UsageError('the two passwords differ: nothing was changed')
  return first
}

const fieldName = (path: string): string => (path === 'name' ? 'NAME' : path === 'role' ? '--role' : path === 'password' ? 'the password' : path)

/** Opens the database and the event log, runs `work`, and closes them; exit 3 when they cannot be opened. */
const withUsers = async (setExitCode: (code: number) => void, work: (deps: ConsoleUserDeps) => Promise<void>): Promise<void> => {
  const config = await configOrUsage()
  const log = quietLogger(config)
  const db = await openMigratedDatabase(config, log, setExitCode)
  if (db === undefined) return
  const store = makeEventStore(config, db, log)
  try {
    await work({ accounts: makePostgresConsoleAccounts(readModelsOf(db)), hasher: makeScryptPasswords(), store, now: () => new Date() })
  } finally {
    await store.close()
    await db.close()
  }
}

const failed = (f: ConsoleUserFailure, setExitCode: (code: number) => void): void => {
  if (f._tag === 'Invalid') throw new UsageError(f.violations.map((v) => `${fieldName(v.path)} ${v.rule}`).join('; '))
  process.stderr.write(`satang: ${describeConsoleUserFailure(f)}\n`)
  setExitCode(f._tag === 'NotLogged' ? EXIT.failure : EXIT.negative)
}

const cause = (by: string) => {
  const id = randomUUID()
  return { correlationId: id, causationId: id, actor: by }
}

const byOf = (o: Common): string => {
  const by = o.by ?? `cli:${userInfo().username}`
  if (by.trim() === '' || by.length > 200) throw new UsageError('--by must be 1 to 200 characters')
  return by
}

const checkName = (name: string): void => {
  const v = nameViolations(name)
  if (v.length > 0) throw new UsageError(v.map((x) => `NAME ${x.rule}`).join('; '))
}

/** `satang users add|list|disable|reset-password`: the console's personal accounts. */
export const registerUsersCommand = (program: Command, setExitCode: (code: number) => void): void => {
  const users = program.command('users').description('console accounts: users add, list, disable, reset-password (people who sign in to /console as themselves)').addHelpText('after', USERS_HELP)

  users
    .command('add')
    .description('add a console account with a role (finance, auditor or admin)')
    .argument('<NAME>', 'the name the person signs in with: 1 to 64 lowercase letters, digits, dot, dash, underline or @')
    .option('--role <role>', `${CONSOLE_ROLES.join(', ')} (required)`)
    .option('--password-file <FILE>', 'read the password from the first line of FILE instead of asking for it')
    .option('--by <name>', 'who adds it, for the record (default: cli:<your user name>)')
    .option('--json', 'print the account as JSON')
    .addHelpText('after', `\n${PASSWORD_HELP}\n\nExample:\n  satang users add somchai --role finance`)
    .action(async (name: string, opts: Common & { role?: string; passwordFile?: string }) => {
      const problems = [...nameViolations(name).map((v) => `NAME ${v.rule}`), ...(opts.role === undefined ? ['--role is required (finance, auditor or admin)'] : roleViolations(opts.role).map((v) => `--role ${v.rule}`))]
      if (problems.length > 0) throw new UsageError(problems.join('; '))
      const by = byOf(opts)
      const password = await readPassword(opts.passwordFile)
      await withUsers(setExitCode, async (deps) => {
        const added = await addConsoleUser(deps, { name, role: opts.role ?? '', password, by }, cause(by))
        if (E.isLeft(added)) return failed(added.left, setExitCode)
        process.stdout.write(opts.json === true ? `${JSON.stringify({ name: added.right.name, role: added.right.role, added_by: by })}\n` : `satang: added ${added.right.name} (${added.right.role}); they sign in at /console\n`)
        setExitCode(EXIT.ok)
      })
    })

  users
    .command('list')
    .description('list the console accounts: name, role, whether disabled or locked, when the password was set')
    .option('--json', 'print them as JSON')
    .action(async (opts: Common) => {
      await withUsers(setExitCode, async (deps) => {
        const all = await listConsoleUsers(deps)
        const now = deps.now()
        const rows = all.map((a) => ({
          name: a.name,
          role: a.role,
          status: a.disabledAt !== null ? 'disabled' : a.throttle.lockedUntil !== null && a.throttle.lockedUntil > now ? 'locked' : 'active',
          created_at: a.createdAt.toISOString(),
          password_set_at: a.passwordSetAt.toISOString(),
          disabled_at: a.disabledAt?.toISOString() ?? null,
          locked_until: a.throttle.lockedUntil !== null && a.throttle.lockedUntil > now ? a.throttle.lockedUntil.toISOString() : null,
        }))
        if (opts.json === true) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`)
        else if (rows.length === 0) process.stdout.write('no console accounts (satang users add NAME --role finance|auditor|admin)\n')
        else for (const r of rows) process.stdout.write(`${r.name}\t${r.role}\t${r.status}${r.locked_until === null ? '' : ` until ${r.locked_until}`}\tpassword set ${r.password_set_at}\n`)
        setExitCode(EXIT.ok)
      })
    })

  users
    .command('disable')
    .description('disable a console account: it signs in no more, and its sessions end at once')
    .argument('<NAME>', 'the account')
    .option('--by <name>', 'who disables it, for the record (default: cli:<your user name>)')
    .addHelpText('after', '\nsatang users reset-password NAME enables it again with a new password.')
    .action(async (name: string, opts: Common) => {
      checkName(name)
      const by = byOf(opts)
      await withUsers(setExitCode, async (deps) => {
        const done = await disableConsoleUser(deps, { name, by }, cause(by))
        if (E.isLeft(done)) return failed(done.left, setExitCode)
        process.stdout.write(done.right.already ? `satang: ${name} was disabled already\n` : `satang: disabled ${name}; their sessions are ended\n`)
        setExitCode(EXIT.ok)
      })
    })

  users
    .command('reset-password')
    .description("set a new password for a console account (enables it again, clears its lockout, ends its sessions)")
    .argument('<NAME>', 'the account')
    .option('--password-file <FILE>', 'read the new password from the first line of FILE instead of asking for it')
    .option('--by <name>', 'who resets it, for the record (default: cli:<your user name>)')
    .addHelpText('after', `\n${PASSWORD_HELP}`)
    .action(async (name: string, opts: Common & { passwordFile?: string }) => {
      checkName(name)
      const by = byOf(opts)
      const password = await readPassword(opts.passwordFile)
      await withUsers(setExitCode, async (deps) => {
        const done = await resetConsoleUserPassword(deps, { name, password, by }, cause(by))
        if (E.isLeft(done)) return failed(done.left, setExitCode)
        process.stdout.write(`satang: the password of ${name} is set; their earlier sessions are ended\n`)
        setExitCode(EXIT.ok)
      })
    })
}
