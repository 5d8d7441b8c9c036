import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isLintProbe } from '../support/lint-probe.ts'

/*
 * docs/observability.md's table of metrics names every satang_* metric the code registers, and
 * nothing else: a metric added without a row (or a row left behind) fails here.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const doc = readFileSync(join(ROOT, 'docs/observability.md'), 'utf8')

/** The metric names registered in the code: `name: 'satang_…'` and the helpers' first argument. */
const registered = (): ReadonlySet<string> => {
  const names = new Set<string>()
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.ts') && !isLintProbe(e.name))
  for (const f of files) {
    const text = readFileSync(join(f.parentPath, f.name), 'utf8')
    if (!text.includes("from 'prom-client'") && !text.includes('scrapedCounter')) continue
    for (const m of text.matchAll(/(?:name: |gauge\(|counter\(|perClass\(|fromStatus\(|fromRuntime\(|scrapedCounter\(registry, \{ name: )'(satang_[a-z_]+)'/g)) names.add(m[1] ?? '')
  }
  return names
}

const documented = (): ReadonlySet<string> => new Set([...doc.matchAll(/^\| `(satang_[a-z_]+)` \|/gm)].map((m) => m[1] ?? ''))

describe('docs/observability.md', () => {
  it('lists every satang metric the code registers, and no other', () => {
    const code = registered()
    expect(code.size).toBeGreaterThan(20)
    expect([...code].filter((n) => !documented().has(n)).sort()).toEqual([])
    expect([...documented()].filter((n) => !code.has(n)).sort()).toEqual([])
  })

  it('names counters with _total and histograms in seconds', () => {
    for (const m of doc.matchAll(/^\| `(satang_[a-z_]+)` \| (counter|histogram|gauge) \|/gm)) {
      const [, name = '', type] = m
      if (type === 'counter') expect(name).toMatch(/_total$/)
      else expect(name).not.toMatch(/_total$/)
      if (type === 'histogram') expect(name).toMatch(/_seconds$/)
    }
  })
})
