import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_THROTTLE, makeSignInThrottle } from '../../../../src/adapters/http/console/sign-in-throttle.ts'
import { sessionSecretOf } from '../../../../src/composition/secret-files.ts'

const T0 = new Date('2026-11-25T03:00:00Z')
const after = (ms: number): Date => new Date(T0.getTime() + ms)

describe('the sign-in throttle', () => {
  it('each wrong token from an address waits longer; the 6th within a minute locks the address out for a minute, the next lockout for two', () => {
    const throttle = makeSignInThrottle()
    const delays = [0, 1, 2, 3, 4].map((i) => throttle.failed('203.0.113.7', after(i * 1000)))
    expect(delays.map((d) => d.delayMs)).toEqual([0, 200, 400, 800, 1600])
    expect(delays.every((d) => d.lockout === null)).toBe(true)
    expect(throttle.admit('203.0.113.7', after(5000))).toEqual({ _tag: 'Allowed' })
    const sixth = throttle.failed('203.0.113.7', after(5000))
    expect(sixth.lockout).toMatchObject({ failures: 6, windowSeconds: 60, retryAfterSeconds: 60 })
    expect(sixth.lockout?.lockedUntil).toEqual(after(65_000))
    expect(throttle.admit('203.0.113.7', after(30_000))).toEqual({ _tag: 'LockedOut', retryAfterSeconds: 35 })
    expect(throttle.admit('198.51.100.1', after(30_000))).toEqual({ _tag: 'Allowed' })
    expect(throttle.admit('203.0.113.7', after(65_000))).toEqual({ _tag: 'Allowed' })
    let again = throttle.failed('203.0.113.7', after(66_000))
    for (let i = 1; i < 6; i++) again = throttle.failed('203.0.113.7', after(66_000 + i))
    expect(again.lockout?.retryAfterSeconds).toBe(120)
  })

  it('a burst across the edge of a minute gets the allowance once: the count starts again only after a quiet minute', () => {
    const throttle = makeSignInThrottle()
    // One failure, four just before a minute has passed since it, one just after: counted per minute
    // from the first failure, the sixth would begin a new count.
    throttle.failed('a', after(0))
    for (const ms of [56_000, 57_000, 58_000, 59_000]) expect(throttle.failed('a', after(ms)).lockout).toBeNull()
    expect(throttle.failed('a', after(60_000)).lockout).toMatchObject({ failures: 6, retryAfterSeconds: 60 })
    // Failures never a quiet minute apart add up, however slowly they come.
    for (let i = 0; i < 5; i++) expect(throttle.failed('slow', after(i * 59_000)).lockout).toBeNull()
    expect(throttle.failed('slow', after(5 * 59_000)).lockout).not.toBeNull()
  })

  it('failures after a quiet minute do not add up; a right token starts the count again', () => {
    const throttle = makeSignInThrottle()
    for (let i = 0; i < 5; i++) throttle.failed('a', after(i))
    expect(throttle.failed('a', after(61_000)).lockout).toBeNull()
    for (let i = 0; i < 4; i++) throttle.failed('b', after(i))
    throttle.succeeded('b')
    expect(throttle.failed('b', after(10)).delayMs).toBe(0)
  })

  it('failures from every address together only slow down, up to 5 s each; they never lock an address that did not fail', () => {
    const throttle = makeSignInThrottle()
    let last = { delayMs: 0, lockout: null as unknown }
    for (let i = 0; i < 40; i++) last = throttle.failed(`10.0.0.${String(i)}`, after(i))
    expect(last.delayMs).toBe(DEFAULT_THROTTLE.maxAllDelayMs)
    expect(last.lockout).toBeNull()
    expect(throttle.admit('10.0.0.99', after(50))).toEqual({ _tag: 'Allowed' })
  })

  it('holds at most maxEntries addresses, the least recently failing out first, and forgets an address an hour after it last failed', () => {
    const throttle = makeSignInThrottle({ ...DEFAULT_THROTTLE, maxEntries: 100 })
    for (let i = 0; i < 1000; i++) throttle.failed(`addr-${String(i)}`, after(i))
    expect(throttle.size()).toBe(100)
    for (let i = 0; i < 6; i++) throttle.failed('locked', after(2000 + i))
    expect(throttle.admit('locked', after(3000))._tag).toBe('LockedOut')
    throttle.failed('later', after(2 * 3_600_000))
    expect(throttle.size()).toBe(1)
  })
})

describe('the session secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'satang-session-secret-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('is generated once into the data folder (0600) and read back the same', async () => {
    const path = join(dir, 'session-secret')
    const first = await sessionSecretOf({ SATANG_SESSION_SECRET_FILE: undefined }, path)
    const second = await sessionSecretOf({ SATANG_SESSION_SECRET_FILE: undefined }, path)
    if (E.isLeft(first) || E.isLeft(second)) throw new Error('expected secrets')
    expect(first.right.generated).toBe(true)
    expect(second.right.generated).toBe(false)
    expect(second.right.secret.equals(first.right.secret)).toBe(true)
    expect(first.right.secret.length).toBeGreaterThanOrEqual(32)
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  it('is never written through, nor read from, a symbolic link in the data folder', async () => {
    const target = join(dir, 'known')
    writeFileSync(target, 'a-secret-someone-else-knows-0123456789\n')
    const link = join(dir, 'linked-secret')
    symlinkSync(target, link)
    const r = await sessionSecretOf({ SATANG_SESSION_SECRET_FILE: undefined }, link)
    expect(r).toEqual(E.left(expect.stringContaining('symbolic link') as unknown))
    const dangling = join(dir, 'dangling-secret')
    symlinkSync(join(dir, 'nowhere'), dangling)
    const w = await sessionSecretOf({ SATANG_SESSION_SECRET_FILE: undefined }, dangling)
    expect(E.isLeft(w)).toBe(true)
    expect(() => readFileSync(join(dir, 'nowhere'))).toThrow()
  })

  it('SATANG_SESSION_SECRET_FILE is read (every api process the same), and refused when short, naming the variable and never the content', async () => {
    const file = join(dir, 'configured')
    writeFileSync(file, `${'ab'.repeat(32)}\n`)
    const r = await sessionSecretOf({ SATANG_SESSION_SECRET_FILE: file }, join(dir, 'unused'))
    expect(E.isRight(r) && r.right.secret.toString('utf8')).toBe('ab'.repeat(32))
    writeFileSync(file, 'too-short-secret\n')
    const short = await sessionSecretOf({ SATANG_SESSION_SECRET_FILE: file }, join(dir, 'unused'))
    expect(short).toEqual(E.left(expect.stringMatching(/^SATANG_SESSION_SECRET_FILE: .* at least 32 characters/) as unknown))
    expect(JSON.stringify(short)).not.toContain('too-short-secret')
  })
})
