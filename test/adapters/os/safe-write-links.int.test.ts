import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { appendFileNoFollow, createFileNoFollow, openAppendNoFollow, writeFileNoFollow } from '../../../src/adapters/os/safe-write.ts'
import { linkScratch } from '../../support/link-victims.ts'

/**
 * The writers of src/adapters/os/safe-write.ts that generated secrets, the anchor file and the sandbox
 * journal use, on the real file system: a link at the name (pointing at a file, or dangling), a linked
 * folder, a folder or a FIFO at the name are refused with the path and the rule, the target untouched.
 */

const { fresh, expectUntouched, victimIn } = linkScratch('safe-write-links')
const linkRule = expect.stringMatching(/^is a symbolic link: satang never writes through one/)

describe('createFileNoFollow (generated secrets: never overwritten, never through a link)', () => {
  it('creates the file whole with its mode, leaves an existing one as it is, and leaves no temporary file', async () => {
    const dir = fresh()
    const file = join(dir, 'secret')
    expect(await createFileNoFollow(file, 'one\n', 0o600)).toEqual(E.right('created'))
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(file).nlink).toBe(1)
    expect(await createFileNoFollow(file, 'two\n', 0o600)).toEqual(E.right('exists'))
    expect(readFileSync(file, 'utf8')).toBe('one\n')
    expect(readdirSync(dir)).toEqual(['secret'])
  })

  it('refuses a link at the name (to a file or dangling) and a linked folder, naming each; targets untouched, nothing created', async () => {
    const dir = fresh()
    const victim = victimIn(dir)
    const link = join(dir, 'secret')
    symlinkSync(victim, link)
    expect(await createFileNoFollow(link, 'x')).toEqual(E.left({ _tag: 'WriteRefused', path: link, rule: linkRule }))
    expectUntouched(victim)
    const dangling = join(dir, 'dangling')
    symlinkSync(join(dir, 'would-be-created'), dangling)
    expect(await createFileNoFollow(dangling, 'x')).toEqual(E.left({ _tag: 'WriteRefused', path: dangling, rule: linkRule }))
    const real = join(dir, 'real')
    mkdirSync(real)
    const linked = join(dir, 'linked')
    symlinkSync(real, linked)
    expect(await createFileNoFollow(join(linked, 'secret'), 'x')).toEqual(E.left({ _tag: 'WriteRefused', path: linked, rule: linkRule }))
    expect(readdirSync(real)).toEqual([])
    expect(readdirSync(dir).sort()).toEqual(['dangling', 'linked', 'real', 'secret', 'victim.txt'])
  })
})

describe('appendFileNoFollow / openAppendNoFollow (the anchor file, the sandbox journal)', () => {
  it('creates the file with its mode and appends to it', async () => {
    const dir = fresh()
    const file = join(dir, 'anchors.jsonl')
    expect(await appendFileNoFollow(file, 'a\n')).toEqual(E.right(undefined))
    expect(await appendFileNoFollow(file, 'b\n')).toEqual(E.right(undefined))
    expect(readFileSync(file, 'utf8')).toBe('a\nb\n')
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it('refuses a link at the name (to a file or dangling) and a linked folder; targets untouched, nothing created', async () => {
    const dir = fresh()
    const victim = victimIn(dir)
    const link = join(dir, 'anchors.jsonl')
    symlinkSync(victim, link)
    expect(await appendFileNoFollow(link, 'x\n')).toEqual(E.left({ _tag: 'WriteRefused', path: link, rule: linkRule }))
    expect(await openAppendNoFollow(link)).toEqual(E.left({ _tag: 'WriteRefused', path: link, rule: linkRule }))
    expectUntouched(victim)
    const dangling = join(dir, 'dangling.jsonl')
    symlinkSync(join(dir, 'would-be-created'), dangling)
    expect(await appendFileNoFollow(dangling, 'x\n')).toEqual(E.left({ _tag: 'WriteRefused', path: dangling, rule: linkRule }))
    const real = join(dir, 'real')
    mkdirSync(real)
    const linked = join(dir, 'linked')
    symlinkSync(real, linked)
    expect(await appendFileNoFollow(join(linked, 'anchors.jsonl'), 'x\n')).toEqual(E.left({ _tag: 'WriteRefused', path: linked, rule: linkRule }))
    expect(readdirSync(real)).toEqual([])
    expect(readdirSync(dir).sort()).toEqual(['anchors.jsonl', 'dangling.jsonl', 'linked', 'real', 'victim.txt'])
  })

  it('refuses what is not a regular file (a folder, a FIFO) without blocking on it', async () => {
    const dir = fresh()
    mkdirSync(join(dir, 'sub'))
    expect(await appendFileNoFollow(join(dir, 'sub'), 'x\n')).toEqual(E.left({ _tag: 'WriteRefused', path: join(dir, 'sub'), rule: 'is not a regular file' }))
    const fifo = join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    expect(await appendFileNoFollow(fifo, 'x\n')).toEqual(E.left({ _tag: 'WriteRefused', path: fifo, rule: 'is not a regular file' }))
  })
})

describe('writeFileNoFollow with options (the sandbox snapshot, public keys)', () => {
  it('takes { mode, syncFolder } as well as a bare mode, and still refuses a link', async () => {
    const dir = fresh()
    const file = join(dir, 'state.json')
    expect(await writeFileNoFollow(file, '{}\n', { mode: 0o600, syncFolder: true })).toEqual(E.right(undefined))
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(await writeFileNoFollow(join(dir, 'public.pem'), 'pem\n', 0o644)).toEqual(E.right(undefined))
    expect(readFileSync(join(dir, 'public.pem'), 'utf8')).toBe('pem\n')
    const victim = victimIn(dir)
    const link = join(dir, 'linked.json')
    symlinkSync(victim, link)
    expect(await writeFileNoFollow(link, 'x', { mode: 0o600, syncFolder: true })).toEqual(E.left({ _tag: 'WriteRefused', path: link, rule: linkRule }))
    expectUntouched(victim)
  })
})
