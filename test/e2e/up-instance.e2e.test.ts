import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/adapters/postgres/embedded.ts'
import { silentLogger } from '../../src/logger.ts'
import { runCli } from '../support/cli.ts'
import { freePort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess, type SatangProcess } from '../support/process.ts'

/**
 * Acceptance (issue 11, defect 2): one satang per data directory — a second `satang up` refuses,
 * naming the first, which goes on serving; a satang whose database goes away keeps retrying and
 * recovers by itself when it returns; and it stops within seconds on SIGTERM even while the database
 * is gone.
 */

const TOKEN = 'instance-e2e-token-0123456789'
const dirs: string[] = []
const tempDir = (label: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `satang-${label}-`))
  // As root, PostgreSQL runs as the `postgres` user, which must be able to reach the data folder.
  chmodSync(dir, 0o755)
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

// A test that fails or times out half-way must not leave a satang running.
const launched: SatangProcess[] = []
const launch = (env: NodeJS.ProcessEnv, cwd: string): SatangProcess => {
  const proc = startSatangProcess(['up'], { env, cwd })
  launched.push(proc)
  return proc
}
afterEach(async () => {
  for (const proc of launched.splice(0)) if (proc.child.exitCode === null && proc.child.signalCode === null) await proc.stop('SIGKILL')
})

type Ports = { readonly http: number; readonly sandbox: number; readonly pg: number }
const freePorts = async (): Promise<Ports> => ({ http: await freePort(), sandbox: await freePort(), pg: await freePort() })

const envFor = (ports: Ports, extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
  envWithoutSatangSettings({
    SATANG_LOG_LEVEL: 'warn',
    SATANG_HTTP_PORT: String(ports.http),
    SATANG_SANDBOX_PORT: String(ports.sandbox),
    SATANG_EMBEDDED_PG_PORT: String(ports.pg),
    SATANG_API_TOKENS: `test:${TOKEN}:payments:write+read+audit`,
    ...extra,
  })

const health = async (ports: Ports): Promise<string> => {
  try {
    const res = await fetch(`http://127.0.0.1:${String(ports.http)}/healthz`, { signal: AbortSignal.timeout(5_000) })
    const body = (await res.json()) as { status?: unknown }
    return `${String(res.status)} ${String(body.status)}`
  } catch (e) {
    return `no answer: ${e instanceof Error ? e.message : String(e)}`
  }
}

/** Polls /healthz until it answers `want` (or fails after `timeoutMs`). */
const waitForHealth = async (ports: Ports, want: RegExp, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    last = await health(ports)
    if (want.test(last)) return
    await sleep(100)
  }
  throw new Error(`/healthz never answered ${String(want)}; last: ${last}`)
}

const api = async (ports: Ports, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`http://127.0.0.1:${String(ports.http)}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

const paymentBody = (id: string) => ({
  service: 'svc.thaiqr.pay',
  merchant_order_id: id,
  order_amount: '10.00',
  order_currency: 'THB',
  order_desc: 'recovery',
  payment_method: 'THAI_QR',
  customer: { merchant_user_id: 'u-1' },
})

/** A payment is created (201), and the projector brings it into the `orders` read model. */
const createAndProject = async (ports: Ports, id: string): Promise<void> => {
  const created = await api(ports, 'POST', '/v1/payments', paymentBody(id))
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  const deadline = Date.now() + 30_000
  for (;;) {
    const read = await api(ports, 'GET', `/v1/payments/${id}`)
    if (read.status === 200 && read.json['served_from'] === 'read_model') return
    if (Date.now() > deadline) throw new Error(`payment ${id} never reached the read model: ${JSON.stringify(read.json)}`)
    await sleep(100)
  }
}

/** SIGTERM, then the exit code, failing if the process has not exited within `boundMs`. */
const terminate = async (proc: SatangProcess, boundMs: number): Promise<{ code: number | null; ms: number }> => {
  const started = Date.now()
  const exited = proc.stop('SIGTERM')
  const timedOut = sleep(boundMs).then(() => 'timed out' as const)
  const outcome = await Promise.race([exited, timedOut])
  if (outcome === 'timed out') {
    await proc.stop('SIGKILL')
    throw new Error(`satang did not exit within ${String(boundMs)} ms of SIGTERM\nstdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`)
  }
  return { code: outcome, ms: Date.now() - started }
}

const postmasterPid = (pgDataDir: string): number => Number(readFileSync(join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0])

const pidRuns = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('one satang per data directory', () => {
  it('a second satang up on the same data directory refuses, naming the first, which keeps answering /healthz ok', async () => {
    const dir = tempDir('two')
    const ports = await freePorts()
    const first = launch(envFor(ports), dir)
    try {
      await first.waitFor(/satang: up\./, 90_000)
      const lockFile = join(dir, '.satang', 'satang.lock')
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: first.child.pid, command: 'satang up', url: `http://127.0.0.1:${String(ports.http)}` })

      // /healthz of the first, every 50 ms, during and after the second's attempt
      const answers: string[] = []
      let polling = true
      const poller = (async () => {
        while (polling) {
          answers.push(await health(ports))
          await sleep(50)
        }
      })()
      // exactly the same configuration, as a second terminal would have it
      const second = await runCli(['up'], { env: envFor(ports), cwd: dir })
      // a sandbox of its own on the built-in sandbox's state file would write into the same journal
      const stateFile = join(dir, '.satang', 'sandbox', 'state.json')
      const sandboxOnIt = await runCli(['sandbox', '--port', '0', '--state', stateFile, '--data-dir', join(dir, 'other-sandbox')], { env: envFor(ports), cwd: dir })
      // a tool that needs the database joins the running one as a client and never stops it
      const migrated = await runCli(['migrate'], { env: envFor(ports), cwd: dir })
      await sleep(1_000)
      polling = false
      await poller

      expect(second.code).toBe(3)
      expect(second.stderr).toContain(`the data directory ${join(dir, '.satang')} is in use by satang up (pid ${String(first.child.pid)}, started 20`)
      expect(second.stderr).toContain(`serving http://127.0.0.1:${String(ports.http)})`)
      expect(second.stderr).toContain(`lock file ${lockFile}`)
      expect(second.stdout).not.toContain('satang: up.')
      expect(sandboxOnIt.code, sandboxOnIt.stderr).toBe(3)
      expect(sandboxOnIt.stderr).toContain(`satang: cannot start the sandbox: --state: the sandbox state ${stateFile} is in use by the built-in sandbox of satang up (pid ${String(first.child.pid)}, started 20`)
      expect(sandboxOnIt.stderr).toContain(`(lock file ${stateFile}.lock)`)
      expect(sandboxOnIt.stdout).toBe('')
      expect(migrated.code, migrated.stderr).toBe(0)
      expect(migrated.stdout).toContain('(running)')

      expect(answers.length).toBeGreaterThan(10)
      expect(answers.filter((a) => a !== '200 ok')).toEqual([])
      expect(first.child.exitCode).toBeNull()
      await createAndProject(ports, 'TWO-1')
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0)
    }
    expect(first.stdout()).toContain('satang: stopped.')
    expect(existsSync(join(dir, '.satang', 'satang.lock'))).toBe(false)
    expect(existsSync(join(dir, '.satang', 'sandbox', 'state.json.lock'))).toBe(false)
    expect(existsSync(join(dir, '.satang', 'postgres', 'postmaster.pid'))).toBe(false)
  }, 180_000)
})

describe('a satang whose database goes away', () => {
  let dbDir: string
  let dbPort: number
  let database: EmbeddedPostgres
  const startDatabase = async (): Promise<EmbeddedPostgres> => {
    const started = await startEmbeddedPostgres({ log: silentLogger() }, { dataDir: join(dbDir, 'pg'), port: dbPort })()
    if (E.isLeft(started)) throw new Error(started.left.message, { cause: started.left.cause })
    return started.right
  }
  beforeAll(async () => {
    dbDir = tempDir('external-db')
    dbPort = await freePort()
    database = await startDatabase()
  })
  afterAll(async () => {
    await database.stop()
  })

  it('keeps retrying while its PostgreSQL (SATANG_DATABASE_URL) is stopped, and recovers by itself when it is back', async () => {
    const ports = await freePorts()
    const satang = launch(envFor(ports, { SATANG_DATABASE_URL: database.url }), tempDir('recovers'))
    try {
      await satang.waitFor(/satang: up\./, 90_000)
      await createAndProject(ports, 'REC-1')

      await database.stop()
      await waitForHealth(ports, /^503 unavailable$/)
      const refused = await api(ports, 'POST', '/v1/payments', paymentBody('REC-DOWN'))
      expect(refused).toMatchObject({ status: 503, json: { error: 'unavailable', retriable: true } })
      await sleep(3_000) // long enough for every component to have failed and be retrying
      expect(await health(ports)).toBe('503 unavailable')

      database = await startDatabase()
      await waitForHealth(ports, /^200 ok$/)
      await createAndProject(ports, 'REC-2')
      expect(satang.child.exitCode).toBeNull()
    } finally {
      expect((await terminate(satang, 10_000)).code).toBe(0)
    }
    expect(satang.stdout()).toContain('satang: stopped.')
  }, 180_000)

  it('stops within seconds on SIGTERM while its database is down, saying so', async () => {
    const ports = await freePorts()
    const satang = launch(envFor(ports, { SATANG_DATABASE_URL: database.url }), tempDir('down-stop'))
    try {
      await satang.waitFor(/satang: up\./, 90_000)
      // right after start-up, while its recovery may still be reading the read models
      await database.stop()
      await waitForHealth(ports, /^503 unavailable$/)
      await sleep(2_000)
    } finally {
      const stopped = await terminate(satang, 10_000)
      expect(stopped.code).toBe(0)
      database = await startDatabase()
    }
    expect(satang.stdout()).toContain('satang: SIGTERM: stopping…')
    expect(satang.stdout()).toContain('satang: stopped.')
  }, 180_000)
})

describe('a satang whose embedded PostgreSQL dies', () => {
  it('starts it again and recovers by itself; SIGTERM while it is down stops satang and leaves no server running', async () => {
    const dir = tempDir('embedded-dies')
    const ports = await freePorts()
    const pgData = join(dir, '.satang', 'postgres')
    const satang = launch(envFor(ports, { SATANG_LOG_LEVEL: 'info' }), dir)
    let lastPid = 0
    try {
      await satang.waitFor(/satang: up\./, 90_000)
      await createAndProject(ports, 'EMB-1')

      const killed = postmasterPid(pgData)
      process.kill(killed, 'SIGKILL') // a crash, or the OOM killer
      const deadline = Date.now() + 30_000
      while (!satang.stderr().includes('embedded PostgreSQL running again')) {
        if (Date.now() > deadline) throw new Error(`embedded PostgreSQL was not started again\nstderr:\n${satang.stderr()}`)
        await sleep(100)
      }
      expect(satang.stderr()).toContain('embedded PostgreSQL stopped unexpectedly; starting it again')
      lastPid = postmasterPid(pgData)
      expect(lastPid).not.toBe(killed)
      await waitForHealth(ports, /^200 ok$/)
      await createAndProject(ports, 'EMB-2')

      process.kill(lastPid, 'SIGKILL')
    } finally {
      expect((await terminate(satang, 10_000)).code).toBe(0)
    }
    expect(satang.stdout()).toContain('satang: stopped.')
    // whatever the restart was doing when SIGTERM came, no server outlives satang
    const left = existsSync(join(pgData, 'postmaster.pid')) ? postmasterPid(pgData) : undefined
    expect(left === undefined || !pidRuns(left)).toBe(true)
  }, 180_000)
})

describe('a satang that is starting', () => {
  it('answers creates sent from the moment its port opens with no 5xx but 503s it says are retriable (8 clients polling the port)', async () => {
    const dir = tempDir('starting')
    const ports = await freePorts()
    const proc = launch(envFor(ports), dir)
    const answers: Array<{ status: number; body: string }> = []
    let answered = 0
    const client = async (c: number): Promise<void> => {
      for (let i = 0; answered < 80; i++) {
        try {
          const res = await fetch(`http://127.0.0.1:${String(ports.http)}/v1/payments`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify(paymentBody(`START-${String(c)}-${String(i)}`)),
            signal: AbortSignal.timeout(20_000),
          })
          answers.push({ status: res.status, body: (await res.text()).slice(0, 200) })
          answered += 1
        } catch {
          // not listening yet
          if (proc.child.exitCode !== null) throw new Error(`satang up exited ${String(proc.child.exitCode)}: ${proc.stderr().slice(-2000)}`)
          await sleep(2)
        }
      }
    }
    await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)))
    const failed = answers.filter((a) => a.status >= 500 && !(a.status === 503 && a.body.includes('"retriable":true')))
    expect(failed).toEqual([])
    expect(answers.filter((a) => a.status === 201).length).toBeGreaterThan(0)
    await proc.stop('SIGTERM')
  }, 120_000)
})
