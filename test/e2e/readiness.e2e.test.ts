import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, type Pool } from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import type { EventStore } from '../../src/application/ports/event-store.ts'
import { silentLogger } from '../../src/logger.ts'
import { makePostgresPool } from '../../src/platform/postgres/pool.ts'
import { freshDatabase } from '../adapters/http/database.ts'
import { runCli } from '../support/cli.ts'
import { scriptBroker, scriptBrokerSkipReason, type ScriptBroker } from '../support/kafka.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'
import { tcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'
import { appendOrders, eventually } from './relay-support.ts'

/**
 * Acceptance (issue 25, item 4): `/readyz` of real `satang up` processes answers 503 naming the failing
 * check and its reason when the database is down (a TCP proxy in front of PostgreSQL, cut and opened
 * again), when a projection stopped on an event it cannot apply (a poison event), and when the relay's
 * broker is down (a broker of the test's own, scripts/kafka.sh stop/start); 200 again once each
 * recovers. `/livez` stays 200 throughout. The console's lag table shows the relay of another process
 * publishing, although the API process has no Kafka settings.
 */

const log = silentLogger()
const TOKEN = 'readiness-e2e-token-0123456789abcdef'
const launched: SatangProcess[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const proc of launched.splice(0)) if (proc.child.exitCode === null && proc.child.signalCode === null) await proc.stop('SIGKILL')
})
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

type Ready = { readonly status: number; readonly body: { status?: string; checks?: Record<string, string>; failing?: ReadonlyArray<{ check: string; reason: string }> } }

const readyz = async (port: number): Promise<Ready> => {
  const res = await fetch(`http://127.0.0.1:${String(port)}/readyz`, { signal: AbortSignal.timeout(10_000) })
  return { status: res.status, body: (await res.json()) as Ready['body'] }
}

/** Polls /readyz until `want` holds; returns the answer that did. */
const readyzUntil = async (port: number, what: string, want: (r: Ready) => boolean, timeoutMs = 90_000): Promise<Ready> => {
  let last: Ready | string = 'no answer yet'
  await eventually(
    `${what} (last /readyz: ${JSON.stringify(last)})`,
    async () => {
      last = await readyz(port).catch((e: unknown) => (e instanceof Error ? e.message : String(e)))
      return typeof last !== 'string' && want(last)
    },
    timeoutMs,
  )
  if (typeof last === 'string') throw new Error(last)
  return last
}

const failingCheck = (r: Ready, check: string): string | undefined => r.body.failing?.find((f) => f.check === check)?.reason

const sql = async (url: string, text: string): Promise<void> => {
  const c = new Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(text)
  } finally {
    await c.end()
  }
}

const tempDir = (label: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `satang-readyz-${label}-`))
  dirs.push(dir)
  return dir
}

describe('/readyz of real processes: the database down, a projection stopped on a poison event', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>
  let proxy: TcpProxy
  let pool: Pool
  let store: EventStore
  let proxiedUrl: string

  beforeAll(async () => {
    db = await freshDatabase('readyz')
    const direct = new URL(db.url)
    proxy = await tcpProxy({ host: direct.hostname, port: Number(direct.port === '' ? '5432' : direct.port) })
    const via = new URL(db.url)
    via.hostname = '127.0.0.1'
    via.port = String(proxy.port)
    proxiedUrl = via.toString()
    pool = makePostgresPool({ url: db.url, poolMax: 2 }, log)
    store = makePostgresEventStore({ pool, log }, { schema: 'eventstore' })
  }, 60_000)

  afterAll(async () => {
    await proxy.stop()
    await store.close()
    await pool.end()
    await db.drop()
  })

  const start = async (dir: string, port: number): Promise<SatangProcess> => {
    const proc = startSatangProcess(['up'], {
      env: envWithoutSatangSettings({
        SATANG_LOG_LEVEL: 'warn',
        SATANG_DATABASE_URL: proxiedUrl,
        SATANG_DATA_DIR: dir,
        SATANG_HTTP_PORT: String(port),
        SATANG_SANDBOX_PORT: String(await freePort()),
        SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`,
        SATANG_RECONCILE_SCHEDULER: 'off',
      }),
      cwd: dir,
    })
    launched.push(proc)
    await proc.waitFor(/satang: up\./, 120_000)
    return proc
  }

  it('the database down: 503 naming event_store, read_models and projections with the reason; /livez 200; 200 again when it is back', async () => {
    const port = await freePort()
    const proc = await start(tempDir('db'), port)
    const up = await readyzUntil(port, 'ready after start', (r) => r.status === 200)
    expect(up.body.checks).toMatchObject({ event_store: 'ok', read_models: 'ok', projections: 'ok' })

    await proxy.stop()
    const down = await readyzUntil(port, '503 with the database down', (r) => r.status === 503 && failingCheck(r, 'read_models') !== undefined, 30_000)
    expect(down.body.status).toBe('unavailable')
    expect(failingCheck(down, 'event_store')).toBeDefined()
    expect(failingCheck(down, 'read_models')).toMatch(/ECONNREFUSED|terminat|connect|timeout|no answer/i)
    const live = await fetch(`http://127.0.0.1:${String(port)}/livez`)
    expect(live.status).toBe(200)

    await proxy.start()
    const back = await readyzUntil(port, '200 once the database is back', (r) => r.status === 200, 60_000)
    expect(back.body.failing).toEqual([])
    expect(await proc.stop('SIGTERM')).toBe(0)
  }, 300_000)

  it('a projection stopped on an event it cannot apply: 503 naming projections and the event; 200 again once fixed and restarted', async () => {
    const dir = tempDir('poison')
    const port = await freePort()
    const first = await start(dir, port)
    await readyzUntil(port, 'ready after start', (r) => r.status === 200)

    // The poison: order events the orders read model refuses (a constraint the test adds), as a defect would.
    await sql(db.url, `alter table satang.orders add constraint readyz_poison check (stream_name not like '%-poison')`)
    await appendOrders(store, 3, 'poison')
    const stopped = await readyzUntil(port, '503 naming the stopped projection', (r) => r.status === 503 && failingCheck(r, 'projections') !== undefined, 60_000)
    expect(failingCheck(stopped, 'projections')).toMatch(/projection orders stopped on an error: .*readyz_poison/)
    expect(stopped.body.checks?.['event_store']).toBe('ok')

    // Fixed (the constraint goes) and restarted: the projector tries the stopped projection again.
    await sql(db.url, 'alter table satang.orders drop constraint readyz_poison')
    expect(await first.stop('SIGTERM')).toBe(0)
    await start(dir, port)
    const back = await readyzUntil(port, '200 after the fix and a restart', (r) => r.status === 200, 60_000)
    expect(back.body.checks?.['projections']).toBe('ok')
  }, 300_000)
})

const kafkaSkip = await scriptBrokerSkipReason()
if (kafkaSkip !== undefined) console.info(`readiness relay test skipped: ${kafkaSkip}`)

describe.skipIf(kafkaSkip !== undefined)('/readyz of the relay role and the console lag table, with a broker of our own', () => {
  let broker: ScriptBroker
  let db: Awaited<ReturnType<typeof freshDatabase>>
  let pool: Pool
  let store: EventStore
  const topic = `satang.test.readyz.${randomUUID().slice(0, 8)}`

  beforeAll(async () => {
    broker = await scriptBroker()
    await broker.start()
    db = await freshDatabase('readyzrelay')
    const migrated = await runCli(['migrate'], { env: envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: db.url }) })
    expect(migrated.code, migrated.stderr).toBe(0)
    pool = makePostgresPool({ url: db.url, poolMax: 2 }, log)
    store = makePostgresEventStore({ pool, log }, { schema: 'eventstore' })
  }, 180_000)

  afterAll(async () => {
    await store.close()
    await pool.end()
    await db.drop()
    await broker.remove()
  })

  it('the broker down: 503 naming relay with the error; 200 again when it is back; the console of an API without Kafka settings shows the relay publishing', async () => {
    const relayPort = await freePort()
    const relay = startSatangProcess(['up', '--role', 'relay'], {
      env: envWithoutSatangSettings({
        SATANG_LOG_LEVEL: 'warn',
        SATANG_DATABASE_URL: db.url,
        SATANG_HTTP_PORT: String(relayPort),
        SATANG_KAFKA_BROKERS: broker.brokers.join(','),
        SATANG_KAFKA_TOPIC: topic,
        SATANG_KAFKA_TIMEOUT_MS: '3000',
        SATANG_KAFKA_RETRY_BASE_MS: '200',
        SATANG_KAFKA_RETRY_MAX_MS: '2000',
      }),
    })
    launched.push(relay)
    await relay.waitFor(/satang: up/, 120_000)
    await appendOrders(store, 20, 'before')
    const up = await readyzUntil(relayPort, 'relay ready', (r) => r.status === 200 && r.body.checks?.['relay'] === 'ok', 90_000)
    expect(up.body.checks).toHaveProperty('relay', 'ok')

    // The API process knows nothing of Kafka; its console reads the relay's own rows.
    const apiDir = tempDir('api')
    const apiPort = await freePort()
    const api = startSatangProcess(['up', '--role', 'api'], {
      env: envWithoutSatangSettings({
        SATANG_LOG_LEVEL: 'warn',
        SATANG_DATABASE_URL: db.url,
        SATANG_DATA_DIR: apiDir,
        SATANG_HTTP_PORT: String(apiPort),
        SATANG_SANDBOX_PORT: String(await freePort()),
        SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read`,
      }),
      cwd: apiDir,
    })
    launched.push(api)
    await api.waitFor(/satang: up/, 120_000)
    const base = `http://127.0.0.1:${String(apiPort)}`
    const signIn = await fetch(`${base}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base }, body: new URLSearchParams({ token: TOKEN, next: '/console' }).toString() })
    expect(signIn.status).toBe(303)
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    let row = ''
    await eventually('the console lag table shows the relay publishing', async () => {
      const page = await (await fetch(`${base}/console`, { headers: { cookie } })).text()
      row = new RegExp(`<tr>(<th[^>]*>Kafka relay \\(${topic.replaceAll('.', '\\.')}\\)</th>.*?)</tr>`).exec(page)?.[1] ?? ''
      return row.includes('>publishing</td>')
    }, 60_000)
    expect(row).toContain(`Kafka relay (${topic})`)
    expect(row).not.toContain('not configured')
    // satang relay --status of a process without Kafka settings reads the same rows.
    const status = await runCli(['relay', '--status', '--json'], { env: envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', SATANG_DATABASE_URL: db.url }) })
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ topic, state: 'publishing' })

    // The broker goes down; events wait: the publish fails and /readyz names the relay.
    await broker.stop()
    await appendOrders(store, 20, 'during')
    const down = await readyzUntil(relayPort, '503 naming the relay', (r) => r.status === 503 && failingCheck(r, 'relay') !== undefined, 90_000)
    expect(failingCheck(down, 'relay')).toContain(`cannot publish to ${topic}`)
    expect((await fetch(`http://127.0.0.1:${String(relayPort)}/livez`)).status).toBe(200)

    await broker.start()
    const back = await readyzUntil(relayPort, '200 once the broker is back', (r) => r.status === 200, 120_000)
    expect(back.body.checks).toHaveProperty('relay', 'ok')
    expect(await relay.stop('SIGTERM')).toBe(0)
    expect(await api.stop('SIGTERM')).toBe(0)
  }, 480_000)
})
