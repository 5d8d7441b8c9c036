import { chmodSync, copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import { LOCK_FILE, lockDataDir } from '../../../src/adapters/os/instance-lock.ts'
import { makeLogger } from '../../../src/logger.ts'

/**
 * The lock file's update (`describe`, once the holder knows its URL) is never written through a
 * symbolic link: not at the lock file's name, and not at a staged name derived from the token that
 * anyone can read in the lock file. On the real file system.
 */

const PAST = new Date('2020-01-02T03:04:05.000Z')
const root = mkdtempSync(join(tmpdir(), 'satang-lock-links-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const fresh = (): string => mkdtempSync(join(root, 'd-'))
const victim = (text: string): string => {
  const p = join(fresh(), 'victim.txt')
  writeFileSync(p, text)
  chmodSync(p, 0o644)
  utimesSync(p, PAST, PAST)
  return p
}
const expectUntouched = (p: string, text: string): void => {
  expect(readFileSync(p, 'utf8')).toBe(text)
  expect(statSync(p).mtimeMs).toBe(PAST.getTime())
}
const capturedLogger = () => {
  const sink = new PassThrough()
  let text = ''
  sink.on('data', (d: Buffer) => (text += d.toString('utf8')))
  return { logger: makeLogger({ level: 'warn' }, sink), lines: () => text }
}

describe('the lock file is never updated through a symbolic link', () => {
  it('a link waiting at <lock>.<token>.update (the token is readable in the lock file) is not written through', async () => {
    const dir = fresh()
    const { logger } = capturedLogger()
    const locked = await lockDataDir({ log: logger }, dir, 'satang up')
    if (E.isLeft(locked)) throw new Error('lock')
    const token = (JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { token: string }).token
    const v = victim('victim\n')
    symlinkSync(v, join(dir, `${LOCK_FILE}.${token}.update`))
    await locked.right.describe({ url: 'http://127.0.0.1:8080' })
    expectUntouched(v, 'victim\n')
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ token, url: 'http://127.0.0.1:8080' })
    await locked.right.release()
  })

  it('a link put at the lock file\'s name (to a copy of it, so it still reads as ours) is refused and logged with the path and the rule; its target untouched', async () => {
    const dir = fresh()
    const captured = capturedLogger()
    const locked = await lockDataDir({ log: captured.logger }, dir, 'satang up')
    if (E.isLeft(locked)) throw new Error('lock')
    const lockPath = join(dir, LOCK_FILE)
    const copy = join(fresh(), 'copy.lock')
    copyFileSync(lockPath, copy)
    utimesSync(copy, PAST, PAST)
    const text = readFileSync(copy, 'utf8')
    rmSync(lockPath)
    symlinkSync(copy, lockPath)
    await locked.right.describe({ url: 'http://127.0.0.1:8080' })
    expectUntouched(copy, text)
    expect(captured.lines()).toContain('not updating the lock file')
    expect(captured.lines()).toContain(`${lockPath}\\": is a symbolic link`)
    expect(readdirSync(dir)).toEqual([LOCK_FILE])
  })
})
