import { readFileSync } from 'node:fs'
import { appendFile, chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GatewayClient } from '../../src/adapters/gateway/client.ts'
import { makeSandboxClock } from '../../src/sandbox/clock.ts'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { journalPathOf, loadStateFile, openStateFile } from '../../src/sandbox/state-file.ts'
import { makeSandboxStore } from '../../src/sandbox/state.ts'
import { formatBangkokDateTime } from '../../src/domain/bangkok-time.ts'
import { silentLogger } from '../../src/logger.ts'
import { clientFor, control, expectLeft, expectRight, MERCHANT_ID, rawGateway, startMerchantServer, startSandbox } from './support.ts'

/**
 * `--state FILE`: a snapshot and its journal, on disk before an answer leaves, loaded at start (with the
 * sandbox time), refused when unusable, private to its owner (0600).
 */

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
    // On disk once answered, before any exit: the snapshot and its journal hold it.
    expect(await loadStateFile(statePath)).toMatchObject({ _tag: 'Right', right: { subscriptions: [{ merchantSubscribeId: 'ST-S1', authorised: true }] } })
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

/** A Thai QR order of 10 baht; answers its `order_id`. */
const createOrder = async (client: GatewayClient, merchantOrderId: string, over: { readonly notify_url?: string } = {}): Promise<string> =>
  expectRight(
    await client.createDirectPayment({
      service: 'svc.thaiqr.pay',
      merchant_id: MERCHANT_ID,
      merchant_order_id: merchantOrderId,
      order_amount: '10',
      order_currency: 'THB',
      order_desc: 'Tea',
      payment_method: 'THAI_QR',
      customer: { full_name: 'Somchai Jaidee', email: 'somchai@example.com', phone: '0812345678' },
      ...over,
    })(),
  ).data.order_id

const modeOf = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8)

/** What a SIGKILL at this moment leaves on disk: a copy of both files, taken while the sandbox runs. */
const crashImage = async (statePath: string, into: string): Promise<string> => {
  await mkdir(into, { recursive: true })
  const copy = join(into, 'state.json')
  await copyFile(statePath, copy)
  await copyFile(journalPathOf(statePath), journalPathOf(copy))
  return copy
}

/** Runs `test` with a sandbox on `statePath` and its client, and closes both. */
const withSandbox = async (statePath: string, test: (sandbox: Sandbox, client: GatewayClient) => Promise<void>): Promise<void> => {
  const sandbox = await startSandbox({ statePath })
  const client = clientFor(sandbox)
  try {
    await test(sandbox, client)
  } finally {
    client.close()
    await sandbox.close()
  }
}

describe('the state on disk', () => {
  it('is written 0600 (payer names, emails and phones are in it), and an existing file is made 0600 at start', async () => {
    const statePath = join(dir, 'fresh', 'state.json')
    await withSandbox(statePath, async (_sandbox, client) => {
      await createOrder(client, 'MODE-1')
      expect(await readFile(journalPathOf(statePath), 'utf8')).toContain('somchai@example.com')
      expect(await modeOf(statePath)).toBe('600')
      expect(await modeOf(journalPathOf(statePath))).toBe('600')
    })
    expect(await modeOf(statePath)).toBe('600')

    // A state file from before the journal (no commit number), left readable by everyone.
    const oldPath = join(dir, 'old', 'state.json')
    await mkdir(join(dir, 'old'))
    const saved = await loadStateFile(statePath)
    if (saved._tag === 'Left' || saved.right === undefined) throw new Error('no saved state')
    const { commit: _commit, ...withoutCommit } = saved.right
    await writeFile(oldPath, JSON.stringify(withoutCommit))
    await chmod(oldPath, 0o644)
    await writeFile(journalPathOf(oldPath), '')
    await chmod(journalPathOf(oldPath), 0o644)
    await withSandbox(oldPath, async (_sandbox, client) => {
      expect(await modeOf(oldPath)).toBe('600')
      expect(await modeOf(journalPathOf(oldPath))).toBe('600')
      expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'MODE-1' })()).data.order_status).toBe('WP')
    })
  })

  it('holds every answered change before any exit; a torn last journal line is dropped at the next start', async () => {
    const statePath = join(dir, 'live', 'state.json')
    let firstId = ''
    let image = ''
    await withSandbox(statePath, async (_sandbox, client) => {
      firstId = await createOrder(client, 'TORN-1')
      image = await crashImage(statePath, join(dir, 'crashed'))
    })
    // The crash cut the next commit's line short.
    await appendFile(journalPathOf(image), '{"commit":99,"clock":"2030-01-01T00:00:00.000Z","sequence":99,"orders":[{"kind":"dir')
    await withSandbox(image, async (_sandbox, client) => {
      expect(expectRight(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'TORN-1' })()).data.order_id).toBe(firstId)
      expect(await readFile(journalPathOf(image), 'utf8')).not.toContain('"commit":99')
      expect(await createOrder(client, 'TORN-2')).not.toBe(firstId)
    })
    expect(await loadStateFile(image)).toMatchObject({ _tag: 'Right', right: { orders: [{ merchantOrderId: 'TORN-1' }, { merchantOrderId: 'TORN-2' }] } })
  })

  it('refuses to start on a journal damaged before its last line, naming the file and the line', async () => {
    const statePath = join(dir, 'damaged', 'state.json')
    await withSandbox(statePath, async (_sandbox, client) => {
      await createOrder(client, 'DMG-1')
    })
    await writeFile(journalPathOf(statePath), 'garbage\n{"commit":50,"clock":"2030-01-01T00:00:00.000Z","sequence":50}\n')
    await expect(startSandbox({ statePath })).rejects.toThrow(/state journal ".*state\.json\.journal" is damaged: line 1 of 2 is not a journal entry: not JSON/)
    expect(await loadStateFile(statePath)).toMatchObject({ _tag: 'Left' })
  })

  it('answers 500 while the state cannot be written, and the next write that can saves everything', async () => {
    const statePath = join(dir, 'failing', 'state.json')
    await withSandbox(statePath, async (sandbox, client) => {
      const firstId = await createOrder(client, 'FAIL-1')
      // A folder at FILE's name (the snapshot moved aside) makes every snapshot write fail: it is not a regular file.
      const blocker = statePath
      await rename(statePath, `${statePath}.aside`)
      await mkdir(blocker)
      // A reset replaces the whole state: it needs a snapshot.
      expect((await control(sandbox, 'POST', '/reset')).status).toBe(500)
      const refused = await rawGateway(sandbox, 'POST', {
        version: 'v1',
        service: 'svc.thaiqr.pay',
        merchant_id: MERCHANT_ID,
        merchant_order_id: 'FAIL-2',
        order_amount: '10',
        order_currency: 'THB',
        order_desc: 'Tea',
        payment_method: 'THAI_QR',
        customer: {},
      })
      expect(refused).toMatchObject({ status: 500, envelope: { code: 500001 } })
      // Not even a query is answered: it would report what is not on disk.
      expect(expectLeft(await client.queryPayment({ merchant_id: MERCHANT_ID, merchant_order_id: 'FAIL-2' })())).toMatchObject({ _tag: 'TransportFailed', reason: 'http_5xx' })

      await rmdir(blocker)
      const thirdId = await createOrder(client, 'FAIL-3')
      // The sequence went on through the reset: no id is given twice.
      expect(thirdId).not.toBe(firstId)
      const image = await crashImage(statePath, join(dir, 'failing-crashed'))
      expect(await loadStateFile(image)).toMatchObject({ _tag: 'Right', right: { orders: [{ merchantOrderId: 'FAIL-2' }, { merchantOrderId: 'FAIL-3', orderId: thirdId }] } })
    })
  })

  it('compacts the journal into the snapshot as it grows, losing nothing', async () => {
    const statePath = join(dir, 'compact', 'state.json')
    const store = makeSandboxStore()
    const clock = makeSandboxClock()
    const file = await openStateFile({ store, clock, log: silentLogger() }, statePath, { compactAtBytes: 4096 })
    const sizes: number[] = []
    for (let i = 1; i <= 60; i++) {
      const orderId = String(store.nextSequence())
      store.putOrder({ kind: 'direct', merchantId: MERCHANT_ID, merchantOrderId: `C-${String(i)}`, orderId, status: 'WP', amount: '1.00', requestedAmount: '1.00', currency: 'THB', description: 'x'.repeat(200), createTime: '2030-01-01 10:00:00', createdAtMs: 0 })
      await file.durable()
      sizes.push((await stat(journalPathOf(statePath))).size)
    }
    // Emptied at least once on the way, and never larger than the snapshot or the threshold by more than one line.
    expect(sizes.filter((s, i) => i > 0 && s < (sizes[i - 1] ?? 0)).length).toBeGreaterThan(0)
    const snapshotSize = (await stat(statePath)).size
    expect(Math.max(...sizes)).toBeLessThan(Math.max(4096, snapshotSize) + 1024)
    expect(await loadStateFile(statePath)).toMatchObject({ _tag: 'Right', right: { sequence: 60, orders: expect.arrayContaining([expect.objectContaining({ merchantOrderId: 'C-60' })]) } })
    const loaded = await loadStateFile(statePath)
    expect(loaded._tag === 'Right' && loaded.right?.orders.length).toBe(60)
    await file.close()
  })

  it('runs an effect held for a change once the journal holds the change, and at once when nothing is pending', async () => {
    const statePath = join(dir, 'effects', 'state.json')
    const store = makeSandboxStore()
    const file = await openStateFile({ store, clock: makeSandboxClock(), log: silentLogger() }, statePath)
    try {
      const onDisk = (): boolean => readFileSync(journalPathOf(statePath), 'utf8').includes('EFFECT-1')
      const seen: boolean[] = []
      store.putOrder({ kind: 'direct', merchantId: MERCHANT_ID, merchantOrderId: 'EFFECT-1', orderId: String(store.nextSequence()), status: 'WP', amount: '1.00', requestedAmount: '1.00', currency: 'THB', description: 'x', createTime: '2030-01-01 10:00:00', createdAtMs: 0 })
      file.afterDurable(() => seen.push(onDisk()))
      expect(seen).toEqual([])
      await file.durable()
      expect(seen).toEqual([true])
      file.afterDurable(() => seen.push(onDisk()))
      expect(seen).toEqual([true, true])
    } finally {
      await file.close()
    }
  })

  it('sends a notification once the state it tells of is on disk', async () => {
    const statePath = join(dir, 'notify', 'state.json')
    const merchant = await startMerchantServer()
    try {
      await withSandbox(statePath, async (sandbox, client) => {
        const orderId = await createOrder(client, 'NOTE-1', { notify_url: `${merchant.url}/notify` })
        // What the disk held when the notification arrived.
        let paidOnDisk: boolean | undefined
        merchant.acknowledge(() => {
          paidOnDisk = readFileSync(journalPathOf(statePath), 'utf8').includes('"status":"PS"')
          return { status: 200, body: 'SUCCESS' }
        })
        expect((await control(sandbox, 'POST', `/orders/${orderId}/pay`)).status).toBe(200)
        const [note] = await merchant.waitFor('/notify', 1)
        expect(note?.fields).toMatchObject({ notify_type: 'PAYMENT', order_id: orderId, order_status: 'PS' })
        expect(paidOnDisk).toBe(true)
      })
    } finally {
      await merchant.close()
    }
  })
})
