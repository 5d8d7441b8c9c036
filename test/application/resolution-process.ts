// One satang process resolving unknown payment outcomes, for test/application/resolution-processes.int.test.ts:
// `node test/application/resolution-process.ts` with RESOLVE_DATABASE_URL, RESOLVE_SCHEMA, RESOLVE_GATEWAY,
// RESOLVE_STREAMS (comma separated), RESOLVE_TRIES (concurrent attempts per stream in this process) and
// RESOLVE_LOCKS (`postgres`, or `none` for the control run that shows what the lock prevents).
// Prints `ready`, waits for a line on stdin, resolves, prints one JSON line of the steps' tags, exits.
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { makeGatewayClient } from '../../src/adapters/gateway/client.ts'
import { makePostgresStreamLocks } from '../../src/adapters/postgres/job-lock.ts'
import { makeRecording } from '../../src/application/index.ts'
import type { StreamLocks } from '../../src/application/ports/job-lock.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier } from '../../src/domain/gateway/signing.ts'
import { DEFAULT_PAYMENT_STATUS_TABLE, DEFAULT_REFUND_STATUS_TABLE } from '../../src/domain/gateway/statuses.ts'
import { silentLogger } from '../../src/logger.ts'
import { loadSigningVectors } from '../support/vectors.ts'

const env = (name: string): string => {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`${name} is required`)
  return v
}

const vectors = loadSigningVectors()
const merchantKey = loadPrivateKey(vectors.keys.merchant.private_key_pem)
const gatewayKey = loadPublicKey(vectors.keys.gateway.public_key_pem)
if (E.isLeft(merchantKey) || E.isLeft(gatewayKey)) throw new Error('the test keys do not load')

const log = silentLogger()
const pool = new Pool({ connectionString: env('RESOLVE_DATABASE_URL'), max: 4 })
const store = makePostgresEventStore({ pool, log }, { schema: env('RESOLVE_SCHEMA') })
const postgresLocks = makePostgresStreamLocks({ pool, log })
const noLocks: StreamLocks = { tryLock: () => async () => E.right({ release: async () => undefined }) }
const gateway = makeGatewayClient({
  baseUrl: env('RESOLVE_GATEWAY'),
  merchantSigner: makeSigner(satangCanonicalV1, merchantKey.right),
  log,
  timeouts: { connectMs: 2_000, requestMs: 10_000 },
  retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10 },
})
const recording = makeRecording({
  store,
  gateway,
  gatewayVerifier: makeVerifier(satangCanonicalV1, gatewayKey.right),
  merchantId: '140000000000000001',
  callbackUrls: () => ({ notify: 'http://127.0.0.1:1/n', checkoutRedirect: 'http://127.0.0.1:1/r', subscriptionRedirect: 'http://127.0.0.1:1/s' }),
  statusTables: { payment: DEFAULT_PAYMENT_STATUS_TABLE, refund: DEFAULT_REFUND_STATUS_TABLE },
  now: () => new Date(),
  newId: randomUUID,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  log,
  resolve: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10, notFoundAfterMs: 0, notFoundCodes: [404001] },
  streamLocks: env('RESOLVE_LOCKS') === 'none' ? noLocks : postgresLocks,
  crashPoint: () => undefined,
  stopping: new AbortController().signal,
})

const streams = env('RESOLVE_STREAMS').split(',')
const tries = Number(env('RESOLVE_TRIES'))

process.stdout.write('ready\n')
const lines = createInterface({ input: process.stdin })
await new Promise<void>((resolve) => lines.once('line', () => resolve()))
const steps = await Promise.all(
  streams.flatMap((stream) => Array.from({ length: tries }, () => recording.resolver.resolveOnce(stream, { correlationId: `p-${String(process.pid)}`, causationId: 'test' }))),
)
process.stdout.write(`${JSON.stringify(steps.map((s) => (s._tag === 'Pending' ? `Pending: ${s.why}` : s._tag)))}\n`)
lines.close()
await postgresLocks.close()
await store.close()
await pool.end()
