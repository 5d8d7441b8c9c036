import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli.ts'
import { settingDocs } from '../../src/config.ts'
import { DOMAIN_EVENT_TYPES, schemaVersionOf } from '../../src/domain/events/registry.ts'
import { ROLES } from '../../src/roles/role.ts'

/*
 * The documentation (README.md and docs/*.md) and the code agree: every `satang …` command and flag it
 * shows is one the CLI has, every SATANG_* variable it names is one satang knows, and every command,
 * flag and setting that exists is documented somewhere. docs/kafka.md lists every event type with its
 * versions, as the registry has them.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8')
const DOC_FILES: ReadonlyArray<string> = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
]
const docs: ReadonlyArray<{ readonly file: string; readonly text: string }> = DOC_FILES.map((file) => ({ file, text: read(file) }))

/** The text of code blocks and inline code spans: where commands are shown. */
const codeOf = (markdown: string): ReadonlyArray<string> => [
  ...[...markdown.matchAll(/^(```|~~~)[^\n]*\n([\s\S]*?)^\1[^\n]*$/gm)].map((m) => m[2] ?? ''),
  ...[...markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? ''),
]

/**
 * The words after `satang` in code, where it is run: at the start of a line or code span, after `npx`,
 * `$` or `docker compose exec SERVICE`, and `satang:VERSION` (the image); up to a pipe, `;`, `&`, `#`
 * or the line's end. (Elsewhere in code `satang` is a word of a message or a comment.)
 */
const invocationsIn = (markdown: string): ReadonlyArray<string> =>
  codeOf(markdown).flatMap((code) =>
    [...code.matchAll(/(?:(?:^[ \t]*(?:\$[ \t]+)?|npx[ \t]+|exec[ \t]+[\w-]+[ \t]+)satang|(?:^|[\s(=])satang:[\w.-]+) ((?:-|[a-z])[^\n|;&#`]*)/gm)].map((m) => (m[1] ?? '').trim()),
  )

const program: Command = await buildProgram(() => undefined)
const commandNamed = (parent: Command, name: string): Command | undefined => parent.commands.find((c) => c.name() === name)
const longOptionsOf = (cmd: Command): ReadonlyArray<string> => cmd.options.flatMap((o) => (o.long === undefined ? [] : [o.long]))
const flagsOf = (cmd: Command): ReadonlyArray<string> => [...cmd.options.flatMap((o) => [o.long, o.short]).filter((f): f is string => f !== undefined), '--help', '-h']

/** Every command and subcommand by its path (`report ledger`), with the command object. */
const commandPaths = (parent: Command = program, prefix = ''): ReadonlyArray<{ readonly path: string; readonly command: Command }> =>
  parent.commands.flatMap((c) => {
    const path = `${prefix}${c.name()}`
    return [{ path, command: c }, ...commandPaths(c, `${path} `)]
  })

/** Why `line` (the words after `satang`) is not a command the CLI has, or undefined. */
const problemOf = (line: string): string | undefined => {
  const words = line
    .split(/\s+/)
    .map((w) => w.replace(/^[[(]+|[\]),.:]+$/g, ''))
    .filter((w) => w !== '' && w !== '\\')
  const first = words[0]
  if (first === undefined) return 'no command'
  if (first.startsWith('-')) return flagsOf(program).includes(first) || first === '--version' ? undefined : `satang has no option ${first}`
  const cmd = commandNamed(program, first)
  if (cmd === undefined) return `satang has no command ${first}`
  const sub = words[1] !== undefined ? commandNamed(cmd, words[1]) : undefined
  const target = sub ?? cmd
  for (const [i, w] of words.entries()) {
    if (!w.startsWith('-') || /^-+$/.test(w)) continue
    const flag = w.split('=')[0] ?? w
    if (!flagsOf(target).includes(flag)) return `satang ${sub === undefined ? first : `${first} ${sub.name()}`} has no option ${flag}`
    // A process role (`satang up --role api`); `satang users add --role` takes a console role.
    if (flag === '--role' && first !== 'users') {
      const role = (words[i + 1] ?? '').replace(/\\$/, '')
      if (role !== 'all' && !(ROLES as ReadonlyArray<string>).includes(role)) return `--role ${role} is not a role`
    }
  }
  return undefined
}

/** The sections of a markdown text: split at every heading outside code blocks. */
const sectionsOf = (markdown: string): ReadonlyArray<string> => {
  const out: string[][] = [[]]
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const marker = /^(```|~~~)/.exec(line)?.[1]
    if (fence === undefined && marker !== undefined) fence = marker
    else if (fence !== undefined && marker === fence) fence = undefined
    else if (fence === undefined && /^#{1,6} /.test(line)) out.push([])
    out[out.length - 1]?.push(line)
  }
  return out.map((lines) => lines.join('\n'))
}
const sections: ReadonlyArray<string> = docs.flatMap((d) => sectionsOf(d.text))
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Whether `flag` of the command at `path` is documented: named in a section that shows `satang <path>`. */
const documentedFlag = (path: string, flag: string): boolean => {
  const names = new RegExp(`satang ${escape(path)}(?![\\w-])`)
  const namesFlag = new RegExp(`${escape(flag)}(?![\\w-])`)
  return sections.some((s) => names.test(s) && namesFlag.test(s))
}

const SATANG_VARIABLE = /SATANG_[A-Z0-9_]*[A-Z0-9]_?/g
const settings: ReadonlyArray<string> = settingDocs().map((s) => s.name)
/** Variables of the test and bench tools, which read them themselves. */
const toolSources = (): string => ['test', 'bench'].flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))).join('\n')

/** Why a SATANG_ name in the docs is not a variable that exists, or undefined. */
const variableProblem = (name: string, tools: string): string | undefined => {
  if (name === 'SATANG_CONFIG' || settings.includes(name)) return undefined
  // `SATANG_RESOLVE_*`: a family of settings.
  if (name.endsWith('_')) return settings.some((s) => s.startsWith(name)) ? undefined : `no setting starts with ${name}`
  if (/^SATANG_(TEST|BENCH)_/.test(name)) return tools.includes(`'${name}'`) || tools.includes(`.${name}`) || tools.includes(`"${name}"`) ? undefined : `${name} is read by no test or bench tool`
  return `${name} is not a setting of src/config.ts`
}

describe('the docs and the command line agree', () => {
  const all = docs.flatMap((d) => invocationsIn(d.text).map((line) => ({ file: d.file, line })))

  it('the docs show satang commands (in README.md and docs/)', () => {
    expect(all.length).toBeGreaterThan(100)
    expect([...new Set(all.map((a) => a.file))]).toEqual(expect.arrayContaining(['README.md', 'docs/operations.md', 'docs/finance.md', 'docs/audit.md', 'docs/merchant-api.md', 'docs/kafka.md', 'docs/development.md']))
  })

  it('every satang command and flag the docs show is one the CLI has', () => {
    const wrong = all.flatMap(({ file, line }) => {
      const problem = problemOf(line)
      return problem === undefined ? [] : [`${file}: satang ${line}: ${problem}`]
    })
    expect(wrong).toEqual([])
  })

  it('every command and subcommand the CLI has is shown in the docs', () => {
    const shown = docs.map((d) => codeOf(d.text).join('\n')).join('\n')
    const missing = commandPaths().flatMap(({ path }) => (new RegExp(`satang ${escape(path)}(?![\\w-])`).test(shown) ? [] : [`satang ${path}`]))
    expect(missing).toEqual([])
  })

  it('every option of every command is documented beside the command', () => {
    const missing = commandPaths().flatMap(({ path, command }) => longOptionsOf(command).flatMap((flag) => (documentedFlag(path, flag) ? [] : [`satang ${path} ${flag}`])))
    expect(missing).toEqual([])
  })

  it('the checks can fail', () => {
    expect(problemOf('teleport --now')).toBe('satang has no command teleport')
    expect(problemOf('project --frobnicate')).toBe('satang project has no option --frobnicate')
    expect(problemOf('report ledger [--date D] [--as-of T] [--json \\')).toBeUndefined()
    expect(problemOf('report ledger --html x')).toBe('satang report ledger has no option --html')
    expect(problemOf('up --role balancer')).toBe('--role balancer is not a role')
    expect(documentedFlag('audit verify', '--against')).toBe(true)
    expect(documentedFlag('audit verify', '--teleport')).toBe(false)
    expect(sectionsOf('# A\n```sh\n# not a heading\n```\n## B\ntext')).toEqual(['', '# A\n```sh\n# not a heading\n```', '## B\ntext'])
    expect(invocationsIn('```sh\nnpx satang up --role api   # what satang runs as\n```\n`satang report ledger`, `database satang to x`')).toEqual(['up --role api', 'report ledger'])
  })
})

describe('the docs and the configuration agree', () => {
  const named = [...new Set(docs.flatMap((d) => [...d.text.matchAll(SATANG_VARIABLE)].map((m) => m[0])))]

  it('every SATANG_* variable the docs name is a setting of src/config.ts (or a family of them, or a variable of the test and bench tools)', () => {
    const tools = toolSources()
    expect(named.length).toBeGreaterThan(settings.length)
    expect(named.flatMap((name) => variableProblem(name, tools) ?? [])).toEqual([])
    expect(variableProblem('SATANG_TELEPORT', tools)).toBe('SATANG_TELEPORT is not a setting of src/config.ts')
    expect(variableProblem('SATANG_NOPE_', tools)).toBe('no setting starts with SATANG_NOPE_')
  })

  it('every setting, and SATANG_CONFIG, is documented', () => {
    // The OpenTelemetry variables satang reads (OTEL_*) are settings too.
    const otel = docs.flatMap((d) => [...d.text.matchAll(/OTEL_[A-Z0-9_]*[A-Z0-9]/g)].map((m) => m[0]))
    expect([...settings, 'SATANG_CONFIG'].filter((s) => !named.includes(s) && !otel.includes(s))).toEqual([])
  })
})

describe('docs/kafka.md', () => {
  it('lists every registered event type with each of its schema versions, in the registry order', () => {
    const kafka = read('docs/kafka.md')
    const rows = [...kafka.matchAll(/^\| `([A-Z]\w+)` \| (v\d+(?:, v\d+)*) \|/gm)].map((m) => `${m[1] ?? ''} ${m[2] ?? ''}`)
    const expected = DOMAIN_EVENT_TYPES.map((t) => `${t} ${Array.from({ length: schemaVersionOf(t) }, (_, i) => `v${String(i + 1)}`).join(', ')}`)
    expect(rows).toEqual(expected)
    expect(rows).toContain('CallbackQuarantined v1, v2')
    expect(rows).toContain('ConsoleSignInLockedOut v1, v2')
    expect(rows.filter((r) => r.startsWith('Reconciliation')).length).toBe(8)
  })

  it('every schema file of schemas/ is an event type and version the table lists', () => {
    const files = readdirSync(join(ROOT, 'schemas')).filter((f) => f !== 'headers.schema.json')
    const expected = DOMAIN_EVENT_TYPES.flatMap((t) => Array.from({ length: schemaVersionOf(t) }, (_, i) => `${t}.v${String(i + 1)}.schema.json`))
    expect(files.sort()).toEqual(expected.sort())
  })
})
