import { bangkokLocal, bangkokText, groupedBaht as formatAmount, utcText } from './people.ts'
import { ageingOf, ledgerDifference, periodVerdict, sumFigures, type DayFigures, type ReconciliationReport } from './model.ts'

/* The report for a terminal: the verdict, a table of days, breaks by class, ageing, open breaks, healed items, the ledger check. */

/** Columns padded to their widest cell; the columns listed in `numeric` are right-aligned. */
export const textTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, numeric: ReadonlySet<number>): ReadonlyArray<string> => {
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
  const line = (r: ReadonlyArray<string>): string =>
    r
      .map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)]
}

const VERDICT_TEXT: Readonly<Record<string, string>> = {
  reconciled: 'RECONCILED',
  reconciled_with_pending: 'RECONCILED WITH PENDING ITEMS',
  breaks: 'BREAKS OPEN',
  incomplete: 'INCOMPLETE (some items could not be checked)',
  not_reconciled: 'NOT RECONCILED (no run covered some day)',
}

export const verdictText = (v: string): string => VERDICT_TEXT[v] ?? v

const fig = (count: number, amount: bigint): string => `${count.toLocaleString('en-US')} / ${formatAmount(amount)}`

const LIST_MAX = 50

const dayRow = (label: string, verdict: string, f: DayFigures): ReadonlyArray<string> => [
  label,
  verdict,
  fig(f.payments.matched.count, f.payments.matched.amount),
  fig(f.refunds.matched.count, f.refunds.matched.amount),
  fig(f.outcomes.healed.count, f.outcomes.healed.amount),
  fig(f.outcomes.pending.count, f.outcomes.pending.amount),
  fig(f.outcomes.unchecked.count, f.outcomes.unchecked.amount),
  fig(f.outcomes.break.count, f.outcomes.break.amount),
  formatAmount(f.atStake),
]

export const reportText = (r: ReconciliationReport): string => {
  const scope = r.from === r.to ? `business day ${r.from}` : `business days ${r.from} to ${r.to}`
  const totals = sumFigures(r.days)
  const lines: string[] = [
    `Reconciliation report, merchant ${r.merchantId}, ${scope} (Asia/Bangkok): ${verdictText(periodVerdict(r.days))}`,
    `as of ${bangkokText(r.asOf.instant)} (${utcText(r.asOf.instant)})${r.asOf.position === null ? '' : ` (log position ${r.asOf.position})`}; amounts in baht (THB); each figure is items / amount; payments and refunds counted apart`,
    '',
    ...textTable(
      ['DAY', 'VERDICT', 'PAYMENTS MATCHED', 'REFUNDS MATCHED', 'HEALED', 'PENDING', 'UNCHECKED', 'BREAKS', 'AT STAKE'],
      [...r.days.map((d) => dayRow(d.day, d.verdict ?? 'not_reconciled', d)), ...(r.days.length > 1 ? [dayRow('TOTAL', periodVerdict(r.days), totals)] : [])],
      new Set([2, 3, 4, 5, 6, 7, 8]),
    ),
  ]
  const classes = Object.entries(totals.classes).filter(([, c]) => c.count > 0)
  lines.push('', 'Breaks by class (items seen by the runs of these days)')
  if (classes.length === 0) lines.push('(none)')
  else lines.push(...textTable(['CLASS', 'ITEMS', 'AMOUNT', 'AT STAKE'], classes.map(([k, c]) => [k, c.count.toLocaleString('en-US'), formatAmount(c.amount), formatAmount(c.atStake)]), new Set([1, 2, 3])))
  const ageing = ageingOf(r.openBreaks)
  lines.push('', `Ageing of the breaks still open (business day on or before ${r.to})`)
  if (ageing.length === 0) lines.push('(no open breaks)')
  else lines.push(...textTable(['CLASS', 'AGE (DAYS)', 'BREAKS', 'AT STAKE'], ageing.map((c) => [c.class, c.bucket, c.count.toLocaleString('en-US'), formatAmount(c.atStake)]), new Set([2, 3])))
  if (r.openBreaks.length > 0) {
    lines.push('', 'Open breaks')
    lines.push(
      ...textTable(
        ['BREAK', 'CLASS', 'STATUS', 'ITEM', 'DAY', 'AT STAKE', 'AGE', 'DETAIL'],
        r.openBreaks.slice(0, LIST_MAX).map((b) => [b.breakId, b.class, b.status, `${b.itemKind} ${b.itemId}`, b.day, formatAmount(b.atStake), `${String(b.ageDays)} d`, b.detail]),
        new Set([5, 6]),
      ),
    )
    if (r.openBreaks.length > LIST_MAX) lines.push(`… and ${(r.openBreaks.length - LIST_MAX).toLocaleString('en-US')} more (--json and --csv list every one)`)
  }
  if (r.healed.length > 0) {
    lines.push('', 'Healed items')
    lines.push(...textTable(['ITEM', 'DAY', 'FROM', 'TO', 'AMOUNT', 'HEALED AT (BANGKOK)', 'RUN'], r.healed.slice(0, LIST_MAX).map((h) => [`${h.itemKind} ${h.itemId}`, h.day, h.from ?? '—', h.to, formatAmount(h.amount), bangkokLocal(h.healedAt), h.runId]), new Set([4])))
    if (r.healed.length > LIST_MAX) lines.push(`… and ${(r.healed.length - LIST_MAX).toLocaleString('en-US')} more`)
  }
  const l = r.ledger
  const diff = ledgerDifference(l)
  lines.push(
    '',
    `Ledger check at the end of ${l.date} (Asia/Bangkok):`,
    `  gateway receivable (trial balance)          ${formatAmount(l.receivable).padStart(16)}`,
    `  expected from the items: paid orders        ${formatAmount(l.expected.paidOrders).padStart(16)}`,
    `                         + subscription charges ${formatAmount(l.expected.charges).padStart(14)}`,
    `                         − refunds            ${formatAmount(l.expected.refunds).padStart(16)}`,
    `                         = expected           ${formatAmount(l.expected.total).padStart(16)}`,
    diff === 0n ? '  the ledger agrees with the items' : `  DIFFERENCE ${formatAmount(diff)}: the ledger does not agree with the items`,
  )
  lines.push('', `Built from runs ${r.sources.runs.map((s) => s.runId).join(', ') || '(none)'}; log position ${r.sources.logPosition ?? '(empty log)'}`)
  return `${lines.join('\n')}\n`
}
