import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect } from 'vitest'

/**
 * Scratch folders for the tests that plant symbolic links where satang writes: `fresh()` gives a new
 * empty folder, `victimIn(dir)` (or `victim()`, in a folder of its own) a file a link can point at, with
 * an old mtime and mode 0644, and `expectUntouched(p)` checks that nothing wrote to it, changed its mode
 * or touched it. The folders go when the test file ends.
 */
export const linkScratch = (prefix: string, victimText = 'victim\n') => {
  const past = new Date('2020-01-02T03:04:05.000Z')
  const root = mkdtempSync(join(tmpdir(), `satang-${prefix}-`))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  let n = 0
  const fresh = (): string => {
    n += 1
    const dir = join(root, String(n))
    mkdirSync(dir)
    return dir
  }
  const victimIn = (dir: string): string => {
    const p = join(dir, 'victim.txt')
    writeFileSync(p, victimText)
    chmodSync(p, 0o644)
    utimesSync(p, past, past)
    return p
  }
  const expectUntouched = (p: string): void => {
    expect(readFileSync(p, 'utf8')).toBe(victimText)
    expect(statSync(p).mtimeMs).toBe(past.getTime())
    expect(statSync(p).mode & 0o777).toBe(0o644)
  }
  return { fresh, victimIn, victim: (): string => victimIn(fresh()), expectUntouched }
}
