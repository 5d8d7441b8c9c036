import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/main.ts'

/** Secrets from files (Docker/Compose secrets): SATANG_API_TOKENS_FILE and SATANG_DATABASE_PASSWORD_FILE. */

const dir = mkdtempSync(join(tmpdir(), 'satang-secret-files-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const file = (name: string, content: string): string => {
  const path = join(dir, name)
  writeFileSync(path, content, { mode: 0o600 })
  return path
}

describe('settings whose secret is in a file', () => {
  it('SATANG_API_TOKENS_FILE holds the tokens in the format of SATANG_API_TOKENS (a trailing newline is not part of them)', async () => {
    const config = await loadConfig({ SATANG_API_TOKENS_FILE: file('tokens', 'shop:shop-token-0123456789abcdef:payments:write+read\n') })
    expect(config.SATANG_API_TOKENS).toEqual([{ name: 'shop', token: 'shop-token-0123456789abcdef', scopes: ['payments:write', 'read'] }])
  })

  it('SATANG_DATABASE_PASSWORD_FILE puts the password into SATANG_DATABASE_URL, encoded, in place of one in the URL', async () => {
    const config = await loadConfig({ SATANG_DATABASE_URL: 'postgres://satang:old@db:5432/satang', SATANG_DATABASE_PASSWORD_FILE: file('pw', 's3cr3t/with:odd@chars\n') })
    const url = new URL(config.SATANG_DATABASE_URL ?? '')
    expect(decodeURIComponent(url.password)).toBe('s3cr3t/with:odd@chars')
    expect(url.username).toBe('satang')
    expect(url.host).toBe('db:5432')
    expect(url.pathname).toBe('/satang')
  })

  it('refuses both SATANG_API_TOKENS and its file, and a password file without a database URL, naming the rule', async () => {
    await expect(loadConfig({ SATANG_API_TOKENS: 'a:token-0123456789abcdef:read', SATANG_API_TOKENS_FILE: file('t2', 'b:token-0123456789abcdef:read') })).rejects.toThrow(/SATANG_API_TOKENS_FILE \(environment\): cannot be set together with SATANG_API_TOKENS/)
    await expect(loadConfig({ SATANG_DATABASE_PASSWORD_FILE: file('pw2', 'x') })).rejects.toThrow(/SATANG_DATABASE_PASSWORD_FILE \(environment\): needs SATANG_DATABASE_URL/)
  })

  it('a missing, empty or invalid file stops start-up naming the variable and the file, never the content', async () => {
    await expect(loadConfig({ SATANG_API_TOKENS_FILE: join(dir, 'absent') })).rejects.toThrow(/SATANG_API_TOKENS_FILE: cannot read ".*absent" \(no such file\)/)
    await expect(loadConfig({ SATANG_DATABASE_URL: 'postgres://satang@db/satang', SATANG_DATABASE_PASSWORD_FILE: file('empty', '\n') })).rejects.toThrow(/SATANG_DATABASE_PASSWORD_FILE: ".*empty" is empty/)
    const bad = loadConfig({ SATANG_API_TOKENS_FILE: file('bad', 'shop:SECRET-VALUE-0123456789:no-such-scope') })
    await expect(bad).rejects.toThrow(/SATANG_API_TOKENS_FILE: the tokens in ".*bad" are invalid/)
    await expect(bad).rejects.not.toThrow(/SECRET-VALUE/)
  })

  it('a file larger than satang reads (a secret past 1 MiB, SATANG_CONFIG past 1 MiB, /dev/zero) stops start-up naming its size and the limit, before it is held', async () => {
    const big = file('big-secret', 'x'.repeat(1024 * 1024 + 1))
    await expect(loadConfig({ SATANG_API_TOKENS_FILE: big })).rejects.toThrow(/SATANG_API_TOKENS_FILE: cannot read ".*big-secret" \(is 1\.0 MiB, more than the 1 MiB satang reads of it\)/)
    await expect(loadConfig({ SATANG_CONFIG: file('big-config.json', `{"SATANG_PORT": 8080, "x": "${'y'.repeat(1024 * 1024)}"}`) })).rejects.toThrow(/SATANG_CONFIG: cannot read ".*big-config\.json" \(is 1\.0 MiB, more than the 1 MiB satang reads of it\)/)
    // A device with no end is cut off at the limit too (no size is trusted).
    await expect(loadConfig({ SATANG_CONFIG: '/dev/zero' })).rejects.toThrow(/SATANG_CONFIG: cannot read "\/dev\/zero" \(is larger than the 1 MiB satang reads of it\)/)
  })
})
