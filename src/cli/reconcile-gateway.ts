import * as E from 'fp-ts/lib/Either.js'
import { loadOrCreateGatewayKey } from '../sandbox/keys.ts'
import type { Config } from '../config.ts'
import { canonicalizers, satangCanonicalV1 } from '../domain/gateway/canonical.ts'
import { loadPublicKey, makeVerifier } from '../domain/gateway/signing.ts'
import { loadOrCreateKeyPair } from '../local-secrets.ts'
import type { Logger } from '../logger.ts'
import { clientFor, connectGateway, merchantIdOf, SANDBOX_MERCHANT_ID, type GatewayConnection } from '../composition/gateway.ts'
import { dataPath, StartupError } from '../composition/startup.ts'

/**
 * The gateway for a tool such as `satang reconcile`: the configured one; or, with the built-in
 * sandbox, the sandbox `satang up` is running (its port answers), reached with the keys of the data
 * folder; or, when none runs, one started in this process (as `satang up` would).
 */
export const connectGatewayForTool = async (config: Config, log: Logger): Promise<GatewayConnection> => {
  if (config.SATANG_GATEWAY_BASE_URL !== undefined) return connectGateway(config, log, 'satang reconcile')
  const host = config.SATANG_HTTP_HOST === '0.0.0.0' || config.SATANG_HTTP_HOST === '::' ? '127.0.0.1' : config.SATANG_HTTP_HOST
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${String(config.SATANG_SANDBOX_PORT)}`
  const running = await fetch(`${url}/_sandbox`, { signal: AbortSignal.timeout(2_000) }).then(
    (r) => r.ok,
    () => false,
  )
  if (!running) return connectGateway(config, log, 'satang reconcile')
  const canonicalizer = canonicalizers[config.SATANG_CANONICALIZER] ?? satangCanonicalV1
  const pair = await loadOrCreateKeyPair(dataPath(config, 'merchant-private.pem'), dataPath(config, 'merchant-public.pem'))
  if (E.isLeft(pair)) throw new StartupError(`SATANG_DATA_DIR: the merchant key: ${pair.left}`)
  const gatewayKey = await loadOrCreateGatewayKey(undefined, dataPath(config, 'sandbox'))
  if (E.isLeft(gatewayKey)) throw new StartupError(`SATANG_DATA_DIR: the sandbox's gateway key: ${gatewayKey.left}`)
  const gatewayPublic = loadPublicKey(gatewayKey.right.publicKeyPem)
  if (E.isLeft(gatewayPublic)) throw new StartupError(`the sandbox's gateway key is unusable: ${gatewayPublic.left.message}`)
  const verifier = makeVerifier(canonicalizer, gatewayPublic.right)
  // As connectGateway: the sandbox signs its answers and rate-limits with 429001.
  const client = clientFor(config, log, url, pair.right.privateKey, verifier, [429001])
  return {
    client,
    verifier,
    merchantId: merchantIdOf(config) ?? SANDBOX_MERCHANT_ID,
    description: `the built-in sandbox of the running satang at ${url}`,
    close: async () => client.close(),
  }
}
