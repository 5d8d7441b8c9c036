import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import { LOCK_FILE, describeHolder, lockDataDir, type InstanceLock } from '../../../src/adapters/os/instance-lock.ts'
import { identityOf } from '../../../src/adapters/os/processes.ts'
import { silentLogger } from '../../../src/logger.ts'

const log = silentLogger()
const dirs: string[] = []
const fresh = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'satang-lock-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const take = async (dir: string, command = 'satang up'): Promise<InstanceLock> => {
  const locked = await lockDataDir({ log }, dir, command)
  if (E.isLeft(locked)) throw new Error(`expected the lock: ${JSON.stringify(locked.left)}`)
  return locked.right
}

/** Writes a lock file as another process would have, with `fields` over a plausible holder. */
const plant = (dir: string, fields: Record<string, unknown>): void => {
  const me = identityOf()
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: me.pid, host: hostname(), startedAt: '2026-11-25T00:00:00.000Z', command: 'satang up', token: 'planted', startTime: me.startTime, bootId: me.bootId, ...fields }))
}

const holderOf = (dir: string): Record<string, unknown> => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as Record<string, unknown>

/** A pid that names no process now: a child that has exited (and been reaped). */
const deadPid = async (): Promise<number> => {
  const child = spawn(process.execPath, ['-e', ''])
  await new Promise((r) => child.on('exit', r))
  return child.pid ?? 0
}

describe('the data directory lock', () => {
  it('is held by one process: a second taker is told who holds it, until it is released', async () => {
    const dir = fresh()
    const lock = await take(dir)
    await lock.describe({ url: 'http://127.0.0.1:8080' })
    expect(holderOf(dir)).toMatchObject({ pid: process.pid, host: hostname(), command: 'satang up', url: 'http://127.0.0.1:8080' })

    const second = await lockDataDir({ log }, dir, 'satang up')
    expect(E.isLeft(second) && second.left._tag).toBe('DataDirInUse')
    if (E.isLeft(second) && second.left._tag === 'DataDirInUse') {
      expect(describeHolder(second.left.holder)).toMatch(new RegExp(`^satang up \\(pid ${String(process.pid)}, started \\d{4}-\\d\\d-\\d\\dT.*Z, serving http://127\\.0\\.0\\.1:8080\\)$`))
    }

    await lock.release()
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
    await (await take(dir)).release()
    expect(readdirSync(dir)).toEqual([]) // no staged or stale files left behind
  })

  it('replaces a stale lock: its process is gone (SIGKILL), or its pid now names another process (pid reuse)', async () => {
    const dir = fresh()
    plant(dir, { pid: await deadPid() })
    await (await take(dir)).release()

    // this test process is alive, but it is not the process that wrote this lock: it started at another moment
    plant(dir, { startTime: '1' })
    const lock = await take(dir)
    expect(holderOf(dir)['token']).not.toBe('planted')
    await lock.release()

    // a lock written before the last reboot
    plant(dir, { bootId: 'another-boot' })
    await (await take(dir)).release()
  })

  it('replaces a lock file it cannot read, and never replaces one from another host it cannot check', async () => {
    const dir = fresh()
    writeFileSync(join(dir, LOCK_FILE), '{"pid": 12')
    await (await take(dir)).release()

    plant(dir, { host: 'elsewhere.example', pid: await deadPid() })
    const refused = await lockDataDir({ log }, dir, 'satang up')
    expect(E.isLeft(refused) && refused.left._tag === 'DataDirInUse' && describeHolder(refused.left.holder)).toMatch(/^satang up \(pid \d+ on host elsewhere\.example, started 2026-11-25T00:00:00\.000Z\)$/)
  })

  it('release leaves a lock that is no longer this process\'s alone', async () => {
    const dir = fresh()
    const lock = await take(dir)
    plant(dir, { token: 'someone-else' })
    await lock.release()
    expect(holderOf(dir)['token']).toBe('someone-else')
  })

  const race = (dir: string, n: number): Promise<string[]> => {
    const module = fileURLToPath(new URL('../../../src/adapters/os/instance-lock.ts', import.meta.url))
    const script = `
      import { lockDataDir } from ${JSON.stringify(module)}
      const log = { child: () => log, warn: () => {}, info: () => {}, debug: () => {}, error: () => {} }
      const r = await lockDataDir({ log }, ${JSON.stringify(dir)}, 'racer')
      process.stdout.write(r._tag === 'Right' ? 'won' : r.left._tag)
      await new Promise((done) => setTimeout(done, 1500))
      if (r._tag === 'Right') await r.right.release()
    `
    return Promise.all(
      Array.from({ length: n }, () =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../../..', import.meta.url)) })
          let out = ''
          let err = ''
          child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
          child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
          child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`racer failed (${String(code)}): ${err}`))))
        }),
      ),
    )
  }

  // Two holders were seen under load: a process that had read the stale lock moved the fresh lock of
  // the one that replaced it, and a third took the name in between. Two CPU burners keep every racer
  // slow between its read and its rename, round after round.
  it('under load, round after round, exactly one of eight racers for a stale lock wins, and the replacement claims are gone after its release', async () => {
    const burners = Array.from({ length: 2 }, () => spawn(process.execPath, ['-e', 'const end = Date.now() + 60000; while (Date.now() < end) {}'], { stdio: 'ignore' }))
    try {
      for (let round = 0; round < 4; round += 1) {
        const dir = fresh()
        plant(dir, { pid: await deadPid() })
        const outcomes = await race(dir, 8)
        expect(outcomes.filter((o) => o === 'won'), `round ${String(round)}: ${outcomes.join(', ')}`).toHaveLength(1)
        expect(outcomes.filter((o) => o === 'DataDirInUse'), `round ${String(round)}: ${outcomes.join(', ')}`).toHaveLength(7)
        expect(readdirSync(dir)).toEqual([])
      }
    } finally {
      for (const b of burners) b.kill('SIGKILL')
    }
  }, 120_000)

  it('a replacement claim left by a process that died is followed by the next one', async () => {
    const dir = fresh()
    plant(dir, { pid: await deadPid() })
    const stale = readFileSync(join(dir, LOCK_FILE), 'utf8')
    const { createHash } = await import('node:crypto')
    const digest = createHash('sha256').update(stale).digest('hex').slice(0, 32)
    writeFileSync(join(dir, `${LOCK_FILE}.replace.${digest}.1`), `${JSON.stringify({ pid: await deadPid(), host: hostname() })}\n`)
    const taken = await lockDataDir({ log }, dir, 'after an abandoned claim')
    expect(E.isRight(taken)).toBe(true)
    if (E.isRight(taken)) await taken.right.release()
    expect(readdirSync(dir)).toEqual([])
  })

  it('among processes racing for a stale lock, exactly one wins', async () => {
    const dir = fresh()
    plant(dir, { pid: await deadPid() })
    const outcomes = await race(dir, 6)
    expect(outcomes.filter((o) => o === 'won')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'DataDirInUse')).toHaveLength(5)
    expect(readdirSync(dir)).toEqual([])
  })
})
