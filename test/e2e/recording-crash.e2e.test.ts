import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sandbox } from '../../src/sandbox/sandbox.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { control, GATEWAY_PUBLIC_KEY_PEM, MERCHANT_ID, MERCHANT_PRIVATE_KEY_PEM, startSandbox } from '../sandbox/support.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'

/**
 * Acceptance (issue 5): satang is killed (SIGKILL, via the test-only SATANG_FAULT_CRASH_AFTER) after
 * PaymentRequested is stored and before the outcome is; after a restart the outcome is resolved by a
 * payment query and recorded once, and the create is never sent again. The gateway (the sandbox) runs
 * in this test process, so it outlives satang as a real gateway would.
 */

const TOKEN = 'crash-e2e-token-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'satang-crash-'))
let db: Awaited<ReturnType<typeof freshDatabase>>
let sandbox: Sandbox

type AuditEvent = { type: string; source: string; data: Record<string, unknown> }

const baseEnv = (): NodeJS.ProcessEnv =>
  envWithoutSatangSettings({
    SATANG_LOG_LEVEL: 'warn',
    SATANG_DATABASE_URL: db.url,
    SATANG_GATEWAY_BASE_URL: sandbox.url,
    SATANG_MERCHANT_ID: MERCHANT_ID,
    SATANG_MERCHANT_PRIVATE_KEY_FILE: join(dir, 'merchant.pem'),
    SATANG_GATEWAY_PUBLIC_KEY_FILE: join(dir, 'gateway.pem'),
    SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read+audit`,
    SATANG_DATA_DIR: dir,
    // "not found" is trusted once a create can no longer be in flight: one gateway timeout after it was recorded
    SATANG_GATEWAY_TIMEOUT_MS: '1000',
    SATANG_RESOLVE_BASE_MS: '100',
  })

/** Starts `satang up`; returns the process and its API URL once it is up. */
const up = async (extra: Record<string, string> = {}): Promise<{ proc: SatangProcess; url: string }> => {
  const port = await freePort()
  const proc = startSatangProcess(['up'], { env: { ...baseEnv(), SATANG_HTTP_PORT: String(port), ...extra }, cwd: dir })
  await proc.waitFor(/satang: up\./, 60_000)
  return { proc, url: `http://127.0.0.1:${String(port)}` }
}

const call = async (url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

const checkoutBody = (id: string) => ({ merchant_order_id: id, order_amount: '75', order_currency: 'THB', order_desc: 'Coffee beans', customer: { merchant_user_id: 'u-9' } })

const sandboxOrders = async (id: string): Promise<ReadonlyArray<Record<string, unknown>>> => {
  const r = await control(sandbox, 'GET', `/orders?merchant_id=${MERCHANT_ID}&merchant_order_id=${id}`)
  return r.json['orders'] as ReadonlyArray<Record<string, unknown>>
}

/** Posts a checkout to a satang that is set to die during it; resolves once it is dead (by SIGKILL). */
const createAndDie = async (id: string, point: 'PaymentRequested' | 'GatewayAnswer'): Promise<void> => {
  const { proc, url } = await up({ SATANG_FAULT_CRASH_AFTER: point })
  await expect(call(url, 'POST', '/v1/checkouts', checkoutBody(id))).rejects.toThrow()
  await proc.stop()
  expect(proc.child.signalCode).toBe('SIGKILL')
}

/** Polls the payment until `done` holds. */
const waitForPayment = async (url: string, id: string, done: (p: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const p = await call(url, 'GET', `/v1/payments/${id}`)
    if (p.status === 200 && done(p.json)) return p.json
    if (Date.now() > deadline) throw new Error(`payment ${id} never got there: ${JSON.stringify(p.json)}`)
    await sleep(100)
  }
}

const phaseOf = (p: Record<string, unknown>): unknown => (typeof p['request'] === 'object' && p['request'] !== null ? (p['request'] as Record<string, unknown>)['phase'] : undefined)

beforeAll(async () => {
  db = await freshDatabase('crash')
  sandbox = await startSandbox()
  writeFileSync(join(dir, 'merchant.pem'), MERCHANT_PRIVATE_KEY_PEM)
  writeFileSync(join(dir, 'gateway.pem'), GATEWAY_PUBLIC_KEY_PEM)
})

afterAll(async () => {
  await sandbox.close()
  await db.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('satang killed between PaymentRequested and the outcome', () => {
  it('killed after the gateway answered: the restart resolves the outcome by query, once; the create is not sent again', async () => {
    await createAndDie('CRASH-1', 'GatewayAnswer')
    // the gateway did create it; satang recorded only the request
    expect(await sandboxOrders('CRASH-1')).toHaveLength(1)

    const { proc, url } = await up()
    try {
      const payment = await waitForPayment(url, 'CRASH-1', (p) => phaseOf(p) === 'resolved_by_observation')
      expect(payment).toMatchObject({ status: { code: 'PI', source: 'query' }, gateway_order_id: (await sandboxOrders('CRASH-1'))[0]?.['orderId'] })
      const audit = await call(url, 'GET', '/v1/audit/order/CRASH-1')
      const events = audit.json['events'] as ReadonlyArray<AuditEvent>
      expect(events.map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown', 'StatusObserved'])
      expect(events[2]).toMatchObject({ data: { reason: 'interrupted' } })
      expect(events[3]).toMatchObject({ source: 'query', data: { statusCode: 'PI', source: 'query' } })
      // sent once: one order at the gateway, and no duplicate-id rejection anywhere in the trail
      expect(await sandboxOrders('CRASH-1')).toHaveLength(1)
    } finally {
      expect(await proc.stop('SIGTERM')).toBe(0)
    }

    // a further restart finds nothing left to resolve and records nothing more
    const again = await up()
    try {
      await sleep(500)
      const audit = await call(again.url, 'GET', '/v1/audit/order/CRASH-1')
      expect((audit.json['events'] as ReadonlyArray<AuditEvent>).map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown', 'StatusObserved'])
    } finally {
      await again.proc.stop('SIGTERM')
    }
  })

  it('killed right after PaymentRequested was stored (nothing sent): the query finds no order, the create is recorded as failed and never sent', async () => {
    await createAndDie('CRASH-2', 'PaymentRequested')
    expect(await sandboxOrders('CRASH-2')).toHaveLength(0)

    const { proc, url } = await up()
    try {
      const payment = await waitForPayment(url, 'CRASH-2', (p) => phaseOf(p) === 'failed')
      expect(payment).toMatchObject({ request: { phase: 'failed', reason: 'not_found_by_query' }, status: null })
      const audit = await call(url, 'GET', '/v1/audit/order/CRASH-2')
      expect((audit.json['events'] as ReadonlyArray<AuditEvent>).map((e) => e.type)).toEqual(['OrderCreated', 'PaymentRequested', 'PaymentOutcomeUnknown', 'PaymentRequestFailed'])
      expect(await sandboxOrders('CRASH-2')).toHaveLength(0)
    } finally {
      expect(await proc.stop('SIGTERM')).toBe(0)
    }
  })
})
