import { createPublicKey, type KeyObject } from 'node:crypto'
import { readTextBounded, readFailureText, READ_LIMITS } from '../adapters/os/bounded-read.ts'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { makeWorkerSigner } from '../adapters/gateway/background-signer.ts'
import { makeGatewayClient, type GatewayClient } from '../adapters/gateway/client.ts'
import type { Config } from '../config.ts'
import { canonicalizers, satangCanonicalV1 } from '../domain/gateway/canonical.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier, type Verifier } from '../domain/gateway/signing.ts'
import { DEFAULT_PAYMENT_STATUS_TABLE, DEFAULT_REFUND_STATUS_TABLE, extendStatusTable, type StatusTable } from '../domain/gateway/statuses.ts'
import { loadOrCreateKeyPair } from '../local-secrets.ts'
import type { Logger } from '../logger.ts'
import { lockSandboxState } from './sandbox-state-lock.ts'
import { DataDirInUse, StartupError, StartupFailure, dataPath } from './startup.ts'

/** The merchant_id the built-in sandbox registers when none is configured. */
export const SANDBOX_MERCHANT_ID = '140000000000000001'

/** The merchant satang serves: `SATANG_MERCHANT_ID`, or the built-in sandbox's default one. */
export const merchantIdOf = (config: Config): string | undefined =>
  config.SATANG_MERCHANT_ID ?? (config.SATANG_GATEWAY_BASE_URL === undefined ? SANDBOX_MERCHANT_ID : undefined)

/** The gateway satang talks to: the configured one, or the built-in sandbox. */
export type GatewayConnection = {
  readonly client: GatewayClient
  /** Verifies callbacks with the gateway's public key. */
  readonly verifier: Verifier
  readonly merchantId: string
  /** For start-up output: where the gateway is, without secrets. */
  readonly description: string
  readonly sandbox?: { readonly url: string; readonly controlUrl: string; readonly publicKeyUrl: string; readonly stateFile: string }
  /** The merchant key pair, when satang keeps it in the data folder. */
  readonly merchantKey?: { readonly privateKeyPath: string; readonly publicKeyPath: string; readonly generated: boolean }
  readonly close: () => Promise<void>
}

const readKeyFile = async (variable: string, path: string, load: (pem: string) => E.Either<{ readonly message: string }, KeyObject>): Promise<KeyObject> => {
  let pem: string
  try {
    pem = await readTextBounded(path, READ_LIMITS.key)
  } catch (e) {
    throw new StartupError(`${variable}: cannot read ${JSON.stringify(path)} (${readFailureText(e)})`)
  }
  const key = load(pem)
  if (E.isLeft(key)) throw new StartupError(`${variable}: ${key.left.message}`)
  return key.right
}

export const clientFor = (config: Config, log: Logger, baseUrl: string, signingKey: KeyObject, responseVerifier: Verifier | undefined, retriableCodes: ReadonlyArray<number>): GatewayClient =>
  makeGatewayClient({
    baseUrl,
    merchantSigner: makeSigner(canonicalizers[config.SATANG_CANONICALIZER] ?? satangCanonicalV1, signingKey),
    // Signing on worker threads, started at the first request: the event loop keeps only the strings.
    backgroundSigner: makeWorkerSigner(canonicalizers[config.SATANG_CANONICALIZER] ?? satangCanonicalV1, signingKey),
    ...(responseVerifier === undefined ? {} : { gatewayVerifier: responseVerifier }),
    log,
    timeouts: { connectMs: config.SATANG_GATEWAY_CONNECT_TIMEOUT_MS, requestMs: config.SATANG_GATEWAY_TIMEOUT_MS },
    retry: { maxAttempts: config.SATANG_GATEWAY_QUERY_MAX_ATTEMPTS, baseDelayMs: config.SATANG_GATEWAY_RETRY_BASE_MS, maxDelayMs: config.SATANG_GATEWAY_RETRY_MAX_MS, retriableCodes },
  })

/**
 * `SATANG_GATEWAY_BASE_URL` with the configured keys; or, when it is unset, the sandbox in this
 * process: its gateway key and state under `<data>/sandbox` (the state file locked for `command`: a
 * second sandbox on it is refused with DataDirInUse), the merchant key pair under `<data>` (generated
 * on first start), the merchant registered with its public key.
 */
export const connectGateway = async (config: Config, log: Logger, command: string): Promise<GatewayConnection> => {
  const canonicalizer = canonicalizers[config.SATANG_CANONICALIZER] ?? satangCanonicalV1
  if (config.SATANG_GATEWAY_BASE_URL !== undefined) {
    const { SATANG_MERCHANT_ID: merchantId, SATANG_MERCHANT_PRIVATE_KEY_FILE: keyFile, SATANG_GATEWAY_PUBLIC_KEY_FILE: gatewayKeyFile } = config
    if (merchantId === undefined || keyFile === undefined || gatewayKeyFile === undefined) throw new StartupError('a gateway base URL needs SATANG_MERCHANT_ID and both key files')
    const signingKey = await readKeyFile('SATANG_MERCHANT_PRIVATE_KEY_FILE', keyFile, loadPrivateKey)
    const gatewayKey = await readKeyFile('SATANG_GATEWAY_PUBLIC_KEY_FILE', gatewayKeyFile, loadPublicKey)
    const client = clientFor(config, log, config.SATANG_GATEWAY_BASE_URL, signingKey, undefined, [])
    const u = new URL(config.SATANG_GATEWAY_BASE_URL)
    return {
      client,
      verifier: makeVerifier(canonicalizer, gatewayKey),
      merchantId,
      description: `gateway at ${u.origin}${u.pathname === '/' ? '' : u.pathname}`,
      close: async () => client.close(),
    }
  }

  const merchantId = merchantIdOf(config) ?? SANDBOX_MERCHANT_ID
  let signingKey: KeyObject
  let merchantKey: GatewayConnection['merchantKey']
  if (config.SATANG_MERCHANT_PRIVATE_KEY_FILE !== undefined) {
    signingKey = await readKeyFile('SATANG_MERCHANT_PRIVATE_KEY_FILE', config.SATANG_MERCHANT_PRIVATE_KEY_FILE, loadPrivateKey)
  } else {
    const pair = await loadOrCreateKeyPair(dataPath(config, 'merchant-private.pem'), dataPath(config, 'merchant-public.pem'))
    if (E.isLeft(pair)) throw new StartupError(`SATANG_DATA_DIR: the merchant key: ${pair.left}`)
    signingKey = pair.right.privateKey
    merchantKey = { privateKeyPath: pair.right.privateKeyPath, publicKeyPath: pair.right.publicKeyPath, generated: pair.right.generated }
  }
  const sandboxDir = dataPath(config, 'sandbox')
  const stateFile = join(sandboxDir, 'state.json')
  const stateLock = await lockSandboxState(log, stateFile, `the built-in sandbox of ${command}`)
  if (E.isLeft(stateLock)) throw new DataDirInUse(`SATANG_DATA_DIR: ${stateLock.left}`)
  // Loaded only when it runs: the sandbox (its HTTP server and pages) is no part of the tool commands.
  const { launchSandbox } = await import('../sandbox/launch.ts')
  const launched = await launchSandbox({
    log,
    host: config.SATANG_HTTP_HOST,
    port: config.SATANG_SANDBOX_PORT,
    merchants: new Map([[merchantId, createPublicKey(signingKey)]]),
    dataDir: sandboxDir,
    statePath: stateFile,
    canonicalizer,
  })
  if (E.isLeft(launched)) {
    await stateLock.right.release()
    const f = launched.left
    throw new (f.setting === 'listen' ? StartupFailure : StartupError)(
      f.setting === 'listen'
        ? f.code === 'EADDRINUSE'
          ? `SATANG_SANDBOX_PORT: port ${String(config.SATANG_SANDBOX_PORT)} is in use; choose another port for the built-in sandbox`
          : `the built-in sandbox did not start: ${f.message}`
        : `SATANG_DATA_DIR: the built-in sandbox: ${f.message}`,
    )
  }
  const sandbox = launched.right.sandbox
  const gatewayPublic = loadPublicKey(sandbox.publicKeyPem)
  if (E.isLeft(gatewayPublic)) throw new Error(`the sandbox's own public key is unusable: ${gatewayPublic.left.message}`)
  const verifier = makeVerifier(canonicalizer, gatewayPublic.right)
  // The sandbox signs its answers and rate-limits with 429001: both are its documented behaviour.
  const client = clientFor(config, log, sandbox.url, signingKey, verifier, [429001])
  return {
    client,
    verifier,
    merchantId,
    description: `the built-in sandbox at ${sandbox.url} (merchant ${merchantId})`,
    sandbox: { url: sandbox.url, controlUrl: sandbox.controlUrl, publicKeyUrl: sandbox.publicKeyUrl, stateFile },
    ...(merchantKey === undefined ? {} : { merchantKey }),
    close: async () => {
      client.close()
      await sandbox.close()
      await stateLock.right.release()
    },
  }
}

/** The built-in sandbox's status for a failed payment (its `failedStatus` setting's default). */
const SANDBOX_FAILED_STATUS: StatusTable = { PF: { meaning: 'payment failed (the built-in sandbox)', outcome: 'failed' } }

/**
 * The spec's status codes plus the configured ones (`SATANG_PAYMENT_STATUSES`, `SATANG_REFUND_STATUSES`).
 * With the built-in sandbox as the gateway, its failed status is known too unless configured otherwise.
 */
export const statusTables = (config: Config): { readonly payment: StatusTable; readonly refund: StatusTable } => {
  const builtInSandbox = config.SATANG_GATEWAY_BASE_URL === undefined
  const payment = extendStatusTable(DEFAULT_PAYMENT_STATUS_TABLE, { ...(builtInSandbox ? SANDBOX_FAILED_STATUS : {}), ...(config.SATANG_PAYMENT_STATUSES ?? {}) })
  const refund = extendStatusTable(DEFAULT_REFUND_STATUS_TABLE, config.SATANG_REFUND_STATUSES ?? {})
  const problems = [
    ...(E.isLeft(payment) ? payment.left.map((p) => `SATANG_PAYMENT_STATUSES: ${p}`) : []),
    ...(E.isLeft(refund) ? refund.left.map((p) => `SATANG_REFUND_STATUSES: ${p}`) : []),
  ]
  if (E.isLeft(payment) || E.isLeft(refund)) throw new StartupError(['invalid configuration:', ...problems.map((p) => `  ${p}`)].join('\n'))
  return { payment: payment.right, refund: refund.right }
}
