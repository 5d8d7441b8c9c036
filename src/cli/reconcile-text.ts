import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { formatAmount } from '../domain/money.ts'
import type { RunReport } from '../jobs/reconcile/report.ts'
import type { Progress } from '../jobs/reconcile/reconcile.ts'

/* How `satang reconcile` prints a run for people: progress on the terminal, a summary at the end. */

const n = (x: number): string => x.toLocaleString('en-US')
const baht = (satang: number): string => formatAmount(BigInt(satang))

const seconds = (s: number): string => (s < 120 ? `${s.toFixed(0)} s` : `${(s / 60).toFixed(1)} min`)

/** `checked / total, rate, ETA` for the progress line. */
export const progressLine = (p: Progress, now: Date): string => {
  const elapsed = Math.max(0.001, (now.getTime() - p.since.getTime()) / 1000)
  const rate = p.checkedHere / elapsed
  const left = Math.max(0, p.total - p.checked)
  const eta = rate > 0 ? seconds(left / rate) : '?'
  const pct = p.total === 0 ? 100 : Math.floor((p.checked / p.total) * 100)
  return `reconciling ${p.phase}: ${n(p.checked)} / ${n(p.total)} items (${String(pct)}%), ${n(Math.round(rate))} items/s, ETA ${eta}`
}

const Item = t.type({ kind: t.string, id: t.string })
const Summary = t.type({
  run_id: t.string,
  dry_run: t.boolean,
  resumed: t.boolean,
  superseded_runs: t.array(t.string),
  scope: t.type({ kind: t.string, from: t.union([t.string, t.null]), to: t.union([t.string, t.null]) }),
  duration_ms: t.number,
  verdict: t.string,
  counts: t.type({ checked: t.number, matched: t.number, healed: t.number, pending: t.number, unchecked: t.number, acknowledged: t.number, open_breaks: t.number, breaks: t.record(t.string, t.number) }),
  totals: t.type({ checked_satang: t.number, healed_satang: t.number, at_stake_satang: t.number, unchecked_satang: t.number }),
  days: t.array(t.type({ day: t.string, verdict: t.string })),
  breaks: t.array(t.type({ break_id: t.string, class: t.string, status: t.string, item: Item, amount_at_stake_satang: t.number, age_days: t.number, detail: t.string })),
  resolved: t.array(t.type({ break_id: t.string, class: t.string, item: Item, resolution: t.string })),
  healed: t.array(t.type({ item: Item, from: t.union([t.string, t.null]), to: t.string })),
})

const VERDICT_TEXT: Readonly<Record<string, string>> = {
  reconciled: 'RECONCILED',
  reconciled_with_pending: 'RECONCILED WITH PENDING ITEMS',
  breaks: 'BREAKS OPEN',
  incomplete: 'INCOMPLETE (some items could not be checked)',
}

const LIST_MAX = 50

/** The summary printed at the end of a run (the JSON document of `--json` is the source). */
export const summaryText = (report: RunReport): string => {
  const decoded = Summary.decode(report)
  if (E.isLeft(decoded)) return `${JSON.stringify(report, null, 2)}\n`
  const r = decoded.right
  const scope = r.scope.kind === 'sweep' ? 'items still open' : r.scope.from === r.scope.to ? `business day ${r.scope.from ?? ''}` : `business days ${r.scope.from ?? ''} to ${r.scope.to ?? ''}`
  const c = r.counts
  const lines = [
    `${r.dry_run ? 'DRY RUN (nothing recorded) ' : ''}run ${r.run_id}, ${scope}${r.resumed ? ' (resumed after it stopped half-way)' : ''}: ${VERDICT_TEXT[r.verdict] ?? r.verdict}`,
    `  checked ${n(c.checked)} items (${baht(r.totals.checked_satang)}) in ${seconds(r.duration_ms / 1000)}: matched ${n(c.matched)}, healed ${n(c.healed)}, pending ${n(c.pending)}, unchecked ${n(c.unchecked)}, acknowledged ${n(c.acknowledged)}, open breaks ${n(c.open_breaks)}`,
  ]
  const classes = Object.entries(c.breaks)
  if (classes.length > 0) lines.push(`  breaks by class: ${classes.map(([k, v]) => `${k} ${n(v)}`).join(', ')}; at stake ${baht(r.totals.at_stake_satang)}`)
  if (r.days.length > 1) lines.push(`  days: ${r.days.map((d) => `${d.day} ${d.verdict}`).join(', ')}`)
  if (r.superseded_runs.length > 0) lines.push(`  superseded unfinished runs: ${r.superseded_runs.join(', ')}`)
  if (r.breaks.length > 0) {
    lines.push('  open breaks:')
    for (const b of r.breaks.slice(0, LIST_MAX)) lines.push(`    ${b.break_id}  ${b.class.padEnd(22)} ${b.status.padEnd(10)} ${b.item.kind} ${b.item.id}  at stake ${baht(b.amount_at_stake_satang)}  age ${String(b.age_days)} d  ${b.detail}`)
    if (r.breaks.length > LIST_MAX) lines.push(`    … and ${n(r.breaks.length - LIST_MAX)} more (--json lists every one)`)
  }
  if (r.resolved.length > 0) lines.push(`  resolved: ${r.resolved.slice(0, LIST_MAX).map((b) => `${b.class} of ${b.item.kind} ${b.item.id} (${b.resolution})`).join('; ')}${r.resolved.length > LIST_MAX ? ' …' : ''}`)
  if (r.healed.length > 0) lines.push(`  healed: ${r.healed.slice(0, LIST_MAX).map((h) => `${h.item.kind} ${h.item.id} ${h.from ?? '—'}→${h.to}`).join(', ')}${r.healed.length > LIST_MAX ? ' …' : ''}`)
  return `${lines.join('\n')}\n`
}
