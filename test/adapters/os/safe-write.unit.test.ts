import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { ensureDirectory, writeFileNoFollow } from '../../../src/adapters/os/safe-write.ts'

/** The one safe writer of report files, on the real file system of a temporary folder. */

const PAST = new Date('2020-01-02T03:04:05.000Z')
const fresh = (): string => mkdtempSync(join(tmpdir(), 'satang-safe-write-'))
const victimIn = (dir: string): string => {
  const p = join(dir, 'victim.txt')
  writeFileSync(p, 'victim\n')
  utimesSync(p, PAST, PAST)
  return p
}
const expectUntouched = (p: string): void => {
  expect(readFileSync(p, 'utf8')).toBe('victim\n')
  expect(statSync(p).mtimeMs).toBe(PAST.getTime())
}

describe('writeFileNoFollow', () => {
  it('writes a new file and replaces a regular one, leaving no temporary file', async () => {
    const dir = fresh()
    const file = join(dir, 'a.txt')
    expect(await writeFileNoFollow(file, 'one')).toEqual(E.right(undefined))
    expect(await writeFileNoFollow(file, 'two')).toEqual(E.right(undefined))
    expect(readFileSync(file, 'utf8')).toBe('two')
    expect(readdirSync(dir)).toEqual(['a.txt'])
  })

  it('refuses a link at the name, a dangling link, and a linked folder, naming each; targets untouched', async () => {
    const dir = fresh()
    const victim = victimIn(dir)
    const link = join(dir, 'link.txt')
    symlinkSync(victim, link)
    expect(await writeFileNoFollow(link, 'x')).toEqual(E.left({ _tag: 'WriteRefused', path: link, rule: expect.stringMatching(/^is a symbolic link/) }))
    expectUntouched(victim)
    const dangling = join(dir, 'dangling.txt')
    symlinkSync(join(dir, 'would-be-created.txt'), dangling)
    expect(E.isLeft(await writeFileNoFollow(dangling, 'x'))).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(['dangling.txt', 'link.txt', 'victim.txt'])
    const real = join(dir, 'real')
    mkdirSync(real)
    const linkedFolder = join(dir, 'linked')
    symlinkSync(real, linkedFolder)
    expect(await writeFileNoFollow(join(linkedFolder, 'a.txt'), 'x')).toEqual(E.left({ _tag: 'WriteRefused', path: linkedFolder, rule: expect.stringMatching(/^is a symbolic link/) }))
    expect(readdirSync(real)).toEqual([])
    expect(E.isLeft(await ensureDirectory(linkedFolder))).toBe(true)
  })

  it('refuses a folder at the name and a missing folder', async () => {
    const dir = fresh()
    mkdirSync(join(dir, 'sub'))
    expect(await writeFileNoFollow(join(dir, 'sub'), 'x')).toEqual(E.left({ _tag: 'WriteRefused', path: join(dir, 'sub'), rule: 'is not a regular file' }))
    expect(await writeFileNoFollow(join(dir, 'none', 'a.txt'), 'x')).toEqual(E.left({ _tag: 'WriteRefused', path: join(dir, 'none'), rule: 'the folder does not exist' }))
  })
})
