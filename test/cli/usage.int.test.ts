import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/** The command line as the README describes it: what --help lists, exit codes and error messages. */

const cwd = mkdtempSync(join(tmpdir(), 'satang-usage-'))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))
const satang = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => runCli(args, { env: envWithoutSatangSettings({ SATANG_DATA_DIR: join(cwd, 'data'), ...env }), cwd })

describe('satang --help', () => {
  it('lists the nested commands under their full names: audit verify, report ledger, signature verify', async () => {
    const r = await satang(['--help'])
    expect(r.code).toBe(0)
    for (const command of ['audit \\[options\\] <id>', 'audit verify \\[options\\]', 'report ledger \\[options\\]', 'signature verify \\[options\\]', 'migrate']) {
      expect(r.stdout).toMatch(new RegExp(`^  ${command}\\s`, 'm'))
    }
  })
})

describe('configuration errors', () => {
  it.each([['up'], ['migrate'], ['audit', 'ORD-1'], ['project', '--status']])('satang %s: one "satang:" prefix, every bad variable named, exit 2', async (...args) => {
    const r = await satang(args, { SATANG_HTTP_PORT: 'eighty', SATANG_LOG_LEVEL: 'loud' })
    expect(r.code).toBe(2)
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines[0]).toBe('satang: invalid configuration:')
    expect(lines.slice(1).sort()).toEqual([
      '  SATANG_HTTP_PORT (environment): must be a whole number from 0 to 65535',
      '  SATANG_LOG_LEVEL (environment): must be one of fatal, error, warn, info, debug, trace, silent',
    ])
  })

  it('a status table that redefines a code of the spec: named once, exit 2, before anything starts', async () => {
    const r = await satang(['up'], { SATANG_PAYMENT_STATUSES: '{"PS":{"meaning":"paid?","outcome":"failed"}}', SATANG_HTTP_PORT: '0' })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^satang: invalid configuration:\n {2}SATANG_PAYMENT_STATUSES: /)
    expect(r.stderr).not.toContain('satang: satang:')
  })
})

describe('satang migrate: exit codes as the README table says', () => {
  it('--help: 0 ok, 2 bad configuration, 3 a failed migration', async () => {
    const r = await satang(['migrate', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Exit codes: 0 ok, 2 bad configuration, 3 the database could not be reached or a migration failed.')
  })

  it('a database that cannot be reached: the migration fails with exit 3 and says why', async () => {
    const r = await satang(['migrate'], { SATANG_DATABASE_URL: 'postgres://satang@127.0.0.1:9/none' })
    expect(r.code).toBe(3)
    expect(r.stderr).toMatch(/^satang: migration of the event store failed: connect ECONNREFUSED 127\.0\.0\.1:9$/m)
  })
})

describe('satang audit <id>: bad input is exit 2', () => {
  it.each([
    ['bad id/../x', 'must contain only digits, letters, dash and underline'],
    ['x'.repeat(65), 'must be at most 64 characters'],
    ['', 'must not be empty'],
  ])('%j is not a merchant_order_id: the message says which rule, and what to give instead', async (id, rule) => {
    // No database is configured or started: the id is refused first.
    const r = await satang(['audit', id])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`is not a merchant_order_id: it ${rule}; for a refund or a subscription give --kind`)
    expect(r.stderr.split('\n')).toHaveLength(2)
  })
})
