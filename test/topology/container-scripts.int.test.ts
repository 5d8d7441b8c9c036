import { spawn } from 'node:child_process'
import { createPrivateKey } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import { ApiTokens } from '../../src/adapters/http/api-tokens.ts'
import { loadPrivateKey, loadPublicKey } from '../../src/domain/gateway/signing.ts'
import { ROOT } from './compose-file.ts'

/** The scripts the containers run: the health check (HEALTHCHECK) and the secrets docker-compose.yml reads. */

const run = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out }))
  })

const dir = mkdtempSync(join(tmpdir(), 'satang-container-scripts-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('scripts/healthcheck.ts', () => {
  it('exits 0 while /healthz on SATANG_HTTP_PORT answers 200, 1 (with the reason) on 503 or when nothing listens', async () => {
    let status = 200
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/healthz' ? status : 404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ status: status === 200 ? 'ok' : 'unavailable' }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    const port = typeof address === 'object' && address !== null ? String(address.port) : '0'
    const script = fileURLToPath(new URL('scripts/healthcheck.ts', ROOT))
    try {
      expect((await run(process.execPath, [script], { SATANG_HTTP_PORT: port })).code).toBe(0)
      status = 503
      const down = await run(process.execPath, [script], { SATANG_HTTP_PORT: port })
      expect(down.code).toBe(1)
      expect(down.out).toContain('answered 503')
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
    const gone = await run(process.execPath, [script], { SATANG_HTTP_PORT: port })
    expect(gone.code).toBe(1)
    expect(gone.out).toMatch(/healthcheck: http:\/\/127\.0\.0\.1:\d+\/healthz: /)
  })
})

describe('scripts/compose-secrets.sh', () => {
  it('writes every secret the compose file reads, in forms satang loads, and leaves existing ones alone', async () => {
    const script = fileURLToPath(new URL('scripts/compose-secrets.sh', ROOT))
    const target = join(dir, 'secrets')
    const first = await run('bash', [script, target])
    expect(first.code, first.out).toBe(0)
    const read = (name: string): string => readFileSync(join(target, name), 'utf8')
    expect(E.isRight(ApiTokens.decode(read('api-tokens').trim()))).toBe(true)
    expect(read('db-password').trim()).toMatch(/^[0-9a-f]{48}$/)
    expect(read('db-service-password').trim()).toMatch(/^[0-9a-f]{48}$/)
    expect(read('db-service-password')).not.toBe(read('db-password'))
    expect(read('session-secret').trim()).toMatch(/^[0-9a-f]{64}$/)
    for (const who of ['merchant', 'gateway']) {
      expect(E.isRight(loadPrivateKey(read(`${who}-private.pem`))), who).toBe(true)
      expect(E.isRight(loadPublicKey(read(`${who}-public.pem`))), who).toBe(true)
    }
    // The scheduler's anchor key (Compose secret anchor_private_key): the Ed25519 key satang loads.
    expect(createPrivateKey(read('anchor-private.pem')).asymmetricKeyType).toBe('ed25519')
    expect(statSync(target).mode & 0o777).toBe(0o700)
    const password = read('db-password')
    const again = await run('bash', [script, target])
    expect(again.code).toBe(0)
    expect(again.out).toContain('every secret already in')
    expect(read('db-password')).toBe(password)
  })
})
