import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import { formatBytes, readFileBounded, readStreamBounded, sha256OfFile, tooLargeText } from '../../../src/adapters/os/bounded-read.ts'

const dir = mkdtempSync(join(tmpdir(), 'satang-bounded-read-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const file = (name: string, data: Buffer | string): string => {
  const p = join(dir, name)
  writeFileSync(p, data)
  return p
}

describe('reading a file within a bound', () => {
  it('a file of exactly the limit is read whole; one byte more is refused with its size', async () => {
    const exact = file('exact', Buffer.alloc(1000, 7))
    const read = await readFileBounded(exact, 1000)
    expect(E.isRight(read) && read.right.equals(Buffer.alloc(1000, 7))).toBe(true)
    const over = file('over', Buffer.alloc(1001, 7))
    expect(await readFileBounded(over, 1000)).toEqual(E.left({ _tag: 'TooLarge', maxBytes: 1000, bytes: 1001 }))
  })

  it('a stream (no size known ahead) is cut off past the limit, and read whole within it', async () => {
    const chunks = (n: number) => Readable.from(Array.from({ length: n }, () => Buffer.alloc(100, 1)))
    expect(await readStreamBounded(chunks(11), 1000)).toEqual(E.left({ _tag: 'TooLarge', maxBytes: 1000, bytes: null }))
    const within = await readStreamBounded(chunks(10), 1000)
    expect(E.isRight(within) && within.right.length).toBe(1000)
  })

  it('with noFollow, a symbolic link at the name is not read through', async () => {
    const target = file('target', 'secret')
    const link = join(dir, 'link')
    symlinkSync(target, link)
    await expect(readFileBounded(link, 100, { noFollow: true })).rejects.toMatchObject({ code: 'ELOOP' })
    await expect(sha256OfFile(link, { noFollow: true })).rejects.toMatchObject({ code: 'ELOOP' })
    expect(E.isRight(await readFileBounded(link, 100))).toBe(true)
  })

  it('the SHA-256 of a file read in chunks is that of its bytes, across chunk edges', async () => {
    const data = Buffer.from(Array.from({ length: 3 * 1024 * 1024 + 17 }, (_, i) => (i * 31) % 251))
    const p = file('chunks', data)
    expect(await sha256OfFile(p)).toEqual({ sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length })
    expect(await sha256OfFile(file('empty', ''))).toEqual({ sha256: createHash('sha256').digest('hex'), bytes: 0 })
  })

  it('says sizes as people read them', () => {
    expect([formatBytes(16 * 1024 * 1024), formatBytes(64 * 1024), formatBytes(700 * 1024 * 1024 + 1), formatBytes(67_000), formatBytes(300)]).toEqual(['16 MiB', '64 KiB', '700.0 MiB', '65.4 KiB', '300 bytes'])
    expect(tooLargeText({ _tag: 'TooLarge', maxBytes: 16 * 1024 * 1024, bytes: 17 * 1024 * 1024 })).toBe('is 17 MiB, more than the 16 MiB satang reads of it')
    expect(tooLargeText({ _tag: 'TooLarge', maxBytes: 1024, bytes: null })).toBe('is larger than the 1 KiB satang reads of it')
  })
})
