import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { HEAP_FLAGS, RELAY_HEAP_FLAGS } from '../../bin/heap.js'

const HEAP = fileURLToPath(new URL('../../bin/heap.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'satang-heap-flags-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// A stand-in for bin/satang.js: restarts itself as bin/heap.js says, then prints the Node flags it runs with and its pid before and after.
const script = join(dir, 'cli.mjs')
writeFileSync(
  script,
  `const before = process.env.BEFORE_PID ?? String(process.pid)
process.env.BEFORE_PID = before
const { restartWithHeapFlags } = await import(${JSON.stringify(HEAP)})
restartWithHeapFlags(process.argv)
process.stdout.write(JSON.stringify({ execArgv: process.execArgv, argv: process.argv.slice(2), samePid: before === String(process.pid) }))
`,
)

const run = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}, nodeArgs: ReadonlyArray<string> = []): { execArgv: string[]; argv: string[]; samePid: boolean } => {
  const r = spawnSync(process.execPath, [...nodeArgs, script, ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env } })
  if (r.status !== 0) throw new Error(`exited ${String(r.status)}: ${r.stderr}`)
  return JSON.parse(r.stdout) as { execArgv: string[]; argv: string[]; samePid: boolean }
}

describe('the heap of the long-running commands (bin/heap.js)', () => {
  it.each([
    ['up', HEAP_FLAGS],
    ['project', HEAP_FLAGS],
    ['relay', RELAY_HEAP_FLAGS],
  ])('satang %s restarts itself in the same process with its heap flags, its arguments unchanged', (command, flags) => {
    const r = run([command, '--role', 'api'])
    expect(r.execArgv).toEqual([...flags])
    expect(r.argv).toEqual([command, '--role', 'api'])
    expect(r.samePid).toBe(true)
  })

  it('other commands start once, with Node as it is', () => {
    for (const args of [['--help'], ['report', 'ledger'], ['migrate']]) expect(run(args).execArgv).toEqual([])
  })

  it("the operator's own heap flags win, from NODE_OPTIONS or node's arguments", () => {
    expect(run(['up'], { NODE_OPTIONS: '--max-old-space-size=1024' }).execArgv).toEqual([])
    expect(run(['up'], { NODE_OPTIONS: '--max_semi_space_size=16' }).execArgv).toEqual([])
    expect(run(['up'], {}, ['--max-old-space-size=2048']).execArgv).toEqual(['--max-old-space-size=2048'])
  })
})
