// The gateway sandbox under load: create + query round trips over loopback with the real merchant-side
// client (signing requests, verifying answers), against `satang sandbox` running as its own process.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { makeGatewayClient, type GatewayClient } from '../src/adapters/gateway/client.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier } from '../src/domain/gateway/signing.ts'
import { satangCanonicalV1 } from '../src/domain/gateway/canonical.ts'
import { loadSigningVectors } from '../test/support/vectors.ts'
import { startBenchSandbox, writeKeyFiles } from './support/sandbox-process.ts'
import { MERCHANT_ID } from './support/seeded.ts'
import { percentile } from './support/stats.ts'
import type { BenchContext, BenchResult } from './types.ts'

const CALLERS = 8
const WARM_UP_MS = 1_000
const MEASURE_MS = 5_000

const roundTrip = async (client: GatewayClient, merchantOrderId: string): Promise<void> => {
  const created = await client.createDirectPayment({
    service: 'svc.thaiqr.pay',
    merchant_id: MERCHANT_ID,
    merchant_order_id: merchantOrderId,
    order_amount: '199.00',
    order_currency: 'THB',
    order_desc: 'Bench order',
    payment_method: 'THAI_QR',
    customer: { merchant_user_id: 'bench' },
  })()
  if (E.isLeft(created)) throw new Error(`create failed: ${JSON.stringify(created.left._tag)}`)
  const queried = await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: merchantOrderId })()
  if (E.isLeft(queried)) throw new Error(`query failed: ${JSON.stringify(queried.left._tag)}`)
}

/** Runs `CALLERS` callers for `ms`; returns the latency (ms) of every round trip. */
const drive = async (client: GatewayClient, prefix: string, ms: number): Promise<number[]> => {
  const latencies: number[] = []
  const until = performance.now() + ms
  let n = 0
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (performance.now() < until) {
        n += 1
        const started = performance.now()
        await roundTrip(client, `${prefix}-${String(n)}`)
        latencies.push(performance.now() - started)
      }
    }),
  )
  return latencies
}

/** Create + query round trips per second over loopback, with p50 and p99 latency. */
export async function run(ctx: BenchContext): Promise<ReadonlyArray<BenchResult>> {
  const vectors = loadSigningVectors()
  const merchantKey = loadPrivateKey(vectors.keys.merchant.private_key_pem)
  const gatewayKey = loadPublicKey(vectors.keys.gateway.public_key_pem)
  if (E.isLeft(merchantKey) || E.isLeft(gatewayKey)) throw new Error('signing vectors unusable')
  const dir = await mkdtemp(join(tmpdir(), 'satang-bench-sandbox-'))
  const sandbox = await startBenchSandbox(writeKeyFiles(dir), ['--rate-limit', '0'])
  const client = makeGatewayClient({
    baseUrl: sandbox.url,
    merchantSigner: makeSigner(satangCanonicalV1, merchantKey.right),
    gatewayVerifier: makeVerifier(satangCanonicalV1, gatewayKey.right),
    log: ctx.log,
    timeouts: { connectMs: 2_000, requestMs: 10_000 },
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })
  try {
    await drive(client, 'warm', WARM_UP_MS)
    const started = performance.now()
    const latencies = await drive(client, 'bench', MEASURE_MS)
    const seconds = (performance.now() - started) / 1000
    const sorted = [...latencies].sort((a, b) => a - b)
    const round = (x: number): number => Math.round(x * 100) / 100
    return [
      { name: `create+query round trips/s (${String(CALLERS)} callers, loopback)`, value: Math.round(latencies.length / seconds), unit: 'round trips/s' },
      { name: 'create+query round trip p50', value: round(percentile(sorted, 50)), unit: 'ms' },
      { name: 'create+query round trip p99', value: round(percentile(sorted, 99)), unit: 'ms' },
    ]
  } finally {
    client.close()
    await sandbox.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
