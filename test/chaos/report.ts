import { spread } from './checks.ts'

/** The figures of a chaos run, as printed and as written to JSON. */
export type FaultRow = {
  readonly kind: string
  readonly injected: number
  /** Server faults: recovered within the limit; callback faults: handled as they should be; null: shown only by the end checks. */
  readonly recovered: number | null
  readonly ttrMs: ReadonlyArray<number>
  readonly skipped?: string
  readonly details: ReadonlyArray<string>
}

export type RequestRow = { readonly route: string; readonly sent: number; readonly acknowledged: number; readonly statuses: Readonly<Record<string, number>> }

export type Check = { readonly name: string; readonly ok: boolean; readonly detail: string }

export type ChaosReport = {
  readonly run: { readonly form: 'short' | 'full'; readonly loadSeconds: number; readonly totalSeconds: number; readonly tag: string; readonly dir: string; readonly startedAt: string }
  readonly faults: ReadonlyArray<FaultRow>
  readonly requests: ReadonlyArray<RequestRow>
  readonly acknowledged: { readonly creates: number; readonly refunds: number; readonly notifications: number }
  readonly lost: number
  readonly duplicated: number
  readonly checks: ReadonlyArray<Check>
  readonly violations: ReadonlyArray<string>
  readonly ok: boolean
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length))
const padLeft = (s: string, n: number): string => (s.length >= n ? s : ' '.repeat(n - s.length) + s)

export const faultsJson = (rows: ReadonlyArray<FaultRow>): ReadonlyArray<Record<string, unknown>> =>
  rows.map((r) => ({ kind: r.kind, injected: r.injected, recovered: r.recovered, time_to_recover_ms: spread(r.ttrMs), ...(r.skipped === undefined ? {} : { skipped: r.skipped }), details: r.details }))

export const reportJson = (r: ChaosReport): Record<string, unknown> => ({
  ok: r.ok,
  run: r.run,
  faults: faultsJson(r.faults),
  requests: r.requests,
  acknowledged: r.acknowledged,
  lost: r.lost,
  duplicated: r.duplicated,
  checks: r.checks,
  violations: r.violations,
})

/** The table: faults injected and recovered with their time to recover, requests and answers, then the checks. */
export const reportTable = (r: ChaosReport): string => {
  const out: string[] = []
  out.push(`satang chaos run (${r.run.form}): ${String(r.run.loadSeconds)} s under load, ${String(r.run.totalSeconds)} s in all (ids CH-${r.run.tag}-…)`)
  out.push('')
  out.push(`${pad('fault', 22)}${padLeft('injected', 9)}${padLeft('recovered', 11)}   time to recover (min / median / max)`)
  for (const f of r.faults) {
    const s = spread(f.ttrMs)
    const ttr = f.skipped !== undefined ? `skipped: ${f.skipped}` : s === null ? '-' : `${seconds(s.min)} / ${seconds(s.median)} / ${seconds(s.max)}`
    out.push(`${pad(f.kind, 22)}${padLeft(String(f.injected), 9)}${padLeft(f.skipped !== undefined || f.recovered === null ? '-' : String(f.recovered), 11)}   ${ttr}`)
  }
  out.push('')
  out.push(`${pad('requests', 48)}${padLeft('sent', 7)}${padLeft('2xx', 7)}   answers`)
  for (const q of r.requests) {
    const answers = Object.entries(q.statuses)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, n]) => `${status === '0' ? 'none' : status}: ${String(n)}`)
      .join(', ')
    out.push(`${pad(q.route, 48)}${padLeft(String(q.sent), 7)}${padLeft(String(q.acknowledged), 7)}   ${answers}`)
  }
  out.push('')
  out.push(`acknowledged writes: ${String(r.acknowledged.creates)} payment creates, ${String(r.acknowledged.refunds)} refunds tracked, ${String(r.acknowledged.notifications)} notifications; lost: ${String(r.lost)}; duplicated events: ${String(r.duplicated)}`)
  out.push('')
  for (const c of r.checks) out.push(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`)
  out.push('')
  out.push(r.ok ? 'chaos run passed' : `chaos run FAILED: ${String(r.violations.length)} violation(s)`)
  return out.join('\n')
}
