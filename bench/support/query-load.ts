// The bare baseline of the reconcile bench, run as a process of its own: `count` signed payment queries
// (merchant_order_id `<prefix><n>`) sent straight to the gateway with `concurrency` in flight, through
// the same client satang uses (signing, keep-alive, retries), recording nothing. Prints one JSON line:
// { queries, failures, seconds }.
//   node bench/support/query-load.ts <gatewayUrl> <merchantId> <merchantPrivateKeyPem> <prefix> <count> <concurrency>
import { readFileSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { makeWorkerSigner } from '../../src/adapters/gateway/background-signer.ts'
import { makeGatewayClient } from '../../src/adapters/gateway/client.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { loadPrivateKey, makeSigner } from '../../src/domain/gateway/signing.ts'
import { silentLogger } from '../../src/logger.ts'

const [url, merchantId, keyFile, prefix, countText, concurrencyText] = process.argv.slice(2)
if (url === undefined || merchantId === undefined || keyFile === undefined || prefix === undefined || countText === undefined || concurrencyText === undefined) {
  process.stderr.write('usage: query-load.ts <gatewayUrl> <merchantId> <merchantPrivateKeyPem> <prefix> <count> <concurrency>\n')
  process.exit(2)
}
const key = loadPrivateKey(readFileSync(keyFile, 'utf8'))
if (E.isLeft(key)) throw new Error(key.left.message)
const client = makeGatewayClient({
  baseUrl: url,
  merchantSigner: makeSigner(satangCanonicalV1, key.right),
  // As satang's own client does (src/composition/gateway.ts): signing on worker threads.
  backgroundSigner: makeWorkerSigner(satangCanonicalV1, key.right),
  log: silentLogger(),
  timeouts: { connectMs: 3_000, requestMs: 15_000 },
  retry: { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5_000 },
})
const count = Number(countText)
let next = 0
let failures = 0
const started = performance.now()
await Promise.all(
  Array.from({ length: Number(concurrencyText) }, async () => {
    for (;;) {
      const n = next
      next += 1
      if (n >= count) return
      const r = await client.queryPayment({ merchant_id: merchantId, merchant_order_id: `${prefix}${String(n)}` })()
      if (E.isLeft(r)) failures += 1
    }
  }),
)
const seconds = (performance.now() - started) / 1000
client.close()
process.stdout.write(`${JSON.stringify({ queries: count, failures, seconds })}\n`)
