import { Agent, request } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../adapters/http/database.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'

/**
 * Acceptance (issue 22, item 8; issue 25, item 5: within SATANG_SHUTDOWN_TIMEOUT_MS): SIGTERM under a create load. 10 clients POST /v1/payments in a loop on
 * keep-alive connections to a real `satang up` (built-in sandbox) when it is told to stop: no
 * connection is reset or refused (every request gets an HTTP answer, a 2xx or a 503 `retriable` with
 * `Connection: close`), the requests in flight finish, every 2xx create is in the event log, and no
 * create answered 503 is.
 */

const TOKEN = 'shutdown-e2e-token-0123456789abcdef'
const MERCHANT_ID = '140000000000000001'
const CLIENTS = 10
/** The stop deadline of the load test (SATANG_SHUTDOWN_TIMEOUT_MS, its default). */
const DEADLINE_MS = 10_000
/** What the test allows beyond the deadline for the process to end once stopped, and for this test process to see it under load. */
const EXIT_SLACK_MS = 1_500

let db: Awaited<ReturnType<typeof freshDatabase>>
const dirs: string[] = []
const launched: SatangProcess[] = []
beforeAll(async () => {
  db = await freshDatabase('shutdown')
})
afterEach(async () => {
  for (const proc of launched.splice(0)) if (proc.child.exitCode === null && proc.child.signalCode === null) await proc.stop('SIGKILL')
})
afterAll(async () => {
  await db.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

type Answer = { readonly id: string; readonly status: number; readonly connection: string | undefined; readonly body: Record<string, unknown>; readonly sentAt: number; readonly answeredAt: number }
type Failure = { readonly id: string; readonly error: string; readonly sentAt: number }

/** One POST /v1/payments on `agent`: the HTTP answer, or the socket error that took its place. */
const create = (port: number, agent: Agent, id: string): Promise<Answer | Failure> =>
  new Promise((resolve) => {
    const sentAt = Date.now()
    const body = JSON.stringify({ service: 'svc.thaiqr.pay', merchant_order_id: id, order_amount: '10.00', order_currency: 'THB', order_desc: 'shutdown', payment_method: 'THAI_QR', customer: { merchant_user_id: 'u-1' } })
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/payments', agent, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ id, error: `response: ${e.code ?? e.message}`, sentAt }))
        res.on('end', () => {
          let parsed: Record<string, unknown> = {}
          try {
            parsed = JSON.parse(text) as Record<string, unknown>
          } catch {
            parsed = { unparsed: text.slice(0, 200) }
          }
          const connection = res.headers.connection
          resolve({ id, status: res.statusCode ?? 0, connection, body: parsed, sentAt, answeredAt: Date.now() })
        })
      },
    )
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ id, error: e.code ?? e.message, sentAt }))
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')))
    req.end(body)
  })

/** A client: creates payments one after the other on its own keep-alive connection until it is answered 503 (or fails). */
const client = async (port: number, n: number, sent: Array<Answer | Failure>): Promise<void> => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    for (let i = 0; ; i++) {
      const outcome = await create(port, agent, `SD-${String(n)}-${String(i)}`)
      sent.push(outcome)
      if ('error' in outcome || outcome.status === 503) return
    }
  } finally {
    agent.destroy()
  }
}

const orderStreams = async (): Promise<ReadonlyMap<string, ReadonlyArray<string>>> => {
  const pool = new Pool({ connectionString: db.url, max: 1 })
  try {
    const { rows } = await pool.query<{ stream_name: string; types: string[] }>(`select stream_name, array_agg(type order by stream_revision) as types from eventstore.events where stream_name like 'order-%' group by stream_name`)
    return new Map(rows.map((r) => [r.stream_name.slice(`order-${MERCHANT_ID}-`.length), r.types]))
  } finally {
    await pool.end()
  }
}

describe('satang up stopping under load', () => {
  it(`SIGTERM under a create load of ${String(CLIENTS)} keep-alive clients: every request gets an HTTP answer (2xx, or 503 retriable with Connection: close), the requests in flight finish, and every 2xx create is recorded`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satang-shutdown-'))
    dirs.push(dir)
    const port = await freePort()
    const proc = startSatangProcess(['up'], {
      env: envWithoutSatangSettings({
        SATANG_LOG_LEVEL: 'warn',
        SATANG_DATABASE_URL: db.url,
        SATANG_DATA_DIR: dir,
        SATANG_HTTP_PORT: String(port),
        SATANG_SANDBOX_PORT: String(await freePort()),
        SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`,
        SATANG_SHUTDOWN_TIMEOUT_MS: String(DEADLINE_MS),
      }),
      cwd: dir,
    })
    launched.push(proc)
    await proc.waitFor(/satang: up\./, 90_000)

    const sent: Array<Answer | Failure> = []
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(port, n, sent))
    // Load for a moment (at least a second and 30 creates answered), then SIGTERM while every client has a create in flight.
    const loadFrom = Date.now()
    while ((sent.length < 30 || Date.now() < loadFrom + 1_000) && Date.now() < loadFrom + 20_000) await sleep(20)
    const answeredBefore = sent.length
    const signalledAt = Date.now()
    const exited = proc.stop('SIGTERM')
    const settled = await Promise.race([Promise.all(clients).then(() => 'done' as const), sleep(30_000).then(() => 'stuck' as const)])
    expect(settled, `clients still waiting 30 s after SIGTERM; ${String(sent.length)} requests answered`).toBe('done')
    const code = await Promise.race([exited, sleep(30_000).then(() => 'still running' as const)])
    const stopMs = Date.now() - signalledAt
    expect(code, `stdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`).toBe(0)
    expect(proc.stdout()).toContain('satang: stopped.')
    // Exit 0 means every part stopped before the deadline; the process ended right after.
    expect(stopMs, `exited ${String(stopMs)} ms after SIGTERM`).toBeLessThanOrEqual(DEADLINE_MS + EXIT_SLACK_MS)

    const failures = sent.filter((s): s is Failure => 'error' in s)
    const answers = sent.filter((s): s is Answer => !('error' in s))
    // No reset, no refusal, no request left without an answer.
    expect(failures).toEqual([])
    const ok = answers.filter((a) => a.status >= 200 && a.status < 300)
    const refused = answers.filter((a) => a.status === 503)
    const other = answers.filter((a) => !ok.includes(a) && !refused.includes(a))
    expect(other.map((a) => ({ id: a.id, status: a.status, body: a.body }))).toEqual([])
    // Each client ended on a 503 that tells it to go elsewhere, on a connection the server closes.
    expect(refused).toHaveLength(CLIENTS)
    for (const r of refused) {
      expect(r.body).toMatchObject({ error: 'unavailable', retriable: true })
      expect(r.connection).toBe('close')
    }
    // The creates in flight at SIGTERM were answered 2xx after it, not cut off.
    const finishedAfterSignal = ok.filter((a) => a.sentAt < signalledAt && a.answeredAt >= signalledAt)
    expect(finishedAfterSignal.length).toBeGreaterThan(0)

    // Every 2xx create is in the event log; no create answered 503 is.
    const streams = await orderStreams()
    for (const a of ok) {
      const types = streams.get(a.id)
      expect(types, `create ${a.id} answered ${String(a.status)} but not recorded`).toBeDefined()
      expect(types?.slice(0, 2)).toEqual(['OrderCreated', 'PaymentRequested'])
      if (a.status === 201) expect(types).toContain('PaymentRequestAccepted')
    }
    for (const r of refused) expect(streams.has(r.id), `create ${r.id} answered 503 but recorded`).toBe(false)
    expect(streams.size).toBe(ok.length)

    console.info(
      `SIGTERM after ${String(answeredBefore)} answered creates: ${String(ok.length)} creates answered 2xx (${String(finishedAfterSignal.length)} of them in flight at SIGTERM), ${String(refused.length)} answered 503 retriable, ${String(failures.length)} without an answer; satang exited ${String(stopMs)} ms after SIGTERM`,
    )
  })

  it('a request still running at SATANG_SHUTDOWN_TIMEOUT_MS is abandoned with a log line naming it, and satang stops with exit 1 saying what did not stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satang-shutdown-deadline-'))
    dirs.push(dir)
    const port = await freePort()
    const sandboxPort = await freePort()
    const proc = startSatangProcess(['up'], {
      env: envWithoutSatangSettings({
        SATANG_LOG_LEVEL: 'warn',
        SATANG_DATABASE_URL: db.url,
        SATANG_DATA_DIR: dir,
        SATANG_HTTP_PORT: String(port),
        SATANG_SANDBOX_PORT: String(sandboxPort),
        SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`,
        // Off: its daily run must not take the gateway fault armed for the create.
        SATANG_RECONCILE_SCHEDULER: 'off',
        // The gateway would hold the create for a minute; the stop waits one second for it.
        SATANG_GATEWAY_TIMEOUT_MS: '60000',
        SATANG_SHUTDOWN_TIMEOUT_MS: '1000',
      }),
      cwd: dir,
    })
    launched.push(proc)
    await proc.waitFor(/satang: up\./, 90_000)
    const armed = await fetch(`http://127.0.0.1:${String(sandboxPort)}/_sandbox/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gateway: { hang: { count: 1 } } }) })
    expect(armed.status).toBe(200)

    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const hung = create(port, agent, 'SD-HUNG-1')
    // The create is in flight once the sandbox holds it.
    for (let i = 0; i < 200; i++) {
      const faults = (await (await fetch(`http://127.0.0.1:${String(sandboxPort)}/_sandbox/faults`)).json()) as { gateway?: { hang?: { count?: number } } }
      if (faults.gateway?.hang?.count === 0) break
      await sleep(50)
    }
    const signalledAt = Date.now()
    const exited = proc.stop('SIGTERM')
    const code = await Promise.race([exited, sleep(30_000).then(() => 'still running' as const)])
    const stopMs = Date.now() - signalledAt
    expect(code, `stdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`).toBe(1)
    // Not the gateway's 60 s: the deadline, the abandoned parts' last chance, the process's end.
    expect(stopMs).toBeLessThan(10_000)
    const outcome = await hung
    agent.destroy()
    expect('error' in outcome).toBe(true) // abandoned: its connection was closed without an answer
    expect(proc.stdout() + proc.stderr()).toMatch(/stop: 1 request\(s\) still in flight after 800 ms \(SATANG_SHUTDOWN_TIMEOUT_MS\) abandoned/)
    expect(proc.stderr()).toMatch(/satang: did not stop cleanly: the HTTP service: the stop failed: 1 request\(s\) still in flight at the deadline were abandoned: POST \/v1\/payments/)
    expect(proc.stdout()).toContain('satang: stopped, not cleanly (exit 1).')
  })
  it('SIGTERM while satang is starting: it stops cleanly once started (exit 0, "stopped."), and its instance lock is free for the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satang-shutdown-starting-'))
    dirs.push(dir)
    const env = envWithoutSatangSettings({
      SATANG_LOG_LEVEL: 'warn',
      SATANG_DATABASE_URL: db.url,
      SATANG_DATA_DIR: dir,
      SATANG_HTTP_PORT: String(await freePort()),
      SATANG_SANDBOX_PORT: String(await freePort()),
      SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`,
      SATANG_RECONCILE_SCHEDULER: 'off',
    })
    const proc = startSatangProcess(['up'], { env, cwd: dir })
    launched.push(proc)
    // The signal arrives as soon as it says it is starting: before its HTTP service or any role is up.
    await proc.waitFor(/satang: starting/, 60_000)
    const code = await Promise.race([proc.stop('SIGTERM'), sleep(60_000).then(() => 'still running' as const)])
    const output = `stdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`
    expect(code, output).toBe(0)
    expect(proc.child.signalCode, output).toBeNull()
    expect(proc.stdout(), output).toMatch(/SIGTERM while starting: stopping once started/)
    expect(proc.stdout(), output).toMatch(/satang: stopped\./)
    // Nothing left behind: a second satang on the same data directory starts.
    const again = startSatangProcess(['up'], { env, cwd: dir })
    launched.push(again)
    await again.waitFor(/satang: up\./, 90_000)
    expect(await again.stop('SIGTERM')).toBe(0)
  })
})
