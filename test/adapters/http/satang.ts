import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { decodeConfig } from '../../../src/config.ts'
import { silentLogger, type Logger } from '../../../src/logger.ts'
import { startSatang, type Running } from '../../../src/main.ts'
import { GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM } from '../../sandbox/support.ts'

/**
 * satang in this process on the database at `databaseUrl`, calling the gateway at `gatewayUrl` with the
 * signing vectors' keys (written into `dir`, also its data directory), on a free port, with one API
 * token of every scope. The reconciliation scheduler is off unless `settings` turn it on: its daily run
 * starts in the background and appends a run's events at a moment that depends on the machine's load,
 * which tests that check what a request appended would count as the request's.
 */
export const startTestSatang = async (o: { readonly databaseUrl: string; readonly gatewayUrl: string; readonly dir: string; readonly token: string; readonly settings?: Readonly<Record<string, string>>; readonly log?: Logger }): Promise<Running> => {
  writeFileSync(join(o.dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
  writeFileSync(join(o.dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
  const config = decodeConfig({
    SATANG_DATABASE_URL: o.databaseUrl,
    SATANG_GATEWAY_BASE_URL: o.gatewayUrl,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(o.dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(o.dir, 'gateway.pem'),
    SATANG_HTTP_PORT: '0',
    SATANG_API_TOKENS: `test:${o.token}:payments:write+read+audit`,
    SATANG_DATA_DIR: o.dir,
    SATANG_LOG_LEVEL: 'silent',
    SATANG_RECONCILE_SCHEDULER: 'off',
    ...o.settings,
  })
  if (E.isLeft(config)) throw new Error(JSON.stringify(config.left))
  return startSatang(config.right, o.log ?? silentLogger(), { allowSuperuser: true })
}
