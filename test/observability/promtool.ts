import { execFileSync } from 'node:child_process'

/** Whether `promtool` (Debian's prometheus package) is on the PATH. */
export const hasPromtool = (): boolean => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Runs `promtool check metrics` on a /metrics text: its findings (empty = clean). */
export const promtoolFindings = (text: string): string => {
  try {
    return execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }).trim()
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string }
    return `${err.stdout ?? ''}${err.stderr ?? ''}`.trim() || String(e)
  }
}
