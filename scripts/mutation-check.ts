// Per-file floors of the mutation score, which Stryker's thresholds (one number for all files) cannot
// express. Reads Stryker's JSON report and test/mutation/thresholds.json; exits 1 when a file is under
// its floor or the overall score under the overall floor. `--table` prints the per-file table of
// docs/mutation-testing.md instead. Usage:
//   node scripts/mutation-check.ts [--report reports/mutation/mutation.json] [--thresholds test/mutation/thresholds.json] [--table]
import { readFileSync } from 'node:fs'

/** Killed, Timeout, Survived, NoCoverage, Ignored, RuntimeError, CompileError or Pending. */
type Mutant = {
  readonly status: string
  readonly mutatorName: string
  readonly replacement?: string
  readonly location: { readonly start: { readonly line: number; readonly column: number } }
}
type Report = { readonly files: Readonly<Record<string, { readonly mutants: ReadonlyArray<Mutant> }>> }
type Thresholds = {
  /** Floor (percent of covered mutants) of a file with more than `minMutants` mutants and no floor of its own. */
  readonly covered: number
  /** Floor (percent, uncovered mutants counted as survivors) of all files together. */
  readonly overall: number
  readonly minMutants: number
  /** Floors of their own (percent of covered mutants): files still under `covered`, each with why in the docs. */
  readonly files: Readonly<Record<string, number>>
}

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name)
  const v = i >= 0 ? process.argv[i + 1] : undefined
  return v ?? fallback
}

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'))

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

const reportOf = (u: unknown): Report => {
  if (!isRecord(u) || !isRecord(u.files)) throw new Error('the mutation report has no files')
  const files: Record<string, { mutants: Mutant[] }> = {}
  for (const [name, f] of Object.entries(u.files)) {
    if (!isRecord(f) || !Array.isArray(f.mutants)) throw new Error(`the mutation report's file ${name} has no mutants`)
    files[name] = { mutants: f.mutants.filter(isRecord).map((m) => ({ status: String(m.status), mutatorName: String(m.mutatorName), replacement: typeof m.replacement === 'string' ? m.replacement : undefined, location: locationOf(m.location) })) }
  }
  return { files }
}

const locationOf = (u: unknown): Mutant['location'] => {
  const start = isRecord(u) && isRecord(u.start) ? u.start : {}
  return { start: { line: Number(start.line ?? 0), column: Number(start.column ?? 0) } }
}

const thresholdsOf = (u: unknown): Thresholds => {
  if (!isRecord(u)) throw new Error('thresholds: must be an object')
  const num = (k: string): number => {
    const v = u[k]
    if (typeof v !== 'number' || v < 0 || v > 100) throw new Error(`thresholds.${k}: must be a number from 0 to 100`)
    return v
  }
  const files: Record<string, number> = {}
  if (!isRecord(u.files)) throw new Error('thresholds.files: must be an object')
  for (const [k, v] of Object.entries(u.files)) {
    if (typeof v !== 'number' || v < 0 || v > 100) throw new Error(`thresholds.files["${k}"]: must be a number from 0 to 100`)
    files[k] = v
  }
  const minMutants = u.minMutants
  if (typeof minMutants !== 'number' || !Number.isInteger(minMutants) || minMutants < 0) throw new Error('thresholds.minMutants: must be a whole number')
  return { covered: num('covered'), overall: num('overall'), minMutants, files }
}

type Score = { readonly file: string; readonly mutants: number; readonly killed: number; readonly survived: number; readonly noCoverage: number; readonly ignored: number; readonly covered: number | null; readonly total: number | null }

const scoreOf = (file: string, mutants: ReadonlyArray<Mutant>): Score => {
  const count = (...s: ReadonlyArray<string>) => mutants.filter((m) => s.includes(m.status)).length
  const killed = count('Killed', 'Timeout')
  const survived = count('Survived')
  const noCoverage = count('NoCoverage')
  const ignored = count('Ignored')
  const valid = killed + survived + noCoverage
  return {
    file,
    mutants: valid,
    killed,
    survived,
    noCoverage,
    ignored,
    covered: killed + survived === 0 ? null : (100 * killed) / (killed + survived),
    total: valid === 0 ? null : (100 * killed) / valid,
  }
}

const pct = (n: number | null): string => (n === null ? 'n/a' : n.toFixed(2))

const main = (): number => {
  const report = reportOf(readJson(arg('--report', 'reports/mutation/mutation.json')))
  const thresholds = thresholdsOf(readJson(arg('--thresholds', 'test/mutation/thresholds.json')))
  const scores = Object.entries(report.files)
    .map(([file, f]) => scoreOf(file.replace(/\\/g, '/'), f.mutants))
    .sort((a, b) => b.mutants - a.mutants || a.file.localeCompare(b.file))
  const all = scoreOf('all files', Object.values(report.files).flatMap((f) => f.mutants))

  if (process.argv.includes('--table')) {
    console.log('| file | mutants | killed | survived | no coverage | ignored | score of covered | score counting uncovered | floor |')
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const s of scores) {
      const floor = thresholds.files[s.file] ?? (s.mutants > thresholds.minMutants ? thresholds.covered : null)
      console.log(`| \`${s.file}\` | ${String(s.mutants)} | ${String(s.killed)} | ${String(s.survived)} | ${String(s.noCoverage)} | ${String(s.ignored)} | ${pct(s.covered)} | ${pct(s.total)} | ${floor === null ? '—' : String(floor)} |`)
    }
    console.log(`| **all files** | ${String(all.mutants)} | ${String(all.killed)} | ${String(all.survived)} | ${String(all.noCoverage)} | ${String(all.ignored)} | ${pct(all.covered)} | ${pct(all.total)} | ${String(thresholds.overall)} (counting uncovered) |`)
    return 0
  }

  const failures: string[] = []
  for (const s of scores) {
    const own = thresholds.files[s.file]
    const floor = own ?? (s.mutants > thresholds.minMutants ? thresholds.covered : null)
    if (floor === null || s.covered === null) continue
    if (s.covered < floor) {
      failures.push(`${s.file}: mutation score ${pct(s.covered)}% of covered mutants is under its floor ${String(floor)}%`)
      for (const m of report.files[s.file]?.mutants.filter((x) => x.status === 'Survived') ?? []) {
        failures.push(`  survived ${m.mutatorName} at ${s.file}:${String(m.location.start.line)}:${String(m.location.start.column)}${m.replacement === undefined ? '' : ` → ${m.replacement.split('\n')[0] ?? ''}`}`)
      }
    }
  }
  if (all.total !== null && all.total < thresholds.overall) failures.push(`all files: mutation score ${pct(all.total)}% (uncovered counted) is under the overall floor ${String(thresholds.overall)}%`)
  console.log(`mutation scores: ${String(scores.length)} files, ${String(all.mutants)} mutants, ${pct(all.covered)}% of covered, ${pct(all.total)}% counting uncovered`)
  if (failures.length > 0) {
    console.error(failures.join('\n'))
    return 1
  }
  console.log('every file is at or above its floor')
  return 0
}

process.exitCode = main()
