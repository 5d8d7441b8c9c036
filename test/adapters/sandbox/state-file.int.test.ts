import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandboxClock } from '../../../src/adapters/sandbox/clock.ts'
import { loadStateFile } from '../../../src/adapters/sandbox/state-file.ts'
import { formatBangkokDateTime } from '../../../src/domain/bangkok-time.ts'
import { clientFor, control, expectRight, MERCHANT_ID, startSandbox } from './support.ts'

/** `--state FILE`: saved on change and at exit, loaded at start (with the sandbox time), refused when unusable. */

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'satang-sandbox-state-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('the sandbox state file', () => {
  it('survives a restart: orders, refunds, subscriptions and the sandbox time', async () => {
    const statePath = join(dir, 'nested', 'state.json')
    const first = await startSandbox({ statePath }, makeSandboxClock({ start: new Date('2030-01-31T03:00:00Z') }))
    const client = clientFor(first)
    const orderId = expectRight(
      await client.createDirectPayment({
        service: 'svc.thaiqr.pay',
        merchant_id: MERCHANT_ID,
        merchant_order_id: 'ST-1',
        order_amount: '10',
        order_currency: 'THB',
        order_desc: 'Tea',
        payment_method: 'THAI_QR',
        customer: {},
      })(),
    ).data.order_id
    await control(first, 'POST', `/orders/${orderId}/pay`)
    await control(first, 'POST', '/refunds', { order_id: orderId, merchant_refund_id: 'ST-R1', refund_amount: '4' })
    const billId = expectRight(
      await client.createSubscription({
        merchant_id: MERCHANT_ID,
        merchant_subscribe_id: 'ST-S1',
        plan_name: 'Monthly tea',
        interval_type: 'MONTHLY',
        interval: '1',
        total_terms: '3',
        billing_amount: '50',
        billing_currency: 'THB',
        retry: 'N',
        customer: {},
      })(),
    ).data.recurring_bill_id
    await control(first, 'POST', `/subscriptions/${billId}/authorise`)
    client.close()
    // Saved on change, before any exit.
    await expect.poll(async () => (await loadStateFile(statePath))._tag === 'Right' && (await readFile(statePath, 'utf8')).includes('ST-S1')).toBe(true)
    await first.close()

    const saved = await loadStateFile(statePath)
    expect(saved).toMatchObject({ _tag: 'Right', right: { format: 'satang-sandbox-state-v1', orders: [{ merchantOrderId: 'ST-1', status: 'PS' }], refunds: [{ amount: '4.00' }] } })

    // A clock at real time (earlier than 2030): the saved sandbox time wins.
    const second = await startSandbox({ statePath })
    const again = clientFor(second)
    try {
      expect(formatBangkokDateTime(second.clock.now()).slice(0, 10)).toBe('2030-01-31')
      expect(expectRight(await again.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'ST-1' })()).data.order_status).toBe('PS')
      expect(expectRight(await again.queryRefund({ merchant_id: MERCHANT_ID, merchant_refund_id: 'ST-R1' })()).data.refund_amount).toBe('4.00')
      // The sequence continues: no id is issued twice.
      const next = expectRight(
        await again.applyCheckout({ merchant_id: MERCHANT_ID, merchant_order_id: 'ST-2', order_amount: '1', order_currency: 'THB', order_desc: 'x', customer: {} })(),
      ).data.order_id
      expect(next).not.toBe(orderId)
      // Billing resumes where it was: 2030 is not a leap year, so 28 February, then 31 March.
      const moved = await control(second, 'POST', '/clock/set', { to: '2030-03-31 12:00:00' })
      expect(moved.json['charges']).toMatchObject([{ date: '2030-02-28' }, { date: '2030-03-31' }])
    } finally {
      again.close()
      await second.close()
    }
  })

  it('refuses a file that is not a sandbox state, naming the problem', async () => {
    const statePath = join(dir, 'state.json')
    await writeFile(statePath, JSON.stringify({ format: 'something else', orders: 3 }))
    await expect(startSandbox({ statePath })).rejects.toThrow(/is not a sandbox state:\nformat: must be "satang-sandbox-state-v1"|is not a sandbox state/)
    await writeFile(statePath, '{')
    await expect(startSandbox({ statePath })).rejects.toThrow(/is not JSON/)
  })
})
