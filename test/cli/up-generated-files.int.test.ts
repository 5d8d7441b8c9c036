import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../adapters/http/database.ts'
import { GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM } from '../sandbox/support.ts'
import { runCli } from '../support/cli.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess } from '../support/process.ts'

/**
 * `satang up` (the api role, on the int tests' PostgreSQL) prints where the secrets it generated are
 * kept, the console session secret (SATANG_DATA_DIR/session-secret) beside the API token, never their
 * contents; a symbolic link planted at one of them stops it with exit 2, naming the path and the rule,
 * and the file the link points at is untouched. A real process.
 */

let database: { readonly url: string; readonly drop: () => Promise<void> }
const root = mkdtempSync(join(tmpdir(), 'satang-up-files-'))
const keys = mkdtempSync(join(root, 'keys-'))
writeFileSync(join(keys, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
writeFileSync(join(keys, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)

beforeAll(async () => {
  database = await freshDatabase('upfiles')
  const migrated = await runCli(['migrate'], { env: envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'error', SATANG_DATABASE_URL: database.url, SATANG_DATA_DIR: join(root, 'migrate') }), cwd: root })
  expect(migrated.code, migrated.stderr).toBe(0)
})
afterAll(async () => {
  await database.drop()
  rmSync(root, { recursive: true, force: true })
})

const env = async (dataDir: string): Promise<NodeJS.ProcessEnv> =>
  envWithoutSatangSettings({
    SATANG_LOG_LEVEL: 'error',
    SATANG_DATABASE_URL: database.url,
    SATANG_DATA_DIR: dataDir,
    SATANG_HTTP_PORT: String(await freePort()),
    SATANG_GATEWAY_BASE_URL: `http://127.0.0.1:${String(await freePort())}`,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(keys, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(keys, 'gateway.pem'),
  })

describe('satang up and the secrets it generates', () => {
  it('prints where the API token and the console session secret are (generated now, then reused), never their contents', async () => {
    const data = join(root, 'data')
    for (const generated of [true, false]) {
      const e = await env(data)
      const up = startSatangProcess(['up', '--role', 'api'], { env: e, cwd: root })
      try {
        await up.waitFor(/up \(role api\)\. Ctrl-C stops\./)
        expect((await fetch(`http://127.0.0.1:${String(e['SATANG_HTTP_PORT'])}/healthz`)).status).toBe(200)
      } finally {
        expect(await up.stop('SIGTERM'), `${up.stdout()}\n${up.stderr()}`).toBe(0)
      }
      const now = generated ? ' (generated now)' : ''
      expect(up.stdout()).toContain(`satang: API token (every scope) in ${join(data, 'api-token')}${now}\nsatang: console session secret in ${join(data, 'session-secret')}${now}\n`)
      expect(statSync(join(data, 'session-secret')).mode & 0o777).toBe(0o600)
      expect(up.stdout()).not.toContain(readFileSync(join(data, 'session-secret'), 'utf8').trim())
      expect(up.stdout()).not.toContain(readFileSync(join(data, 'api-token'), 'utf8').trim())
    }
  })

  it('a link planted at the session secret stops it (exit 2), naming the path and the rule; the file it points at untouched', async () => {
    const data = mkdtempSync(join(root, 'linked-'))
    const victim = join(mkdtempSync(join(root, 'victim-')), 'victim.txt')
    writeFileSync(victim, 'victim-0123456789abcdef-0123456789abcdef\n')
    chmodSync(victim, 0o644)
    const past = new Date('2020-01-02T03:04:05.000Z')
    utimesSync(victim, past, past)
    symlinkSync(victim, join(data, 'session-secret'))
    const r = await runCli(['up', '--role', 'api'], { env: await env(data), cwd: root })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`${JSON.stringify(join(data, 'session-secret'))} is a symbolic link`)
    expect(readFileSync(victim, 'utf8')).toBe('victim-0123456789abcdef-0123456789abcdef\n')
    expect(statSync(victim).mtimeMs).toBe(past.getTime())
  })
})
