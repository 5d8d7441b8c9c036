import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isLintProbe } from '../support/lint-probe.ts'

/**
 * Every file satang writes is written without following a symbolic link (issue 22): through
 * src/adapters/os/safe-write.ts, or through a handle it opened with O_NOFOLLOW. This guard reads every
 * source file of src/ and refuses, outside safe-write.ts, a bare fs writer (writeFile, appendFile,
 * createWriteStream, copyFile, cp and their Sync forms; imported by name, through a namespace or
 * default import of fs, or through require) and an `open` whose flags write but do not say O_NOFOLLOW
 * or O_EXCL. Methods of a FileHandle (`handle.appendFile`) are not bare: the handle was opened checked.
 * A place that is safe for another reason goes in ALLOWED, with the reason.
 */

const SRC = join(import.meta.dirname, '..', '..', 'src')
const SAFE_WRITE = join('adapters', 'os', 'safe-write.ts')

/** `file: name` → why that bare writer is safe there. */
const ALLOWED: ReadonlyMap<string, string> = new Map([
  [
    `${join('adapters', 'os', 'instance-lock.ts')}: writeFile`,
    "the staged lock file is created with flag 'wx' (O_CREAT|O_EXCL: fails on anything at the name, a link included, never follows one) under a name with a fresh random token, then hard-linked into place (link never follows a link either)",
  ],
])

const WRITERS = ['writeFile', 'writeFileSync', 'appendFile', 'appendFileSync', 'createWriteStream', 'copyFile', 'copyFileSync', 'cp', 'cpSync']
const FS_MODULE = /^(node:)?fs(\/promises)?$/

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(join(dir, d.name)) : /\.(ts|js|mjs|cjs)$/.test(d.name) && !isLintProbe(d.name) ? [join(dir, d.name)] : []))

/** The text of the call's arguments from `open` at `start` (the index of its '('), parentheses balanced. */
const argumentsAt = (source: string, start: number): string => {
  let depth = 0
  for (let i = start; i < source.length; i++) {
    if (source[i] === '(') depth++
    else if (source[i] === ')' && --depth === 0) return source.slice(start + 1, i)
  }
  return source.slice(start + 1)
}

/** Flags that write: a string flag with w, a or +, or an O_ constant that writes. */
const writes = (args: string): boolean => /['"`](?:[^'"`]*[wa+][^'"`]*)['"`]/.test(args.split(',').slice(1).join(',')) || /\bO_(WRONLY|RDWR|APPEND|CREAT|TRUNC)\b/.test(args)
const noFollow = (args: string): boolean => /\bO_NOFOLLOW\b|\bO_EXCL\b|['"`][wa]x\+?['"`]/.test(args)

/** What in `source` writes a file in a way that may follow a link: `name (line N)` each. */
export const unsafeWrites = (source: string): ReadonlyArray<{ readonly name: string; readonly line: number }> => {
  const found: Array<{ name: string; line: number }> = []
  const lineOf = (index: number): number => source.slice(0, index).split('\n').length
  const openNames = new Set<string>()
  const namespaces = new Set<string>()
  for (const m of source.matchAll(/import\s+(type\s+)?([^'";]*?)\s+from\s+['"]([^'"]+)['"]/g)) {
    if (m[1] !== undefined || !FS_MODULE.test(m[3] ?? '')) continue
    const clause = m[2] ?? ''
    const star = /\*\s+as\s+(\w+)/.exec(clause)
    if (star?.[1] !== undefined) namespaces.add(star[1])
    const def = /^(\w+)\s*(,|$)/.exec(clause.trim())
    if (def?.[1] !== undefined) namespaces.add(def[1])
    for (const spec of /\{([^}]*)\}/.exec(clause)?.[1]?.split(',') ?? []) {
      const [imported, local] = spec.replace(/^\s*type\s+/, '').trim().split(/\s+as\s+/)
      if (imported === undefined || imported === '' || spec.trim().startsWith('type ')) continue
      if (WRITERS.includes(imported)) found.push({ name: imported, line: lineOf(m.index) })
      if (imported === 'open' || imported === 'openSync') openNames.add(local ?? imported)
      if (imported === 'promises') namespaces.add(local ?? imported)
    }
  }
  for (const m of source.matchAll(/(?:const|let|var)\s+(\w+)\s*=\s*(?:await\s+import|require)\(\s*['"]([^'"]+)['"]\s*\)/g)) if (FS_MODULE.test(m[2] ?? '') && m[1] !== undefined) namespaces.add(m[1])
  for (const m of source.matchAll(/(?:const|let|var)\s+\{([^}]*)\}\s*=\s*(?:await\s+import|require)\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    if (!FS_MODULE.test(m[2] ?? '')) continue
    for (const spec of (m[1] ?? '').split(',')) {
      const [imported, local] = spec.trim().split(/\s*:\s*/)
      if (imported !== undefined && WRITERS.includes(imported)) found.push({ name: imported, line: lineOf(m.index) })
      if (imported === 'open' || imported === 'openSync') openNames.add(local ?? imported)
    }
  }
  for (const ns of namespaces) {
    for (const m of source.matchAll(new RegExp(`\\b${ns}\\.(?:promises\\.)?(\\w+)\\s*\\(`, 'g'))) {
      const name = m[1] ?? ''
      if (WRITERS.includes(name)) found.push({ name, line: lineOf(m.index) })
      if ((name === 'open' || name === 'openSync') && writes(argumentsAt(source, m.index + m[0].length - 1)) && !noFollow(argumentsAt(source, m.index + m[0].length - 1))) found.push({ name, line: lineOf(m.index) })
    }
  }
  for (const name of openNames) {
    for (const m of source.matchAll(new RegExp(`(?<![\\w.])${name}\\s*\\(`, 'g'))) {
      const args = argumentsAt(source, m.index + m[0].length - 1)
      if (writes(args) && !noFollow(args)) found.push({ name: 'open', line: lineOf(m.index) })
    }
  }
  return found
}

describe('no file is written through a symbolic link', () => {
  it('finds bare writers and following opens where they are (the check itself can fail)', () => {
    expect(unsafeWrites("import { readFile, writeFile } from 'node:fs/promises'\nawait writeFile(p, 'x')")).toEqual([{ name: 'writeFile', line: 1 }])
    expect(unsafeWrites("import { appendFile as add } from 'fs/promises'")).toEqual([{ name: 'appendFile', line: 1 }])
    expect(unsafeWrites("import { createWriteStream, writeFileSync } from 'node:fs'")).toHaveLength(2)
    expect(unsafeWrites("import * as fs from 'node:fs'\nfs.appendFileSync(p, 'x')\nfs.promises.copyFile(a, b)")).toEqual([
      { name: 'appendFileSync', line: 2 },
      { name: 'copyFile', line: 3 },
    ])
    expect(unsafeWrites("import fs from 'fs'\nfs.createWriteStream(p)")).toEqual([{ name: 'createWriteStream', line: 2 }])
    expect(unsafeWrites("const fs = require('fs')\nfs.writeFileSync(p, 'x')")).toEqual([{ name: 'writeFileSync', line: 2 }])
    expect(unsafeWrites("const { writeFile } = await import('node:fs/promises')")).toEqual([{ name: 'writeFile', line: 1 }])
    expect(unsafeWrites("import { open } from 'node:fs/promises'\nawait open(join(dir, 'x'), 'a', 0o600)")).toEqual([{ name: 'open', line: 2 }])
    expect(unsafeWrites("import { constants } from 'node:fs'\nimport { open } from 'node:fs/promises'\nopen(p, constants.O_WRONLY | constants.O_CREAT)")).toEqual([{ name: 'open', line: 3 }])
  })

  it('lets reads, checked opens and FileHandle methods pass', () => {
    expect(unsafeWrites("import { open, readFile } from 'node:fs/promises'\nopen(dirname(p), 'r')\nopen(p, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW)\nopen(p, 'wx')")).toEqual([])
    expect(unsafeWrites("import { open, type FileHandle } from 'node:fs/promises'\nawait handle.writeFile(x)\nawait journal.appendFile(line)")).toEqual([])
    expect(unsafeWrites("import { writeFileNoFollow } from '../adapters/os/safe-write.ts'\nawait writeFileNoFollow(p, 'x')")).toEqual([])
  })

  it('src/ writes files only through safe-write.ts or O_NOFOLLOW handles (ALLOWED: each with its reason)', () => {
    const found = filesUnder(SRC)
      .filter((f) => relative(SRC, f) !== SAFE_WRITE)
      .flatMap((f) => unsafeWrites(readFileSync(f, 'utf8')).map((u) => ({ key: `${relative(SRC, f)}: ${u.name}`, at: `${relative(SRC, f)}:${String(u.line)} ${u.name}` })))
    expect(found.filter((u) => !ALLOWED.has(u.key)).map((u) => u.at)).toEqual([])
    // An entry that no longer matches anything is stale: remove it, so the list says only what is true.
    const used = new Set(found.map((u) => u.key))
    expect([...ALLOWED.keys()].filter((k) => !used.has(k))).toEqual([])
  })
})
