import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/**
 * Issue 25, item 5: `satang up` and `satang migrate` exit with the same code for the same start-up
 * failure (README "Command line", docs/operations.md "Exit codes of satang up and satang migrate"):
 * 3 when the database cannot be reached, 2 for a bad setting.
 */

const dir = mkdtempSync(join(tmpdir(), 'satang-exit-codes-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('exit codes of satang up and satang migrate agree', () => {
  it('the database unreachable (nothing listens on its port): 3 from both, naming the database', async () => {
    const port = await freePort()
    const env = envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATA_DIR: join(dir, 'data'), SATANG_DATABASE_URL: `postgres://satang@127.0.0.1:${String(port)}/satang` })
    const [up, migrate] = await Promise.all([runCli(['up', '--role', 'projector'], { env, cwd: dir }), runCli(['migrate'], { env, cwd: dir })])
    expect(migrate.code, migrate.stderr).toBe(3)
    expect(up.code, up.stderr).toBe(3)
    // Both say why: the connection was refused.
    for (const r of [up, migrate]) expect(r.stderr).toContain(`ECONNREFUSED 127.0.0.1:${String(port)}`)
  }, 120_000)

  it('a bad setting: 2 from both, naming the variable', async () => {
    const env = envWithoutSatangSettings({ SATANG_DATABASE_URL: 'mysql://db/x' })
    const [up, migrate] = await Promise.all([runCli(['up'], { env, cwd: dir }), runCli(['migrate'], { env, cwd: dir })])
    for (const r of [up, migrate]) {
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain('SATANG_DATABASE_URL (environment): must be a URL with scheme postgres or postgresql')
    }
  }, 120_000)
})
