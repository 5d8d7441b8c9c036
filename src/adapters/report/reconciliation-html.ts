import { bahtText, bangkokText, countText, utcText } from '../../domain/reconciliation/report/people.ts'
import { ageingOf, ledgerDifference, periodVerdict, sumFigures, type DayFigures, type Figure, type ReconciliationReport } from '../../domain/reconciliation/report/model.ts'
import { CHARTS_JS, chartLibrary } from '../http/console/assets.ts'
import { documentText, html, raw, type Html } from '../http/console/html.ts'
import { STYLESHEET, bangkokDaySeconds, chartBlock, verdictBadge } from '../http/console/style.ts'
import { stackTable, type Cell, type Column } from '../http/console/table.ts'

/**
 * The reconciliation report as one self-contained HTML page (`--html FILE`): styles, the chart library
 * and the data inline, no request to anywhere when it opens; printable. Every value is escaped.
 */

const baht = (s: bigint): string => bahtText(s)
const toNumber = (s: bigint): number => Number(s) / 100

const time = (d: Date): Html => html`<time datetime="${d.toISOString()}" title="${utcText(d)}">${bangkokText(d)}</time>`

/** The day table's figure columns: payments and refunds apart for matched, every item for the rest. */
const FIGURES: ReadonlyArray<{ readonly label: string; readonly of: (f: DayFigures) => Figure }> = [
  { label: 'Payments matched', of: (f) => f.payments.matched },
  { label: 'Refunds matched', of: (f) => f.refunds.matched },
  { label: 'Healed', of: (f) => f.outcomes.healed },
  { label: 'Pending', of: (f) => f.outcomes.pending },
  { label: 'Unchecked', of: (f) => f.outcomes.unchecked },
  { label: 'Acknowledged', of: (f) => f.outcomes.acknowledged },
  { label: 'Breaks', of: (f) => f.outcomes.break },
]


// The days table has ten columns of counts and baht: denser than the others, so that it fits a 1280 px screen
// without scrolling sideways (console-screens.e2e, the report at 1280 px); below 640 px it becomes cards anyway.
const DAYS_STYLE = '#days { font-size: .82rem; } #days th, #days td { padding: .25rem .3rem; }'

export const reportHtml = (r: ReconciliationReport): string => {
  const lib = chartLibrary()
  const totals = sumFigures(r.days)
  const verdict = periodVerdict(r.days)
  const scope = r.from === r.to ? `business day ${r.from}` : `business days ${r.from} to ${r.to}`
  const chart = chartBlock(
    'amounts-chart',
    {
      title: 'Amounts per Bangkok day (THB)',
      yLabel: 'baht',
      xs: r.days.map((d) => bangkokDaySeconds(d.day)),
      series: [
        { label: 'payments matched', color: '#1a7f37', values: r.days.map((d) => toNumber(d.payments.matched.amount)) },
        { label: 'refunds matched', color: '#8250df', values: r.days.map((d) => toNumber(d.refunds.matched.amount)) },
        { label: 'healed', color: '#0969da', values: r.days.map((d) => toNumber(d.outcomes.healed.amount)) },
        { label: 'at stake', color: '#cf222e', values: r.days.map((d) => toNumber(d.atStake)) },
      ],
    },
    html`<p>The chart needs JavaScript; the table of days below holds the same figures.</p>`,
  )
  const cell = (f: Figure): Html => html`${countText(f.count)} · <span class="money">${baht(f.amount)}</span>`
  const dayColumns: ReadonlyArray<Column> = [{ label: 'Day (Bangkok)' }, { label: 'Verdict' }, ...FIGURES.map((x) => ({ label: x.label, num: true })), { label: 'At stake', money: true }, { label: 'Open now', num: true }]
  const dayRow = (label: string, verdictOf: string | null, f: DayFigures, open: number | null, header: boolean): ReadonlyArray<Cell> => [
    { html: html`<span class="day">${label}</span>`, header },
    verdictBadge(verdictOf),
    ...FIGURES.map((x) => cell(x.of(f))),
    baht(f.atStake),
    open === null ? '' : countText(open),
  ]
  const daysTable = stackTable({
    id: 'days',
    columns: dayColumns,
    rows: r.days.map((d) => dayRow(d.day, d.verdict, d, d.openBreaksNow, true)),
    foot: r.days.length > 1 ? [dayRow('Total', verdict, totals, null, true)] : [],
  })
  const classes = Object.entries(totals.classes).filter(([, c]) => c.count > 0)
  const ageing = ageingOf(r.openBreaks)
  const diff = ledgerDifference(r.ledger)
  const page = html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reconciliation report ${r.from}${r.from === r.to ? '' : ` to ${r.to}`}</title>
<style>${raw(lib.uplotCss.body)}${raw(STYLESHEET)}${raw(DAYS_STYLE)}</style></head>
<body><main>
<h1>Reconciliation report: ${scope}</h1>
<p>Merchant ${r.merchantId}. Verdict: ${verdictBadge(verdict)}. Days and times in Asia/Bangkok (UTC in each time's tooltip); amounts in baht, THB (satang in the JSON and CSV files); payments and refunds counted apart.</p>
<p class="muted">Generated ${time(r.generatedAt)}; as of ${time(r.asOf.instant)}${r.asOf.position === null ? '' : ` (log position ${r.asOf.position})`}.</p>
${chart}
<h2>Days</h2>
${daysTable}
<h2>Breaks by class</h2>
${classes.length === 0 ? html`<p>No break class was seen by the runs of these days.</p>` : stackTable({ columns: [{ label: 'Class' }, { label: 'Items', num: true }, { label: 'Amount', money: true }, { label: 'At stake', money: true }], rows: classes.map(([k, c]) => [{ html: k, header: true }, countText(c.count), baht(c.amount), baht(c.atStake)]) })}
<h2>Ageing of the breaks still open</h2>
${ageing.length === 0 ? html`<p>No break is open.</p>` : stackTable({ columns: [{ label: 'Class' }, { label: 'Age (days)' }, { label: 'Breaks', num: true }, { label: 'At stake', money: true }], rows: ageing.map((c) => [{ html: c.class, header: true }, c.bucket, countText(c.count), baht(c.atStake)]) })}
<h2>Open breaks (${r.openBreaks.length})</h2>
${r.openBreaks.length === 0 ? html`<p>None.</p>` : html`<div class="scroll">${stackTable({ columns: [{ label: 'Break' }, { label: 'Class' }, { label: 'Status' }, { label: 'Item' }, { label: 'Day' }, { label: 'At stake', money: true }, { label: 'Age', num: true }, { label: 'First seen' }, { label: 'Detail' }], rows: r.openBreaks.map((b) => [b.breakId, b.class, b.status, `${b.itemKind} ${b.itemId}`, b.day, baht(b.atStake), `${String(b.ageDays)} d`, time(b.firstSeenAt), b.detail]) })}</div>`}
<h2>Healed items (${r.healed.length})</h2>
${r.healed.length === 0 ? html`<p>None.</p>` : stackTable({ columns: [{ label: 'Item' }, { label: 'Day' }, { label: 'From' }, { label: 'To' }, { label: 'Amount', money: true }, { label: 'Healed at' }, { label: 'Run' }], rows: r.healed.map((h) => [`${h.itemKind} ${h.itemId}`, h.day, h.from ?? '—', h.to, baht(h.amount), time(h.healedAt), h.runId]) })}
<h2>Ledger check at the end of ${r.ledger.date}</h2>
<table id="ledger-check"><tbody>
<tr><td>Gateway receivable (trial balance)</td><td class="num money">${baht(r.ledger.receivable)}</td></tr>
<tr><td>Paid orders</td><td class="num money">${baht(r.ledger.expected.paidOrders)}</td></tr>
<tr><td>+ subscription charges</td><td class="num money">${baht(r.ledger.expected.charges)}</td></tr>
<tr><td>− refunds</td><td class="num money">${baht(r.ledger.expected.refunds)}</td></tr>
<tr><th scope="row">= expected from the items</th><th class="num money">${baht(r.ledger.expected.total)}</th></tr>
<tr><td>${diff === 0n ? 'The ledger agrees with the items' : 'DIFFERENCE: the ledger does not agree with the items'}</td><td class="num money">${baht(diff)}</td></tr>
</tbody></table>
<h2>Sources</h2>
<p class="muted">Log position ${r.sources.logPosition ?? '(empty log)'}; runs: ${r.sources.runs.map((s) => `${s.runId} (${s.stream}, up to ${s.lastEventPosition})`).join('; ') || 'none'}.</p>
</main>
<script>${raw(lib.uplotJs.body.replace(/<\/script/gi, '<\\/script'))}</script>
<script>${raw(CHARTS_JS)}</script>
</body></html>`
  return documentText(page)
}
