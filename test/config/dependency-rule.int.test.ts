import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

/**
 * The dependency rule is enforced by `npm run lint` (docs/architecture.md "Layers and folders"): dependency-cruiser for the
 * imports between folders, ESLint for what the domain may do. Each case writes a small module that
 * breaks one rule into src/, runs the checker the lint script runs, and expects it to fail naming the
 * rule; the module is removed afterwards. Main itself passes.
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

afterEach(() => {
  for (const p of written.splice(0)) rmSync(`${ROOT}${p}`, { force: true })
})

describe('npm run lint: the dependency rule', () => {
  it('passes on the code as it is', async () => {
    const r = await depcruise('src')
    expect(r.output).toContain('no dependency violations found')
    expect(r.code).toBe(0)
  })

  it.each([
    ['application', "import { makeHttpServer } from '../adapters/http/server.ts'\nexport const x = makeHttpServer\n", 'application-imports-domain-only'],
    ['application', "import { Pool } from 'pg'\nexport const x = Pool\n", 'application-no-infrastructure'],
    ['domain', "import { startProjector } from '../projections/projector.ts'\nexport const x = startProjector\n", 'domain-is-pure'],
    ['domain', "import { readFileSync } from 'node:fs'\nexport const x = readFileSync\n", 'domain-no-io'],
    ['projections', "import { makeGatewayClient } from '../adapters/gateway/client.ts'\nexport const x = makeGatewayClient\n", 'projections-and-jobs-below-adapters'],
    ['adapters', "import { startSatang } from '../main.ts'\nexport const x = startSatang\n", 'adapters-below-composition'],
  ])('a module in src/%s that breaks the rule fails (%#)', async (dir, text, rule) => {
    const path = probe(dir, text)
    const r = await depcruise(path)
    expect(r.code).not.toBe(0)
    expect(r.output).toContain(rule)
    expect(r.output).toContain(path)
  })

  it('an import loop between two modules fails', async () => {
    const a = `lint-probe-a-${randomUUID().slice(0, 8)}`
    const b = `lint-probe-b-${randomUUID().slice(0, 8)}`
    probe('application', `import { b } from './${b}.ts'\nexport const a = (): number => b() + 1\n`, a)
    probe('application', `import { a } from './${a}.ts'\nexport const b = (): number => a() - 1\n`, b)
    const r = await depcruise(`src/application/${a}.ts`)
    expect(r.code).not.toBe(0)
    expect(r.output).toContain('no-circular')
  })

  it.each([
    ['export const now = (): number => Date.now()\n', 'may not read the clock'],
    ['export const at = (): Date => new Date()\n', 'may not read the clock'],
    ['export const id = (): number => Math.random()\n', 'may not use randomness'],
    ["import { randomUUID } from 'node:crypto'\nexport const id = (): string => randomUUID()\n", 'may not use randomness'],
  ])('a domain module that reads the clock or randomness fails ESLint (%#)', async (text, message) => {
    const path = probe('domain', text)
    const r = await eslint(path)
    expect(r.code).not.toBe(0)
    expect(r.output).toContain(message)
  })
})
