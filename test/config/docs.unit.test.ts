import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isLintProbe } from '../support/lint-probe.ts'

/*
 * The repository stands alone: a clone has no sibling folder of the design team, so nothing a user
 * reads or runs may point there, and every relative link of the documentation must land on a file (and
 * heading) of this repository.
 */

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)))

// Written as a pattern so that this file does not mention the paths it forbids.
const OUTSIDE_REFERENCE = /(?:\.\.|\/work)\/shared/

const filesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !isLintProbe(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))

/** `file:line: text` for every line of `text` that reaches outside the repository. */
const outsideReferences = (file: string, text: string): string[] =>
  text.split('\n').flatMap((line, i) => (OUTSIDE_REFERENCE.test(line) ? [`${file}:${String(i + 1)}: ${line.trim()}`] : []))

// Code is not markdown: links and headings inside fences or code spans do not count.
const withoutFences = (markdown: string): string => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
const withoutCode = (markdown: string): string => withoutFences(markdown).replace(/(`+)[\s\S]*?\1/g, '')

/** GitHub's heading anchor: lower case, punctuation removed, each space a hyphen. */
const slugOf = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-')

/** The anchors of a markdown text: its headings (with GitHub's -1, -2 for repeats) and explicit ids. */
const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, heading = ''] of withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = slugOf(heading)
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${String(n)}`)
  }
  for (const [, id = ''] of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id)
  return anchors
}

/** Targets of inline links and images, `[text](target "title")`, and of reference definitions, `[id]: target`. */
const linkTargetsOf = (markdown: string): string[] => {
  const text = withoutCode(markdown)
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '')
  const definitions = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] ?? '')
  return [...inline, ...definitions]
}

const isExternal = (target: string): boolean => /^[a-z][a-z\d+.-]*:/i.test(target) || target.startsWith('//')

/**
 * Why each relative link of `file` (a repository path) is broken: the target is outside the
 * repository, does not exist, or names a heading the target markdown does not have.
 */
const brokenLinks = (file: string, markdown: string, root: string = ROOT): string[] =>
  linkTargetsOf(markdown)
    .filter((target) => !isExternal(target))
    .flatMap((target) => {
      if (target === '') return [`${file}: an empty link target`]
      const hash = target.indexOf('#')
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash))
      const fragment = hash < 0 ? '' : decodeURIComponent(target.slice(hash + 1))
      if (pathPart === '') {
        // A link to a heading of the same file.
        return anchorsOf(markdown).has(fragment) ? [] : [`${file}: ${target}: ${file} has no heading #${fragment}`]
      }
      const absolute = resolve(root, dirname(file), pathPart)
      const inside = relative(root, absolute)
      if (inside === '..' || inside.startsWith(`..${sep}`)) return [`${file}: ${target} points outside the repository`]
      if (!existsSync(absolute)) return [`${file}: ${target} points to ${inside}, which does not exist`]
      if (fragment === '' || !absolute.endsWith('.md') || !statSync(absolute).isFile()) return []
      return anchorsOf(readFileSync(absolute, 'utf8')).has(fragment) ? [] : [`${file}: ${target}: ${inside} has no heading #${fragment}`]
    })

const markdownFiles = (): string[] => ['README.md', ...filesUnder('docs').filter((f) => f.endsWith('.md'))]
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8')

describe('the repository stands alone', () => {
  it('README.md, docs/ and test/ never point at the design team folder beside the repository', () => {
    const files = ['README.md', ...filesUnder('docs'), ...filesUnder('test')]
    expect(files).toContain(join('docs', 'gateway-protocol.md'))
    expect(files).toContain(join('test', 'fixtures', 'signing.json'))
    expect(files.flatMap((file) => outsideReferences(file, read(file)))).toEqual([])
  })

  it('every relative link of README.md and docs/*.md lands on a file, and on a heading, of the repository', () => {
    const files = markdownFiles()
    // The links this check exists for: the protocol reference and the signing vectors.
    const readmeTargets = linkTargetsOf(read('README.md'))
    expect(readmeTargets).toContain('docs/gateway-protocol.md')
    expect(readmeTargets).toContain('test/fixtures/signing.json')
    expect(files.flatMap((file) => brokenLinks(file, read(file)))).toEqual([])
  })
})

/** The files whose comments and messages name documentation sections. */
const CODE_DIRS = ['src', 'test', 'bench', 'scripts', 'bin']
const codeFiles = (): string[] => [
  ...CODE_DIRS.flatMap((dir) => filesUnder(dir)).filter((f) => /\.(?:[cm]?[jt]s|sh)$/.test(f)),
  ...readdirSync(ROOT).filter((f) => f === 'Dockerfile' || /^docker-compose.*\.ya?ml$/.test(f)),
]

/** The heading texts of a markdown file, code spans unwrapped (`satang audit` for `` `satang audit` ``). */
const headingsOf = (markdown: string): string[] => [...withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)].map((m) => (m[1] ?? '').replace(/`/g, ''))

/**
 * Why each reference of `text` to a documentation section does not resolve: `README "Name"` or
 * `docs/page.md "Name"` (a comment may wrap between the two) must name the start of a heading of that
 * file, and `README.md#anchor` or `docs/page.md#anchor` an anchor of it.
 */
const brokenReferences = (file: string, text: string, readDoc: (path: string) => string | undefined = (p) => (existsSync(join(ROOT, p)) ? read(p) : undefined)): string[] => {
  const named = [...text.matchAll(/\b(README|docs\/[\w-]+\.md)(?:\.md)?(?:'s)?,?(?:\s|\*|\/\/|#)*"([^"\n]+)"/g)].map((m) => ({ doc: m[1] === 'README' ? 'README.md' : (m[1] ?? ''), name: m[2] ?? '', kind: 'name' as const }))
  const anchored = [...text.matchAll(/\b(README\.md|docs\/[\w-]+\.md)#([\w-]+)/g)].map((m) => ({ doc: m[1] ?? '', name: m[2] ?? '', kind: 'anchor' as const }))
  return [...named, ...anchored].flatMap(({ doc, name, kind }) => {
    const markdown = readDoc(doc)
    if (markdown === undefined) return [`${file}: ${doc} does not exist`]
    if (kind === 'anchor') return anchorsOf(markdown).has(name) ? [] : [`${file}: ${doc}#${name}: no such heading`]
    const wanted = name.toLowerCase()
    return headingsOf(markdown).some((h) => h.toLowerCase().startsWith(wanted)) ? [] : [`${file}: ${doc} "${name}": no heading starts so`]
  })
}

describe('the code points at documentation that exists', () => {
  it('every README or docs/ section named in src/, test/, bench/, scripts/, bin/ and the Docker files is a heading of that page', () => {
    // This file's own examples aside.
    const files = codeFiles().filter((f) => f !== join('test', 'config', 'docs.unit.test.ts'))
    const texts = files.map((file) => ({ file, text: read(file) }))
    // The references this check exists for.
    expect(texts.some((t) => t.text.includes('docs/operations.md "Least privilege"'))).toBe(true)
    expect(texts.find((t) => t.file === join('bin', 'satang.js'))?.text).toContain('README "Requirements"')
    expect(texts.flatMap((t) => brokenReferences(t.file, t.text))).toEqual([])
  })

  it('the reference check finds a missing page, section and anchor', () => {
    const doc = (p: string): string | undefined => (p === 'docs/a.md' ? '# A\n## `satang audit`\n## Tamper evidence\n' : undefined)
    const code = [
      '// docs/a.md "Tamper evidence" and docs/a.md "satang audit" and docs/a.md#tamper-evidence',
      ' * see docs/a.md',
      ' * "Tamper" (wrapped)',
      "msg('docs/a.md \"Nowhere\"', 'docs/b.md \"X\"', 'docs/a.md#nowhere')",
    ].join('\n')
    expect(brokenReferences('x.ts', code, doc)).toEqual(['x.ts: docs/a.md "Nowhere": no heading starts so', 'x.ts: docs/b.md does not exist', 'x.ts: docs/a.md#nowhere: no such heading'])
  })
})

describe('the checks themselves', () => {
  const sibling = ['..', 'shared', 'spec', 'x.md'].join('/')

  it('find a mention of the sibling folder, relative or absolute, with its line', () => {
    expect(outsideReferences('a.md', `one\nsee ${sibling}`)).toEqual([`a.md:2: see ${sibling}`])
    expect(outsideReferences('a.ts', `const p = '/work' + '/shared'`)).toEqual([])
    expect(outsideReferences('a.ts', `const p = '${['', 'work', 'shared', 'v.json'].join('/')}'`)).toHaveLength(1)
  })

  it('report a missing file, a link leaving the repository and a missing heading; accept good and external links', () => {
    const md = [
      '# Title',
      '## Callbacks (`/callbacks`)',
      '```sh',
      '# not a heading [nor](missing-in-fence.md)',
      '```',
      '[ok](README.md) [ok](#title) [ok](#callbacks-callbacks) [ok](docs/gateway-protocol.md#9-signing-satang-canonical-v1)',
      '[web](https://example.com/x.md) `[code](missing-in-code.md)`',
      '[gone](docs/missing.md) [out](../elsewhere.md) [bad](#not-a-heading) [bad](README.md#no-such-heading)',
      '[ref]: test/fixtures/absent.json',
    ].join('\n')
    expect(brokenLinks('NOTES.md', md)).toEqual([
      'NOTES.md: docs/missing.md points to docs/missing.md, which does not exist',
      'NOTES.md: ../elsewhere.md points outside the repository',
      'NOTES.md: #not-a-heading: NOTES.md has no heading #not-a-heading',
      'NOTES.md: README.md#no-such-heading: README.md has no heading #no-such-heading',
      'NOTES.md: test/fixtures/absent.json points to test/fixtures/absent.json, which does not exist',
    ])
  })
})
