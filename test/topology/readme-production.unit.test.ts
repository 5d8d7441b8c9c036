import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import pkg from '../../package.json' with { type: 'json' }
import { buildProgram } from '../../src/cli.ts'
import { ROLES } from '../../src/roles/role.ts'
import { ROOT, composeConfig, servicesOf } from './compose-file.ts'

/**
 * docs/operations.md "Running in production / scaling" (issue 18): every `satang …` command it shows is one the CLI
 * has, with options that command takes; every service its table names is in docker-compose.yml.
 */

const readme = readFileSync(new URL('docs/operations.md', ROOT), 'utf8')
const start = readme.indexOf('\n## Running in production / scaling\n')
const section = start < 0 ? '' : readme.slice(start + 1, readme.indexOf('\n## ', start + 1))

/**
 * `satang …` invocations (and `satang:VERSION …`, the image run with its entry point) in the section's
 * code blocks and inline code, up to a pipe, `;`, `&`, `#`, a backtick or the line's end.
 */
const invocations = (): ReadonlyArray<string> => {
  const blocks = [...section.matchAll(/^```(?:sh|bash)?\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '')
  const inline = [...section.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? '')
  const out: string[] = []
  for (const text of [...blocks, ...inline]) {
    for (const m of text.matchAll(/(?:^|[\s(=])satang(?::[\w.-]+)? ((?:-|[a-z])[^\n|;&#`]*)/gm)) out.push((m[1] ?? '').trim())
  }
  return out
}

const program: Command = await buildProgram(() => undefined)
const commandNamed = (parent: Command, name: string): Command | undefined => parent.commands.find((c) => c.name() === name)
const optionsOf = (cmd: Command): ReadonlyArray<string> => [...cmd.options.flatMap((o) => [o.long, o.short]).filter((f): f is string => f !== undefined), '--help', '-h']

/** Why `line` (the words after `satang`) is not a command the CLI has, or undefined. */
const problemOf = (line: string): string | undefined => {
  const words = line.split(/\s+/).filter((w) => w !== '' && w !== '\\')
  const first = words[0]
  if (first === undefined) return 'no command'
  if (first.startsWith('-')) return optionsOf(program).includes(first) || first === '--version' ? undefined : `satang has no option ${first}`
  const cmd = commandNamed(program, first)
  if (cmd === undefined) return `satang has no command ${first}`
  const sub = words[1] !== undefined ? commandNamed(cmd, words[1]) : undefined
  const target = sub ?? cmd
  for (const [i, w] of words.entries()) {
    if (!w.startsWith('-')) continue
    const flag = w.split('=')[0] ?? w
    if (!optionsOf(target).includes(flag)) return `satang ${target === cmd ? first : `${first} ${words[1] ?? ''}`} has no option ${flag}`
    if (flag === '--role') {
      const role = words[i + 1] ?? ''
      if (role !== 'all' && !(ROLES as ReadonlyArray<string>).includes(role)) return `--role ${role} is not a role`
    }
  }
  return undefined
}

describe('docs/operations.md: Running in production / scaling', () => {
  it('exists and shows satang commands', () => {
    expect(section).not.toBe('')
    expect(invocations().length).toBeGreaterThan(20)
  })

  it('shows only commands (and options) the CLI has', () => {
    const wrong = invocations().flatMap((line) => {
      const problem = problemOf(line)
      return problem === undefined ? [] : [`satang ${line}: ${problem}`]
    })
    expect(wrong).toEqual([])
  })

  it('the command check can fail', () => {
    expect(problemOf('teleport --now')).toBe('satang has no command teleport')
    expect(problemOf('project --frobnicate')).toBe('satang project has no option --frobnicate')
    expect(problemOf('up --role balancer')).toBe('--role balancer is not a role')
    expect(problemOf('audit verify --against heads.json')).toBeUndefined()
  })

  it('names only services docker-compose.yml has, and every service it has', () => {
    const table = /<!-- compose-services:start[^>]*-->\n([\s\S]*?)<!-- compose-services:end -->/.exec(section)?.[1] ?? ''
    const named = [...table.matchAll(/^\| `([a-z0-9_-]+)` \| `([^`]+)` \|/gm)].map((m) => ({ service: m[1] ?? '', image: m[2] ?? '' }))
    const services = servicesOf(composeConfig(['docker-compose.yml']))
    expect(named.map((n) => n.service).sort()).toEqual(Object.keys(services).sort())
    for (const n of named) expect(services[n.service]?.image, n.service).toBe(n.image)
    expect(named.find((n) => n.service === 'api')?.image).toBe(`satang:${pkg.version}`)
  })

  it('names the npm scripts it runs', () => {
    for (const m of section.matchAll(/npm run ([a-z:]+)/g)) expect(Object.keys(pkg.scripts), m[1]).toContain(m[1])
  })
})
