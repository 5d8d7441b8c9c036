import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { settingDocs } from '../../src/config.ts'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')

describe('docs/operations.md', () => {
  it('documents every setting with its default and meaning, exactly as the code has them', () => {
    const block = /<!-- settings:start[^>]*-->\n([\s\S]*?)<!-- settings:end -->/.exec(operations)?.[1]
    if (block === undefined) throw new Error('docs/operations.md has no settings block')
    const rows = block.trim().split('\n').slice(2)
    const expected = settingDocs().map((s) => `| \`${s.name}\` | ${s.default === undefined ? '—' : `\`${s.default}\``} | ${s.doc} |`)
    expect(rows).toEqual(expected)
  })
})

describe('README', () => {
  it('stays short: what satang is, the quick start, the requirements and a map of docs/ and of the code, in at most 250 lines', () => {
    const lines = readme.trimEnd().split('\n')
    expect(lines.length).toBeLessThanOrEqual(250)
    for (const heading of ['## Requirements', '## Quick start', '## Documentation', '## The code']) expect(lines).toContain(heading)
  })

  it('the quick start test command is the one CI runs', () => {
    const ci = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')
    expect(readme).toMatch(/^npm test\s+# runs the tests/m)
    expect(ci).toMatch(/^npm test$/m)
  })
})
