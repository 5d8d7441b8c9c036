import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// bench/support/cpu.ts: a load that fails while backendCpuDuring takes its first sample of /proc must
// reject through backendCpuDuring, not end the bench process as an unhandled rejection (which would
// leave the run without its JSON). Run in a process of its own: Node's default for an unhandled
// rejection is to exit, which is what a bench run does.
const CPU = fileURLToPath(new URL('../../bench/support/cpu.ts', import.meta.url))

describe('backendCpuDuring', () => {
  it('a load that fails at once rejects with its own error, and the process goes on', () => {
    const code = `const { backendCpuDuring } = await import(${JSON.stringify(CPU)})
const r = await backendCpuDuring('satang_no_such_database', Promise.reject(new Error('the load failed at once'))).then(() => 'resolved', (e) => 'rejected: ' + e.message)
process.stdout.write(r + '; still running')`
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toBe('rejected: the load failed at once; still running')
  })

  it('a load that succeeds gives its result', () => {
    const code = `const { backendCpuDuring } = await import(${JSON.stringify(CPU)})
const r = await backendCpuDuring('satang_no_such_database', new Promise((ok) => setTimeout(() => ok(42), 300)))
process.stdout.write(JSON.stringify(r))`
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 })
    expect(r.status, r.stderr).toBe(0)
    // No backend of that database: no CPU counted (0 on Linux, null where /proc cannot tell).
    expect([{ result: 42, seconds: 0 }, { result: 42, seconds: null }]).toContainEqual(JSON.parse(r.stdout))
  })
})
