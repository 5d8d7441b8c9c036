// Notification ingestion benchmark: satang (in this process, on its own database) receives signed
// PAYMENT notifications over loopback HTTP; each is verified (RSA-2048), decided and appended. Figures:
// notifications ingested per second with p50/p99 latency, for new observations and for redeliveries
// (idempotent: verified, read, nothing appended).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Client } from 'pg'
import { loadPrivateKey, loadPublicKey, makeSigner, signedForm } from '../src/domain/gateway/signing.ts'
import { makeSandbox } from '../src/sandbox/sandbox.ts'
import { decodeConfig } from '../src/config.ts'
import { satangCanonicalV1 } from '../src/domain/gateway/canonical.ts'
import { silentLogger } from '../src/logger.ts'
import { startSatang } from '../src/main.ts'
import { loadSigningVectors } from '../test/support/vectors.ts'
import type { BenchContext, BenchResult } from './types.ts'

const ORDERS = 1_000
const CREATE_CONCURRENCY = 16
const NOTIFY_CONCURRENCY = 32
const MERCHANT_ID = '140000000000000001'
const TOKEN = 'bench-notifications-token-0123456789'

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN
const round = (n: number, digits = 0): number => Number(n.toFixed(digits))

/** Runs `work(i)` for i in [0, n) with `concurrency` workers; the latency of each in ms. */
const pool = async (n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<{ seconds: number; latencies: number[] }> => {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t0 = performance.now()
        await work(i)
        latencies.push(performance.now() - t0)
      }
    }),
  )
  return { seconds: (performance.now() - started) / 1000, latencies: latencies.sort((a, b) => a - b) }
}

const orThrow = <A>(e: E.Either<{ readonly message: string }, A>): A => {
  if (E.isLeft(e)) throw new Error(e.left.message)
  return e.right
}

export async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const vectors = loadSigningVectors()
  const merchantPublicKey = orThrow(loadPublicKey(vectors.keys.merchant.public_key_pem))
  const gatewayKey = orThrow(loadPrivateKey(vectors.keys.gateway.private_key_pem))
  const gatewaySigner = makeSigner(satangCanonicalV1, gatewayKey)

  const dbName = `satang_bench_notify_${randomUUID().replaceAll('-', '').slice(0, 10)}`
  const admin = new Client({ connectionString: ctx.databaseUrl })
  await admin.connect()
  await admin.query(`create database "${dbName}"`)
  const url = new URL(ctx.databaseUrl)
  url.pathname = `/${dbName}`
  const dir = mkdtempSync(join(tmpdir(), 'satang-bench-notify-'))
  writeFileSync(join(dir, 'merchant.pem'), vectors.keys.merchant.private_key_pem)
  writeFileSync(join(dir, 'gateway.pem'), vectors.keys.gateway.public_key_pem)

  // The sandbox only creates the orders; notifications are sent by the bench itself.
  const sandbox = await makeSandbox(
    { log: silentLogger() },
    { port: 0, merchants: new Map([[MERCHANT_ID, merchantPublicKey]]), gatewayPrivateKey: gatewayKey, rateLimit: { perSecond: 0, burst: 1 } },
  )
  const config = decodeConfig({
    SATANG_DATABASE_URL: url.toString(),
    SATANG_GATEWAY_BASE_URL: sandbox.url,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
    SATANG_HTTP_PORT: '0',
    SATANG_API_TOKENS: `bench:${TOKEN}:payments:write+read+audit`,
    SATANG_DATA_DIR: dir,
    SATANG_LOG_LEVEL: 'silent',
  })
  if (E.isLeft(config)) throw new Error(`bench: config: ${JSON.stringify(config.left)}`)
  const satang = await startSatang(config.right, silentLogger(), { allowSuperuser: true })
  try {
    const orderIds: string[] = []
    const created = await pool(ORDERS, CREATE_CONCURRENCY, async (i) => {
      const res = await fetch(`${satang.httpUrl}/v1/checkouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ merchant_order_id: `BENCH-${String(i)}`, order_amount: '99.50', order_currency: 'THB', order_desc: 'Bench', customer: { merchant_user_id: `u-${String(i)}` } }),
      })
      const body = (await res.json()) as { gateway_order_id?: unknown }
      if (res.status !== 201 || typeof body.gateway_order_id !== 'string') throw new Error(`bench: checkout ${String(i)} answered ${String(res.status)}`)
      orderIds[i] = body.gateway_order_id
    })
    ctx.log.info({ orders: ORDERS, seconds: round(created.seconds, 1) }, 'bench: orders created')

    // Signed before the clock starts: the gateway's signing is not satang's cost.
    const bodies = orderIds.map((orderId, i) =>
      JSON.stringify(
        signedForm(gatewaySigner, {
          notify_type: 'PAYMENT',
          merchant_id: MERCHANT_ID,
          merchant_order_id: `BENCH-${String(i)}`,
          order_id: orderId,
          order_status: 'PS',
          order_amount: '99.50',
          order_currency: 'THB',
          order_desc: 'Bench',
          create_time: '2026-11-21 10:00:00',
          complete_time: '2026-11-21 10:01:00',
        }),
      ),
    )
    const deliver = async (i: number): Promise<void> => {
      const res = await fetch(`${satang.httpUrl}/callbacks/notifications`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[i] ?? '' })
      const text = await res.text()
      if (res.status !== 200 || text !== 'SUCCESS') throw new Error(`bench: notification ${String(i)} answered ${String(res.status)} ${text}`)
    }
    const fresh = await pool(ORDERS, NOTIFY_CONCURRENCY, deliver)
    const again = await pool(ORDERS, NOTIFY_CONCURRENCY, deliver)
    return [
      { name: 'notifications: ingested/s (verify + record, new)', value: round(ORDERS / fresh.seconds), unit: 'notifications/s' },
      { name: 'notifications: p50 latency (new)', value: round(percentile(fresh.latencies, 50), 1), unit: 'ms' },
      { name: 'notifications: p99 latency (new)', value: round(percentile(fresh.latencies, 99), 1), unit: 'ms' },
      { name: 'notifications: ingested/s (redelivered, idempotent)', value: round(ORDERS / again.seconds), unit: 'notifications/s' },
      { name: 'notifications: p50 latency (redelivered)', value: round(percentile(again.latencies, 50), 1), unit: 'ms' },
      { name: 'notifications: p99 latency (redelivered)', value: round(percentile(again.latencies, 99), 1), unit: 'ms' },
    ]
  } finally {
    await satang.stop()
    await sandbox.close()
    rmSync(dir, { recursive: true, force: true })
    await admin.query(`drop database if exists "${dbName}" with (force)`)
    await admin.end()
  }
}
