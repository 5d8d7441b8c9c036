import { describe, expect, it } from 'vitest'
import { runCli } from '../support/cli.ts'
import { envWithoutSatangSettings } from '../support/process.ts'

/** `satang reconcile`'s usage: every mistake is exit 2 with a message naming the option and the rule. */

const env = envWithoutSatangSettings({ SATANG_LOG_LEVEL: 'warn' })

describe('satang reconcile usage', () => {
  it('--help names the scope options and the exit codes', async () => {
    const r = await runCli(['reconcile', '--help'], { env })
    expect(r.code).toBe(0)
    for (const text of ['--date <yyyy-MM-dd>', '--from <yyyy-MM-dd>', '--concurrency <n>', '--dry-run', '--json', '0  reconciled', '1  breaks are open', '2  bad usage', '3  incomplete']) expect(r.stdout).toContain(text)
    const ack = await runCli(['reconcile', 'ack', '--help'], { env })
    expect(ack.stdout).toContain('--reason <text>')
  })
  it.each([
    [['--date', '2026-02-30'], '--date "2026-02-30": day must be 01 to 28 in 2026-02'],
    [['--date', '31/01/2026'], '--date "31/01/2026": must be yyyy-MM-dd'],
    [['--from', '2026-01-01'], '--from and --to go together'],
    [['--date', '2026-01-01', '--from', '2026-01-01', '--to', '2026-01-02'], '--date excludes --from and --to'],
    [['--from', '2026-02-01', '--to', '2026-01-01'], 'to must not be before from'],
    [['--from', '2025-01-01', '--to', '2026-12-31'], 'a run covers at most 366 days'],
    [['--date', '2026-01-01', '--concurrency', '0'], '--concurrency "0": must be a whole number from 1 to 256'],
    [['--as-of', 'yesterday'], '--as-of "yesterday": must be an ISO-8601 instant'],
  ])('%j is bad usage (exit 2)', async (args, message) => {
    const r = await runCli(['reconcile', ...args], { env })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(message)
  })
  it('ack without a reason is bad usage', async () => {
    const r = await runCli(['reconcile', 'ack', '6f1c2e1a-0000-4000-8000-000000000001'], { env })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--reason is required')
  })
})
