import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Client } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sandbox } from '../../../src/sandbox/sandbox.ts'
import { decodeConfig } from '../../../src/config.ts'
import { silentLogger } from '../../../src/logger.ts'
import { startSatang, type Running } from '../../../src/main.ts'
import { startCountingProxy, type CountingProxy } from '../../support/counting-proxy.ts'
import { GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, startSandbox } from '../../sandbox/support.ts'
import { freshDatabase } from './database.ts'

/**
 * The same create sent many times at once, from one process with no throttling (issue 11, defect 1):
 * exactly one create reaches the gateway (counted by a proxy in front of the sandbox), one request gets
 * 201, every other one a replay (200) of the same order, never a 503; one order in the read model.
 */

const TOKEN = 'concurrent-create-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'satang-concurrent-'))
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox
let proxy: CountingProxy
let satang: Running
/** A second satang on the same database (as a second API instance behind a balancer would be). */
let second: Running

const body = (id: string) => ({
  service: 'svc.thaiqr.pay',
  merchant_order_id: id,
  order_amount: '10.00',
  order_currency: 'THB',
  order_desc: 'load',
  payment_method: 'THAI_QR',
  customer: { merchant_user_id: 'u-1' },
})

const create = async (id: string, via: Running = satang): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${via.httpUrl}/v1/payments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body(id)),
  })
  const json: unknown = await res.json()
  if (typeof json !== 'object' || json === null) throw new Error(`not a JSON object: ${String(json)}`)
  return { status: res.status, json: { ...json } }
}

/** Rows of the orders read model for one merchant_order_id, once the projector has caught up. */
const ordersRows = async (id: string): Promise<number> => {
  const c = new Client({ connectionString: db.url })
  await c.connect()
  try {
    for (let i = 0; i < 200; i++) {
      const r = await c.query<{ n: string; requested: boolean }>(`select count(*)::text as n, bool_and(gateway_order_id is not null) as requested from satang.orders where merchant_order_id = $1`, [id])
      const row = r.rows[0]
      if (row !== undefined && row.n !== '0' && row.requested) return Number(row.n)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    return 0
  } finally {
    await c.end()
  }
}

beforeAll(async () => {
  db = await freshDatabase('concurrent')
  sandbox = await startSandbox()
  proxy = await startCountingProxy(sandbox.url)
  writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
  writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
  const config = decodeConfig({
    SATANG_DATABASE_URL: db.url,
    SATANG_GATEWAY_BASE_URL: proxy.url,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
    SATANG_HTTP_PORT: '0',
    SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`,
    SATANG_DATA_DIR: dir,
    SATANG_LOG_LEVEL: 'silent',
  })
  if (E.isLeft(config)) throw new Error(JSON.stringify(config.left))
  satang = await startSatang(config.right, silentLogger(), { allowSuperuser: true })
  // Another instance has a data directory of its own (one satang per data directory), the same database.
  const secondDir = join(dir, 'second')
  second = await startSatang({ ...config.right, SATANG_DATA_DIR: secondDir }, silentLogger(), { allowSuperuser: true })
})

afterAll(async () => {
  await second.stop()
  await satang.stop()
  await proxy.close()
  await sandbox.close()
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe.each([20, 100])('%i simultaneous creates of one merchant_order_id', (n) => {
  it('reach the gateway once: one 201, every other a 200 replay of the same order, no 503, one order row (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const id = `SAME-${String(n)}-${String(round)}`
      proxy.reset()
      const answers = await Promise.all(Array.from({ length: n }, () => create(id)))
      const statuses = answers.map((a) => a.status)
      expect(statuses.filter((s) => s === 201), `round ${String(round)}: ${statuses.join(',')}`).toHaveLength(1)
      expect(statuses.filter((s) => s === 200), `round ${String(round)}: ${statuses.join(',')}`).toHaveLength(n - 1)
      expect(proxy.count('svc.thaiqr.pay'), `round ${String(round)}`).toBe(1)
      const created = answers.find((a) => a.status === 201)?.json
      const gatewayOrderId = created?.['gateway_order_id']
      expect(typeof gatewayOrderId).toBe('string')
      for (const a of answers.filter((x) => x.status === 200)) {
        expect(a.json).toMatchObject({ merchant_order_id: id, gateway_order_id: gatewayOrderId, replayed: true, request: { phase: 'accepted' } })
      }
      expect(await ordersRows(id)).toBe(1)
    }
  })
})

describe('40 simultaneous creates of one merchant_order_id, split between two satang instances on one database', () => {
  it('reach the gateway once; the other instance replays the outcome it reads from the log (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const id = `TWO-${String(round)}`
      proxy.reset()
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => create(id, i % 2 === 0 ? satang : second)))
      const statuses = answers.map((a) => a.status)
      expect(statuses.filter((s) => s === 201), statuses.join(',')).toHaveLength(1)
      expect(statuses.filter((s) => s === 200), statuses.join(',')).toHaveLength(39)
      expect(proxy.count('svc.thaiqr.pay')).toBe(1)
      const ids = new Set(answers.map((a) => a.json['gateway_order_id']))
      expect(ids.size).toBe(1)
    }
  })
})

describe('20 simultaneous creates of one merchant_subscribe_id', () => {
  it('reach the gateway once; one 201, the others refused as a conflict, never a 5xx (5 rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const id = `SUB-SAME-${String(round)}`
      proxy.reset()
      const answers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await fetch(`${satang.httpUrl}/v1/subscriptions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              merchant_subscribe_id: id,
              plan_name: 'Streaming',
              interval_type: 'MONTHLY',
              interval: '1',
              total_terms: '12',
              billing_amount: '149',
              billing_currency: 'THB',
              retry: 'Y',
              start_date: '2027-01-15',
              customer: { merchant_user_id: 'u-8' },
            }),
          })
          return res.status
        }),
      )
      expect(answers.filter((s) => s === 201), answers.join(',')).toHaveLength(1)
      expect(answers.filter((s) => s === 409), answers.join(',')).toHaveLength(19)
      expect(proxy.count('svc.recurring.create')).toBe(1)
    }
  })
})
