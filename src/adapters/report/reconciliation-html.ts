import { formatAmount } from '../../domain/money.ts'
import { ITEM_OUTCOMES } from '../../domain/reconciliation/break-class.ts'
import { ageingOf, ledgerDifference, periodVerdict, sumFigures, type ReconciliationReport } from '../../domain/reconciliation/report/model.ts'
import { CHARTS_JS, chartLibrary } from '../http/console/assets.ts'
import { documentText, html, raw, type Html } from '../http/console/html.ts'
import { STYLESHEET, bangkokDaySeconds, chartBlock, verdictBadge } from '../http/console/style.ts'

/**
 * The reconciliation report as one self-contained HTML page (`--html FILE`): styles, the chart library
 * and the data inline, no request to anywhere when it opens; printable. Every value is escaped.
 */

const baht = (s: bigint): string => formatAmount(s)
const toNumber = (s: bigint): number => Number(s) / 100

const OUTCOME_LABEL: Readonly<Record<string, string>> = { matched: 'Matched', healed: 'Healed', pending: 'Pending', unchecked: 'Unchecked', acknowledged: 'Acknowledged', break: 'Breaks' }

export const reportHtml = (r: ReconciliationReport): string => {
  const lib = chartLibrary()
  const totals = sumFigures(r.days)
  const verdict = periodVerdict(r.days)
  const scope = r.from === r.to ? `business day ${r.from}` : `business days ${r.from} to ${r.to}`
  const chart = chartBlock(
    'amounts-chart',
    {
      title: 'Amounts per day (baht)',
      yLabel: 'baht',
      xs: r.days.map((d) => bangkokDaySeconds(d.day)),
      series: [
        { label: 'matched', color: '#1a7f37', values: r.days.map((d) => toNumber(d.outcomes.matched.amount)) },
        { label: 'healed', color: '#0969da', values: r.days.map((d) => toNumber(d.outcomes.healed.amount)) },
        { label: 'at stake', color: '#cf222e', values: r.days.map((d) => toNumber(d.atStake)) },
      ],
    },
    html`<p>The chart needs JavaScript; the table of days below holds the same figures.</p>`,
  )
  const cell = (count: number, amount: bigint): Html => html`<td class="num">${count.toLocaleString('en-US')}<br><span class="muted">${baht(amount)}</span></td>`
  const daysTable = html`<div class="scroll"><table>
    <thead><tr><th>Day</th><th>Verdict</th>${ITEM_OUTCOMES.map((o) => html`<th class="num">${OUTCOME_LABEL[o] ?? o}</th>`)}<th class="num">At stake</th><th class="num">Open now</th></tr></thead>
    <tbody>${r.days.map(
      (d) => html`<tr><td>${d.day}</td><td>${verdictBadge(d.verdict)}${d.runId === null ? '' : html`<br><span class="muted">run ${d.runId}</span>`}</td>${ITEM_OUTCOMES.map((o) => cell(d.outcomes[o].count, d.outcomes[o].amount))}<td class="num">${baht(d.atStake)}</td><td class="num">${d.openBreaksNow}</td></tr>`,
    )}
    ${r.days.length > 1 ? html`<tr><th>Total</th><td>${verdictBadge(verdict)}</td>${ITEM_OUTCOMES.map((o) => cell(totals.outcomes[o].count, totals.outcomes[o].amount))}<td class="num">${baht(totals.atStake)}</td><td></td></tr>` : ''}
    </tbody></table></div>`
  const classes = Object.entries(totals.classes).filter(([, c]) => c.count > 0)
  const ageing = ageingOf(r.openBreaks)
  const diff = ledgerDifference(r.ledger)
  const page = html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reconciliation report ${r.from}${r.from === r.to ? '' : ` to ${r.to}`}</title>
<style>${raw(lib.uplotCss.body)}${raw(STYLESHEET)}</style></head>
<body><main>
<h1>Reconciliation report: ${scope}</h1>
<p>Merchant ${r.merchantId}. Verdict: ${verdictBadge(verdict)}. Times in Asia/Bangkok days; amounts in baht (satang in the JSON and CSV files).</p>
<p class="muted">Generated ${r.generatedAt.toISOString()}; as of ${r.asOf.instant.toISOString()}${r.asOf.position === null ? '' : ` (log position ${r.asOf.position})`}.</p>
${chart}
<h2>Days</h2>
${daysTable}
<h2>Breaks by class</h2>
${classes.length === 0 ? html`<p>No break class was seen by the runs of these days.</p>` : html`<div class="scroll"><table><thead><tr><th>Class</th><th class="num">Items</th><th class="num">Amount</th><th class="num">At stake</th></tr></thead><tbody>${classes.map(([k, c]) => html`<tr><td>${k}</td><td class="num">${c.count}</td><td class="num">${baht(c.amount)}</td><td class="num">${baht(c.atStake)}</td></tr>`)}</tbody></table></div>`}
<h2>Ageing of the breaks still open</h2>
${ageing.length === 0 ? html`<p>No break is open.</p>` : html`<div class="scroll"><table><thead><tr><th>Class</th><th>Age (days)</th><th class="num">Breaks</th><th class="num">At stake</th></tr></thead><tbody>${ageing.map((c) => html`<tr><td>${c.class}</td><td>${c.bucket}</td><td class="num">${c.count}</td><td class="num">${baht(c.atStake)}</td></tr>`)}</tbody></table></div>`}
<h2>Open breaks (${r.openBreaks.length})</h2>
${r.openBreaks.length === 0 ? html`<p>None.</p>` : html`<div class="scroll"><table><thead><tr><th>Break</th><th>Class</th><th>Status</th><th>Item</th><th>Day</th><th class="num">At stake</th><th class="num">Age</th><th>Detail</th></tr></thead><tbody>${r.openBreaks.map((b) => html`<tr><td>${b.breakId}</td><td>${b.class}</td><td>${b.status}</td><td>${b.itemKind} ${b.itemId}</td><td>${b.day}</td><td class="num">${baht(b.atStake)}</td><td class="num">${b.ageDays} d</td><td>${b.detail}</td></tr>`)}</tbody></table></div>`}
<h2>Healed items (${r.healed.length})</h2>
${r.healed.length === 0 ? html`<p>None.</p>` : html`<div class="scroll"><table><thead><tr><th>Item</th><th>Day</th><th>From</th><th>To</th><th class="num">Amount</th><th>Run</th></tr></thead><tbody>${r.healed.map((h) => html`<tr><td>${h.itemKind} ${h.itemId}</td><td>${h.day}</td><td>${h.from ?? '—'}</td><td>${h.to}</td><td class="num">${baht(h.amount)}</td><td>${h.runId}</td></tr>`)}</tbody></table></div>`}
<h2>Ledger check at the end of ${r.ledger.date}</h2>
<table><tbody>
<tr><td>Gateway receivable (trial balance)</td><td class="num">${baht(r.ledger.receivable)}</td></tr>
<tr><td>Paid orders</td><td class="num">${baht(r.ledger.expected.paidOrders)}</td></tr>
<tr><td>+ subscription charges</td><td class="num">${baht(r.ledger.expected.charges)}</td></tr>
<tr><td>− refunds</td><td class="num">${baht(r.ledger.expected.refunds)}</td></tr>
<tr><th>= expected from the items</th><th class="num">${baht(r.ledger.expected.total)}</th></tr>
<tr><td>${diff === 0n ? 'The ledger agrees with the items' : 'DIFFERENCE: the ledger does not agree with the items'}</td><td class="num">${baht(diff)}</td></tr>
</tbody></table>
<h2>Sources</h2>
<p class="muted">Log position ${r.sources.logPosition ?? '(empty log)'}; runs: ${r.sources.runs.map((s) => `${s.runId} (${s.stream}, up to ${s.lastEventPosition})`).join('; ') || 'none'}.</p>
</main>
<script>${raw(lib.uplotJs.body.replace(/<\/script/gi, '<\\/script'))}</script>
<script>${raw(CHARTS_JS)}</script>
</body></html>`
  return documentText(page)
}
