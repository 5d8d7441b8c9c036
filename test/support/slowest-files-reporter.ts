import { relative } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'

const SHOWN = 10

/** A file's time from the moment its worker took it: set-up, import (collect), and its tests and hooks. */
const wallMs = (m: TestModule): number => {
  const d = m.diagnostic()
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration
}

/**
 * Prints the ten slowest test files after every run (issue 23, "tests in minutes"): where a run's
 * minutes go, so the next slow file is seen the day it lands. Added to the reporters in vitest.config.ts.
 */
export default class SlowestFilesReporter implements Reporter {
  private started = Date.now()

  onTestRunStart(): void {
    this.started = Date.now()
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (testModules.length === 0) return
    const rows = testModules
      .map((m) => ({ file: relative(process.cwd(), m.moduleId), project: m.project.name, ms: wallMs(m) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SHOWN)
    const width = Math.max(...rows.map((r) => r.project.length))
    const lines = rows.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.project.padEnd(width)}  ${r.file}`)
    const total = ((Date.now() - this.started) / 1000).toFixed(0)
    const title = rows.length === 1 ? 'The slowest test file' : `The ${String(rows.length)} slowest test files`
    process.stdout.write(`\n${title} (of ${String(testModules.length)}; the run took ${total} s):\n${lines.join('\n')}\n`)
  }
}
