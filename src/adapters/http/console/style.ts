import { html, jsonScriptData, type Html } from './html.ts'
import type { ChartSpec } from './assets.ts'

/* The look shared by the console and the HTML report: one stylesheet, verdict badges, charts. */

export const STYLESHEET = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #ffffff; --soft: #f6f8fa; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans Thai", sans-serif; color: var(--ink); background: var(--bg); }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--soft); }
header.top .brand { font-weight: 700; }
header.top nav { display: flex; flex-wrap: wrap; gap: .25rem .8rem; }
header.top form { margin-left: auto; }
main { padding: 1rem; max-width: 1200px; margin: 0 auto; }
h1 { font-size: 1.35rem; margin: .2rem 0 .8rem; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
a { color: var(--accent); }
.muted { color: var(--muted); }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; max-width: 100%; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
.badge { display: inline-block; padding: .05rem .45rem; border-radius: .6rem; font-size: .85rem; font-weight: 600; border: 1px solid transparent; white-space: nowrap; }
.v-reconciled { background: #dafbe1; color: #0f5323; border-color: #4ac26b; }
.v-reconciled_with_pending { background: #ddf4ff; color: #0a3069; border-color: #54aeff; }
.v-breaks { background: #ffebe9; color: #82071e; border-color: #ff8182; }
.v-incomplete { background: #fff8c5; color: #633c01; border-color: #d4a72c; }
.v-not_reconciled { background: #f6f8fa; color: #57606a; border-color: #d0d7de; }
.calendar { display: grid; grid-template-columns: repeat(7, minmax(0, 1fr)); gap: 3px; }
.calendar .dow { font-size: .75rem; color: var(--muted); text-align: center; }
.calendar .day { min-height: 3.6rem; border: 1px solid var(--line); border-radius: 4px; padding: 2px 3px; font-size: .75rem; overflow: hidden; }
.calendar .day .n { font-weight: 700; }
.calendar .day .badge { font-size: .62rem; padding: 0 .15rem; white-space: nowrap; display: inline-block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; border-radius: 3px; }
.calendar .day .wd { display: none; }
td, th { overflow-wrap: anywhere; }
td.num, th.num, .money, .badge, time { overflow-wrap: normal; }
span.day, .money { white-space: nowrap; }
caption { text-align: left; font-weight: 600; padding: .3rem 0; }
.headline { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 1fr); gap: .6rem; margin-bottom: 1rem; }
.headline .card h2 { margin: 0 0 .4rem; font-size: 1.1rem; }
.totals { display: grid; grid-template-columns: repeat(auto-fit, minmax(9.5rem, 1fr)); gap: .3rem .8rem; margin: .3rem 0; }
.totals div { display: flex; flex-direction: column; }
.totals dt { font-size: .8rem; color: var(--muted); }
.totals dd { margin: 0; font-weight: 700; font-size: 1.05rem; }
tr.differs th, tr.differs td { background: #fff1e5; }
tr.differs th::after { content: " (differs)"; font-weight: 600; color: #82071e; }
.sentence { font-size: 1.05rem; font-weight: 600; }
.guidance { border-left: 4px solid var(--accent); padding: .2rem .7rem; margin: .5rem 0; background: var(--soft); }
.guidance p { margin: .2rem 0; }
details > summary { cursor: pointer; color: var(--accent); }
dl.summary { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2rem .9rem; margin: .3rem 0; }
dl.summary dt { color: var(--muted); }
dl.summary dd { margin: 0; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: .6rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .7rem; }
.card .big { font-size: 1.3rem; font-weight: 700; }
.views { display: grid; grid-template-columns: 1fr 1fr; gap: .6rem; }
.views > div { border: 1px solid var(--line); border-radius: 6px; padding: .4rem .6rem; min-width: 0; }
.break { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; margin: .7rem 0; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--soft); padding: .5rem; border-radius: 4px; font-size: .8rem; margin: .3rem 0; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem .8rem; align-items: end; }
form.filters label, form.ack label { display: flex; flex-direction: column; font-size: .85rem; }
input, select, button, textarea { font: inherit; padding: .3rem .4rem; max-width: 100%; }
button { cursor: pointer; }
.chart { margin: .5rem 0 1rem; }
.chart-canvas { width: 100%; min-height: 60px; }
.error { color: #82071e; }
.notice { border-left: 4px solid var(--line); padding: .2rem .7rem; }
.timeline li { margin: .5rem 0; }
@media (max-width: 640px) {
  main { padding: .6rem; }
  .views { grid-template-columns: 1fr; }
  .headline { grid-template-columns: 1fr; }
  th, td { padding: .25rem .3rem; font-size: .85rem; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  table.stack, table.stack tbody, table.stack tr { display: block; width: 100%; }
  table.stack tr { border: 1px solid var(--line); border-radius: 6px; margin: .45rem 0; padding: .15rem .45rem; }
  table.stack td, table.stack th[scope="row"] { display: flex; justify-content: space-between; align-items: baseline; gap: .8rem; border: 0; text-align: right; background: none; padding: .15rem 0; }
  table.stack td::before, table.stack th[scope="row"]::before { content: attr(data-label); font-weight: 600; color: var(--muted); text-align: left; flex: 0 0 auto; max-width: 45%; }
  table.stack td[colspan] { display: block; text-align: left; }
  table.stack td[colspan]::before { content: none; }
  tr.differs { background: #fff1e5; }
  .calendar { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .calendar .dow, .calendar .lead { display: none; }
  .calendar .day { min-height: 0; font-size: .8rem; }
  .calendar .day .wd { display: inline; }
  .calendar .day .badge { font-size: .75rem; }
  dl.summary { grid-template-columns: minmax(0, 1fr); }
  dl.summary dd { margin-bottom: .3rem; }
}
@media print {
  header.top nav, header.top form, form, .no-print { display: none !important; }
  body { font-size: 11pt; }
  .scroll { overflow: visible; }
  a { color: inherit; text-decoration: none; }
  .break, .card, table { break-inside: avoid; }
}
`

const VERDICT_LABELS: Readonly<Record<string, string>> = {
  reconciled: 'reconciled',
  reconciled_with_pending: 'reconciled, pending',
  breaks: 'breaks',
  incomplete: 'incomplete',
  not_reconciled: 'not reconciled',
}

/** A verdict as colour and words (never colour alone). */
export const verdictBadge = (verdict: string | null): Html => {
  const v = verdict ?? 'not_reconciled'
  return html`<span class="badge v-${/^[a-z_]+$/.test(v) ? v : 'not_reconciled'}">${VERDICT_LABELS[v] ?? v}</span>`
}

/** A chart drawn by the charts script from its data; `fallback` is what shows without JavaScript (a table). */
export const chartBlock = (id: string, spec: ChartSpec, fallback: Html): Html =>
  html`<figure class="chart" id="${id}"><figcaption>${spec.title}</figcaption><div class="chart-canvas"></div><script type="application/json" class="chart-data">${jsonScriptData(spec)}</script><noscript>${fallback}</noscript></figure>`

/** Unix seconds of a Bangkok date's midnight. */
export const bangkokDaySeconds = (day: string): number => Math.floor(Date.parse(`${day}T00:00:00+07:00`) / 1000)
