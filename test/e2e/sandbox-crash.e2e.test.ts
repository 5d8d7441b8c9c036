import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import { clientFor, control, expectRight, MERCHANT_ID, MERCHANT_PUBLIC_KEY_PEM } from '../sandbox/support.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'
import { loadSigningVectors } from '../support/vectors.ts'

/**
 * Acceptance (issue 11, defect 3): `satang sandbox` is killed with SIGKILL while callers create orders
 * over real HTTP. After a restart on the same state file every order it answered 200 for is there (by
 * the gateway's payment query), and no gateway order id is ever issued twice.
 */

const CALLERS = 16
/** Orders answered before the kill, in each round. */
const ANSWERED_BEFORE_KILL = 150
const ROUNDS = 3

type Answered = { readonly merchantOrderId: string; readonly orderId: string; readonly amount: string }

let dir: string
let args: ReadonlyArray<string>

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'satang-sandbox-crash-'))
  await writeFile(join(dir, 'merchant-public.pem'), MERCHANT_PUBLIC_KEY_PEM)
  // The vectors' gateway key, so that the test's client verifies the answers' signatures.
  await writeFile(join(dir, 'gateway-private.pem'), loadSigningVectors().keys.gateway.private_key_pem)
  args = [
    'sandbox',
    '--port',
    '0',
    '--json',
    '--rate-limit',
    '0',
    '--log-level',
    'warn',
    '--merchant',
    `${MERCHANT_ID}=${join(dir, 'merchant-public.pem')}`,
    '--gateway-private-key',
    join(dir, 'gateway-private.pem'),
    '--state',
    join(dir, 'state.json'),
  ]
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const start = async (): Promise<{ readonly proc: SatangProcess; readonly url: string }> => {
  const proc = startSatangProcess(args, { cwd: dir, env: envWithoutSatangSettings() })
  const m = await proc.waitFor(/"url":"(http:\/\/[^"]+)"/, 30_000)
  return { proc, url: m[1] ?? '' }
}

const createOrder = (client: GatewayClient, merchantOrderId: string, amount: string) =>
  client.createDirectPayment({
    service: 'svc.thaiqr.pay',
    merchant_id: MERCHANT_ID,
    merchant_order_id: merchantOrderId,
    order_amount: amount,
    order_currency: 'THB',
    order_desc: 'crash load',
    payment_method: 'THAI_QR',
    customer: { merchant_user_id: 'u-crash', email: 'payer@example.com', full_name: 'Somchai Jaidee' },
  })()

/**
 * Callers create orders until the sandbox dies under them; it is killed (SIGKILL) once `killAfter`
 * orders were answered. Returns the orders answered with success.
 */
const loadAndKill = async (round: number, killAfter: number): Promise<ReadonlyArray<Answered>> => {
  const { proc, url } = await start()
  const client = clientFor({ url }, { requestMs: 20_000 })
  const answered: Answered[] = []
  let n = 0
  let killed: Promise<number | null> | undefined
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      for (;;) {
        n += 1
        const merchantOrderId = `R${String(round)}-${String(n)}`
        const amount = `${String(n)}.25`
        const r = await createOrder(client, merchantOrderId, amount)
        // Once the process is gone every request fails: a reset in flight (an unknown outcome), then refused.
        if (E.isLeft(r)) {
          if (killed === undefined) throw new Error(`create ${merchantOrderId} failed before the kill: ${r.left._tag}`)
          return
        }
        answered.push({ merchantOrderId, orderId: r.right.data.order_id, amount: r.right.data.order_amount })
        if (answered.length >= killAfter && killed === undefined) killed = proc.stop('SIGKILL')
        if (killed !== undefined && answered.length > killAfter + 4 * CALLERS) return
      }
    }),
  )
  client.close()
  await killed
  expect(proc.child.signalCode).toBe('SIGKILL')
  return answered
}

describe('the sandbox killed under a create load', () => {
  it('keeps every order it answered and never issues an order id twice', async () => {
    const everAnswered: Answered[] = []
    for (let round = 1; round <= ROUNDS; round++) everAnswered.push(...(await loadAndKill(round, ANSWERED_BEFORE_KILL)))
    expect(everAnswered.length).toBeGreaterThanOrEqual(ROUNDS * ANSWERED_BEFORE_KILL)

    const { proc, url } = await start()
    const client = clientFor({ url })
    try {
      // Every order answered 200 is found by the gateway's payment query, with the id and amount it was given.
      const lost: string[] = []
      for (const a of everAnswered) {
        const q = await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: a.merchantOrderId })()
        if (E.isLeft(q)) lost.push(`${a.merchantOrderId}: ${q.left._tag}`)
        else expect({ orderId: q.right.data.order_id, amount: q.right.data.order_amount }).toEqual({ orderId: a.orderId, amount: a.amount })
      }
      expect(lost).toEqual([])

      // New orders after the restarts get ids never given before; the sandbox holds no id twice.
      const after: string[] = []
      for (let i = 1; i <= 20; i++) after.push(expectRight(await createOrder(client, `AFTER-${String(i)}`, '1.00')).data.order_id)
      const before = new Set(everAnswered.map((a) => a.orderId))
      expect(before.size).toBe(everAnswered.length)
      expect(after.filter((id) => before.has(id))).toEqual([])
      const listed = await control({ controlUrl: `${url}/_sandbox` }, 'GET', '/orders')
      const ids = (listed.json['orders'] as ReadonlyArray<{ readonly orderId: string }>).map((o) => o.orderId)
      expect(new Set(ids).size).toBe(ids.length)
    } finally {
      client.close()
      expect(await proc.stop('SIGTERM')).toBe(0)
    }
    // Payer names and emails are in both files: only their owner may read them.
    for (const file of ['state.json', 'state.json.journal']) expect(((await stat(join(dir, file))).mode & 0o777).toString(8)).toBe('600')
  })
})
