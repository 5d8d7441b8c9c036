import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

// What `.ci/run` relies on (scripts/mutation-ci.sh runs this check after the incremental Stryker run):
// scripts/mutation-check.ts fails (exit 1) when a file with more than `minMutants` mutants scores under
// its floor, naming the file and each survivor, or when the whole domain scores under `overall`.
const CHECK = fileURLToPath(new URL('../../scripts/mutation-check.ts', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'satang-mutation-check-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Status = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'Ignored'
const mutants = (counts: Partial<Record<Status, number>>) =>
  Object.entries(counts).flatMap(([status, n]) => Array.from({ length: n }, (_, i) => ({ status, mutatorName: 'EqualityOperator', replacement: 'a < b', location: { start: { line: i + 1, column: 3 } } })))

let case_ = 0
const check = (files: Record<string, Partial<Record<Status, number>>>, thresholds = { covered: 90, overall: 85, minMutants: 20, files: {} as Record<string, number> }) => {
  case_ += 1
  const report = join(dir, `report-${String(case_)}.json`)
  const limits = join(dir, `thresholds-${String(case_)}.json`)
  writeFileSync(report, JSON.stringify({ files: Object.fromEntries(Object.entries(files).map(([f, c]) => [f, { mutants: mutants(c) }])) }))
  writeFileSync(limits, JSON.stringify(thresholds))
  const r = spawnSync(process.execPath, [CHECK, '--report', report, '--thresholds', limits], { encoding: 'utf8' })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

describe('scripts/mutation-check.ts (the floors CI holds the domain to)', () => {
  it('passes when every file with more than 20 mutants is at 90% of covered and the whole at 85% counting uncovered', () => {
    const r = check({ 'src/domain/a.ts': { Killed: 27, Survived: 3 }, 'src/domain/small.ts': { Killed: 9, Survived: 1 } })
    expect(r.code).toBe(0)
    expect(r.out).toContain('every file is at or above its floor')
  })

  it('fails when a file drops under its floor, naming the file and each of its survivors', () => {
    const r = check({ 'src/domain/a.ts': { Killed: 26, Survived: 4 }, 'src/domain/b.ts': { Killed: 100 } })
    expect(r.code).toBe(1)
    expect(r.err.split('\n').filter((l) => l !== '')).toEqual([
      'src/domain/a.ts: mutation score 86.67% of covered mutants is under its floor 90%',
      ...[1, 2, 3, 4].map((line) => `  survived EqualityOperator at src/domain/a.ts:${String(line)}:3 → a < b`),
    ])
  })

  it('a file of 20 mutants or fewer has no floor; a file with a floor of its own is held to that', () => {
    expect(check({ 'src/domain/small.ts': { Killed: 10, Survived: 10 }, 'src/domain/b.ts': { Killed: 200 } }).code).toBe(0)
    const own = { covered: 90, overall: 85, minMutants: 20, files: { 'src/domain/a.ts': 80 } }
    expect(check({ 'src/domain/a.ts': { Killed: 85, Survived: 15 } }, own).code).toBe(0)
    expect(check({ 'src/domain/a.ts': { Killed: 75, Survived: 25 } }, own).err).toContain('src/domain/a.ts: mutation score 75.00% of covered mutants is under its floor 80%')
  })

  it('fails when the whole domain, counting uncovered mutants, is under the overall floor', () => {
    const r = check({ 'src/domain/a.ts': { Killed: 90, NoCoverage: 20 } })
    expect(r.code).toBe(1)
    expect(r.err).toContain('all files: mutation score 81.82% (uncovered counted) is under the overall floor 85%')
  })

  it('refuses thresholds that are not percentages, naming the field', () => {
    const r = check({ 'src/domain/a.ts': { Killed: 1 } }, { covered: 190, overall: 85, minMutants: 20, files: {} })
    expect(r.code).not.toBe(0)
    expect(r.err).toContain('thresholds.covered: must be a number from 0 to 100')
  })
})
