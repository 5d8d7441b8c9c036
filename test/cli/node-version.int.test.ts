import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { MINIMUM_NODE, recentEnough } from '../../bin/node-version.js'

// One Node rule (bin/node-version.js) for the CLI's hand-over to the Node 24 of `npm ci` and for the
// test configs' refusal (test/support/node-version.ts).

const SATANG = fileURLToPath(new URL('../../bin/satang.js', import.meta.url))
const README = fileURLToPath(new URL('../../README.md', import.meta.url))

describe('the Node rule (bin/node-version.js)', () => {
  it('takes 22.18 and newer, refuses older, whatever the patch', () => {
    expect(MINIMUM_NODE).toBe('22.18')
    for (const v of ['22.18.0', '22.18.1', '22.19.0', '23.0.0', '24.21.0', '30.1.2']) expect(recentEnough(v), v).toBe(true)
    for (const v of ['22.17.9', '22.0.0', '21.99.0', '20.20.2', '18.20.8']) expect(recentEnough(v), v).toBe(false)
  })

  it('is the one the README states', () => {
    expect(readFileSync(README, 'utf8')).toContain(`Node ≥ ${MINIMUM_NODE}`)
  })

  // The machine's own Node, when it is older (20 here): bin/satang.js hands the command over.
  const system = spawnSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' })
  const old = system.status === 0 && !recentEnough(system.stdout.trim()) ? system.stdout.trim() : undefined
  if (old === undefined) console.info(`bin/satang.js hand-over test skipped: /usr/bin/node is missing or not older than ${MINIMUM_NODE} (${system.stdout.trim() || String(system.error?.message)})`)
  it.skipIf(old === undefined)('hands a command run by an older Node over to the Node of npm ci, which answers it', () => {
    const r = spawnSync('/usr/bin/node', [SATANG, '--version'], { encoding: 'utf8', timeout: 60_000 })
    expect(r.status, r.stderr).toBe(0)
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string }
    expect(r.stdout.trim()).toBe(pkg.version)
  })
})
