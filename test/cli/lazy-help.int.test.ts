import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli.ts'
import { SATANG_BIN } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/**
 * Issue 28, item 4: a command loads only what it needs. `satang --help` lists every command from
 * src/cli/command-list.ts without loading any command's module, and says exactly what the loaded
 * commands would say; a command loads its own module, not the others'.
 */

const dir = mkdtempSync(join(tmpdir(), 'satang-lazy-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const TRACE = fileURLToPath(new URL('./support/module-trace.ts', import.meta.url))

const helpOf = (program: Command): string => program.helpInformation()

/** The src/ modules (relative paths) that `satang …args` loaded, and its exit code. */
const modulesLoadedBy = (args: ReadonlyArray<string>, settings: Readonly<Record<string, string>> = {}): Promise<{ code: number | null; modules: ReadonlyArray<string>; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const file = join(dir, `trace-${String(Math.random()).slice(2)}.txt`)
    const child = spawn(process.execPath, ['--import', TRACE, SATANG_BIN, ...args], {
      env: envWithoutSatangSettings({ SATANG_TEST_MODULE_TRACE: file, SATANG_DATA_DIR: join(dir, 'data'), ...settings }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => {
      // No trace: the child died before loading the tracer (a Node that cannot --import a .ts file, older
      // than 22.18, is first on PATH); fail with what it said rather than leave the promise hanging.
      let trace: string
      try {
        trace = readFileSync(file, 'utf8')
      } catch {
        reject(new Error(`satang ${args.join(' ')} under ${process.execPath} (Node ${process.versions.node}) wrote no module trace; exit ${String(code)}, stderr: ${stderr.slice(0, 2000)}`))
        return
      }
      resolve({ code, stdout, stderr, modules: trace.split('\n').filter((l) => l !== '') })
    })
  })

// Loading the whole program in process, and starting satang, take long on a busy machine.
describe('the listed commands are the commands', { timeout: 240_000 }, () => {
  it('satang --help from the list equals the help of the whole loaded program', async () => {
    expect(helpOf(await buildProgram(() => undefined, ''))).toBe(helpOf(await buildProgram(() => undefined)))
  })

  it.each(['up', 'migrate', 'signature', 'sandbox', 'project', 'reconcile', 'report', 'ledger', 'audit', 'relay'])('with only %s loaded, the top-level help is the same', async (name) => {
    expect(helpOf(await buildProgram(() => undefined, name))).toBe(helpOf(await buildProgram(() => undefined)))
  })
})

describe('each command loads only what it needs (modules traced in a real process)', { timeout: 240_000 }, () => {
  it('satang --help loads the CLI entry, the command list and io, no command module', async () => {
    const r = await modulesLoadedBy(['--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('report reconciliation [options]')
    expect(r.modules).toEqual(['cli.ts', 'cli/command-list.ts', 'cli/io.ts'])
  })

  it('satang signature canonical loads the signature command, not the database, server or projections', async () => {
    const r = await modulesLoadedBy(['signature', 'canonical', '--help'])
    expect(r.code).toBe(0)
    expect(r.modules).toContain('cli/signature.ts')
    expect(r.modules.filter((m) => /^(main|composition\/|roles\/|projections\/|adapters\/http\/)/.test(m))).toEqual([])
  })

  it('satang up loads the roles it may run but not the relay nor its Kafka client, which only a relay process loads (about 45 MiB of RSS, issue 31)', async () => {
    // A real start that gets as far as the database (nothing listens on port 1): every role it may run is loaded by then.
    const r = await modulesLoadedBy(['up'], { SATANG_DATABASE_URL: 'postgres://satang@127.0.0.1:1/satang' })
    expect(r.code, r.stderr).toBe(3)
    expect(r.stderr).toContain('the database cannot be reached')
    expect(r.modules).toContain('main.ts')
    expect(r.modules).toContain('roles/projector.ts')
    expect(r.modules.filter((m) => /^(roles\/relay\.ts|jobs\/relay\/relay\.ts|adapters\/kafka\/)/.test(m))).toEqual([])
  })

  it.each(['migrate --help', 'up --help', 'migrate'])('satang %s loads neither the roles, the HTTP server, Kafka nor the jobs (only satang up starting loads them)', async (command) => {
    const args = command.split(' ')
    const r = await modulesLoadedBy(args, { SATANG_DATABASE_URL: 'postgres://satang@127.0.0.1:1/satang' })
    // migrate reaches for the database (nothing listens on port 1: exit 3); the help exits 0.
    expect(r.code, r.stderr).toBe(args.includes('--help') ? 0 : 3)
    expect(r.modules).toContain('cli/up.ts')
    expect(r.modules.filter((m) => /^(main\.ts|roles\/(api|projector|scheduler|relay)\.ts|adapters\/http\/server\.ts|adapters\/kafka\/|jobs\/reconcile\/|jobs\/relay\/relay\.ts)/.test(m))).toEqual([])
  })

  it('satang report reconciliation --help loads neither the server, the roles nor the other commands', async () => {
    const r = await modulesLoadedBy(['report', 'reconciliation', '--help'])
    expect(r.code).toBe(0)
    expect(r.modules.filter((m) => /^(main\.ts|roles\/|adapters\/http\/server|cli\/(up|sandbox|relay|audit|ledger|project|signature)\.ts)/.test(m))).toEqual([])
  })
})
