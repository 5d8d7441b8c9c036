import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { decodeConfig, type Config } from '../../src/config.ts'
import { silentLogger } from '../../src/logger.ts'
import { startSatang, type Running } from '../../src/main.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, startSandbox } from '../sandbox/support.ts'
import { envWithoutSatangSettings } from './process.ts'

/**
 * satang in the test process on a fresh database, with the sandbox (also in this process) as its
 * gateway over real HTTP, the scheduler off; `toolEnv` configures a `satang` child process (a CLI
 * command) for the same database, gateway and keys.
 */
export type SatangWithSandbox = {
  readonly sandbox: Sandbox
  readonly satang: Running
  readonly config: Config
  readonly dir: string
  readonly databaseUrl: string
  /** A request to the merchant API with the test token. */
  readonly api: (method: string, path: string, body?: unknown) => Promise<{ readonly status: number; readonly json: Record<string, unknown> }>
  readonly toolEnv: (extra?: NodeJS.ProcessEnv) => NodeJS.ProcessEnv
  readonly stop: () => Promise<void>
}

const TOKEN = 'satang-with-sandbox-token-0123456789'

export const startSatangWithSandbox = async (label: string, settings: Readonly<Record<string, string>> = {}): Promise<SatangWithSandbox> => {
  const dir = mkdtempSync(join(tmpdir(), `satang-${label}-`))
  const db = await freshDatabase(label)
  const sandbox = await startSandbox()
  writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
  writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
  const shared = {
    SATANG_DATABASE_URL: db.url,
    SATANG_GATEWAY_BASE_URL: sandbox.url,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
    SATANG_DATA_DIR: dir,
  }
  const config = decodeConfig({
    ...shared,
    SATANG_HTTP_PORT: '0',
    SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read+audit+reconcile:write`,
    SATANG_LOG_LEVEL: 'silent',
    SATANG_RECONCILE_SCHEDULER: 'off',
    ...settings,
  })
  if (E.isLeft(config)) throw new Error(JSON.stringify(config.left))
  const satang = await startSatang(config.right, silentLogger(), { allowSuperuser: true })
  return {
    sandbox,
    satang,
    config: config.right,
    dir,
    databaseUrl: db.url,
    api: async (method, path, body) => {
      const res = await fetch(`${satang.httpUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: res.status, json: (await res.json()) as Record<string, unknown> }
    },
    toolEnv: (extra = {}) => envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', ...shared, ...extra }),
    stop: async () => {
      await satang.stop()
      await sandbox.close()
      await db.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
