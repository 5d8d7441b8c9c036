import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The dependency rule is enforced by `npm run lint` (docs/architecture.md "Layers and folders"): dependency-cruiser for the
 * imports between folders, ESLint for what the domain may do. Small modules that each break one rule
 * are written into src/; the checker the lint script runs goes over them all at once (one process per
 * checker: each start costs seconds), and each case expects the answer to name its module with its
 * rule. The modules are removed afterwards. Main itself passes.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = (name: string): string => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url))

type Run = { readonly code: number | null; readonly output: string }

const run = (bin: string, args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(BIN(bin), args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })

const depcruise = (...paths: ReadonlyArray<string>): Promise<Run> => run('depcruise', ['--config', '.dependency-cruiser.cjs', '--output-type', 'err', ...paths])
const eslint = (...paths: ReadonlyArray<string>): Promise<Run> => run('eslint', ['--no-warn-ignored', ...paths])

const written: string[] = []
/** Writes `text` to `src/<dir>/lint-probe-<random>.ts`; returns its path relative to the repository. */
const probe = (dir: string, text: string, name = `lint-probe-${randomUUID().slice(0, 8)}`): string => {
  const path = `src/${dir}/${name}.ts`
  writeFileSync(`${ROOT}${path}`, text)
  written.push(path)
  return path
}
const removeProbes = (): void => {
  for (const p of written.splice(0)) rmSync(`${ROOT}${p}`, { force: true })
}

/** The lines of ESLint's answer under `path`'s heading (its messages), up to the next blank line. */
const eslintMessagesOf = (output: string, path: string): string => {
  const lines = output.split('\n')
  const at = lines.findIndex((l) => l.trim() === `${ROOT}${path}`)
  if (at < 0) return ''
  const end = lines.findIndex((l, i) => i > at && l.trim() === '')
  return lines.slice(at + 1, end < 0 ? undefined : end).join('\n')
}

const IMPORT_CASES = [
  ['application', "import { makeHttpServer } from '../adapters/http/server.ts'\nexport const x = makeHttpServer\n", 'application-imports-domain-only'],
  ['application', "import { Pool } from 'pg'\nexport const x = Pool\n", 'application-no-infrastructure'],
  ['domain', "import { startProjector } from '../projections/projector.ts'\nexport const x = startProjector\n", 'domain-is-pure'],
  ['domain', "import { readFileSync } from 'node:fs'\nexport const x = readFileSync\n", 'domain-no-io'],
  ['projections', "import { makeGatewayClient } from '../adapters/gateway/client.ts'\nexport const x = makeGatewayClient\n", 'projections-and-jobs-below-adapters'],
  ['adapters', "import { startSatang } from '../main.ts'\nexport const x = startSatang\n", 'adapters-below-composition'],
] as const

const DOMAIN_CASES = [
  ['export const now = (): number => Date.now()\n', 'may not read the clock'],
  ['export const at = (): Date => new Date()\n', 'may not read the clock'],
  ['export const id = (): number => Math.random()\n', 'may not use randomness'],
  ["import { randomUUID } from 'node:crypto'\nexport const id = (): string => randomUUID()\n", 'may not use randomness'],
] as const

describe('npm run lint: the dependency rule', () => {
  it('passes on the code as it is', async () => {
    const r = await depcruise('src')
    expect(r.output).toContain('no dependency violations found')
    expect(r.code).toBe(0)
  })

  describe('dependency-cruiser over modules that break its rules, all in one run', () => {
    const paths: string[] = []
    let loop = { a: '', b: '' }
    let answer: Run = { code: null, output: '' }
    beforeAll(async () => {
      for (const [dir, text] of IMPORT_CASES) paths.push(probe(dir, text))
      const a = `lint-probe-a-${randomUUID().slice(0, 8)}`
      const b = `lint-probe-b-${randomUUID().slice(0, 8)}`
      loop = { a: probe('application', `import { b } from './${b}.ts'\nexport const a = (): number => b() + 1\n`, a), b: probe('application', `import { a } from './${a}.ts'\nexport const b = (): number => a() - 1\n`, b) }
      answer = await depcruise(...paths, loop.a)
    })
    afterAll(removeProbes)

    it.each(IMPORT_CASES.map(([dir, , rule], i) => [dir, rule, i] as const))('a module in src/%s that breaks %s fails, named with the rule', (_dir, rule, i) => {
      expect(answer.code).not.toBe(0)
      const lines = answer.output.split('\n')
      // "error <rule>: <module> → <what it imports>": this module, with its rule.
      expect(lines.filter((l) => l.includes(`${rule}:`) && l.includes(`${paths[i] ?? '?'} →`))).toHaveLength(1)
    })

    it('an import loop between two modules fails', () => {
      expect(answer.code).not.toBe(0)
      expect(answer.output.split('\n').some((l) => l.includes('no-circular') && l.includes(loop.a))).toBe(true)
    })
  })

  describe('ESLint over domain modules that read the clock or randomness, all in one run', () => {
    const paths: string[] = []
    let answer: Run = { code: null, output: '' }
    beforeAll(async () => {
      for (const [text] of DOMAIN_CASES) paths.push(probe('domain', text))
      answer = await eslint(...paths)
    })
    afterAll(removeProbes)

    it.each(DOMAIN_CASES.map(([text, message], i) => [text.trim().split('\n').at(-1) ?? '', message, i] as const))('`%s` fails: %s', (_text, message, i) => {
      expect(answer.code).not.toBe(0)
      expect(eslintMessagesOf(answer.output, paths[i] ?? '?')).toContain(message)
    })
  })
})
