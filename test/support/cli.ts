import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { pgQueuedQuery } from './pg-queued-query.ts'

export const SATANG_BIN = fileURLToPath(new URL('../../bin/satang.js', import.meta.url))

export type CliResult = { readonly code: number | null; readonly stdout: string; readonly stderr: string }


/**
 * `args` of a test's `satang up`: the int and e2e tests reach their PostgreSQL as its superuser
 * (postgres@127.0.0.1:5432), which `satang up` refuses unless `--allow-superuser`; so a `satang up`
 * given a SATANG_DATABASE_URL without an owner URL gets the flag, unless the test says `allowSuperuser: false`.
 */
export const testUpArgs = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, allowSuperuser = true): ReadonlyArray<string> =>
  allowSuperuser && args[0] === 'up' && !args.includes('--help') && env['SATANG_DATABASE_URL'] !== undefined && env['SATANG_DATABASE_OWNER_URL'] === undefined && !args.includes('--allow-superuser')
    ? [...args, '--allow-superuser']
    : args

/** Runs the real `satang` CLI in a child process (the same node that runs the tests). */
export const runCli = (args: ReadonlyArray<string>, opts: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string; allowSuperuser?: boolean } = {}): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SATANG_BIN, ...testUpArgs(args, { ...process.env, ...opts.env }, opts.allowSuperuser)], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => {
      const queued = pgQueuedQuery(stderr)
      if (queued !== undefined) reject(new Error(`satang ${args.join(' ')} sent a query to a pg client that was running one: ${queued}`))
      else resolve({ code, stdout, stderr })
    })
    child.stdin.end(opts.stdin ?? '')
  })
