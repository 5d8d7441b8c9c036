import type { FastifyInstance } from 'fastify'
import { bangkokDateOf, daysInMonth, formatCalendarDate } from '../../../domain/bangkok-time.ts'
import { AGE_BUCKETS } from '../../../domain/reconciliation/ageing.ts'
import { BREAK_CLASSES } from '../../../domain/reconciliation/break-class.ts'
import { readRelayStatuses } from '../../../jobs/relay/relay-status.ts'
import { openBreaksByClassAndAge } from '../../../projections/reconciliation/console-reads.ts'
import { PROJECTIONS, projectionStatus } from '../../../projections/index.ts'
import { readDailyBalances } from '../../../projections/ledger/as-of.ts'
import { readDays } from '../../../projections/reconciliation/reads.ts'
import { withReadModelsAsOf } from '../../../projections/as-of.ts'
import { reconciliationProjection } from '../../../projections/reconciliation/projection.ts'
import type { ConsoleContext } from './deps.ts'
import { asOfForm, requestAsOf } from './item.ts'
import { pageSession } from './guard.ts'
import { html, type Html } from './html.ts'
import { baht, CONSOLE, layout, messagePage, queryString, sendPage } from './layout.ts'
import { bangkokDaySeconds, chartBlock, verdictBadge } from './style.ts'

/* The overview: a month calendar of daily verdicts, open breaks by class and age, the money at stake, the receivable over the month, the lags. */

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/

const monthOf = (text: string | undefined, now: Date): { readonly year: number; readonly month: number } | null => {
  if (text === undefined || text === '') {
    const d = bangkokDateOf(now)
    return { year: d.year, month: d.month }
  }
  const m = MONTH.exec(text)
  return m === null ? null : { year: Number(m[1]), month: Number(m[2]) }
}

const pad = (n: number): string => String(n).padStart(2, '0')
const shift = (m: { year: number; month: number }, by: number): string => {
  const i = m.year * 12 + (m.month - 1) + by
  return `${String(Math.floor(i / 12))}-${pad((i % 12) + 1)}`
}

const text = (o: Readonly<Record<string, unknown>>, k: string): string | null => (typeof o[k] === 'string' ? o[k] : null)
const num = (o: Readonly<Record<string, unknown>>, k: string): number => (typeof o[k] === 'number' ? o[k] : 0)

export const registerOverview = (app: FastifyInstance, c: ConsoleContext): void => {
  app.get(CONSOLE, async (request, reply) => {
    const now = c.now()
    const session = pageSession(c.sessions, request, reply, 'read', now)
    if (session === undefined) return reply
    const q = typeof request.query === 'object' && request.query !== null ? (request.query as Readonly<Record<string, unknown>>) : {}
    const at = await requestAsOf(c, request, reply, session)
    if (at === undefined) return reply
    // The calendar of a past moment shows that moment's month and "today".
    const ref = at.requested ? at.asOf.instant : now
    const month = monthOf(typeof q['month'] === 'string' ? q['month'] : undefined, ref)
    if (month === null) return messagePage(reply, 400, session, 'Bad request', html`<p>month must be yyyy-MM, such as 2026-11.</p>`)
    const first = `${String(month.year)}-${pad(month.month)}-01`
    const last = `${String(month.year)}-${pad(month.month)}-${pad(daysInMonth(month.year, month.month))}`
    const rm = c.readModels
    const deps = { store: c.store, pool: rm.pool }
    // As of a past moment: the reconciliation read models rebuilt from the log up to it (rolled back after).
    const reconciliation = at.requested
      ? await withReadModelsAsOf(deps, [reconciliationProjection], at.asOf.position, async (past) =>
          Promise.all([readDays({ pool: past.db, schema: past.schema }, c.merchantId, first, last), openBreaksByClassAndAge(past, c.merchantId, at.asOf.instant)]),
        )
      : await Promise.all([readDays(rm, c.merchantId, first, last), openBreaksByClassAndAge({ db: rm.pool, schema: rm.schema }, c.merchantId, now)])
    const [days, cells] = reconciliation
    const [balances, lags, relay] = await Promise.all([
      readDailyBalances(deps, rm.schema, first, last, at.requested ? { position: at.asOf.position } : null),
      projectionStatus(c.store, rm.pool, rm.schema, PROJECTIONS, c.now),
      // The relay's own rows (checkpoint, heartbeat, lock), whatever this process's Kafka settings.
      readRelayStatuses(deps, rm.schema, c.relayTopic, c.now),
    ])
    const byDay = new Map(days.map((d) => [text(d, 'day') ?? '', d]))
    const today = formatCalendarDate(bangkokDateOf(ref))
    const lead = (new Date(Date.UTC(month.year, month.month - 1, 1)).getUTCDay() + 6) % 7
    const cellsHtml: Html[] = []
    for (let i = 0; i < lead; i++) cellsHtml.push(html`<div aria-hidden="true"></div>`)
    for (let d = 1; d <= daysInMonth(month.year, month.month); d++) {
      const day = `${String(month.year)}-${pad(month.month)}-${pad(d)}`
      const row = byDay.get(day)
      const open = row === undefined ? 0 : num(row, 'open_breaks_now')
      cellsHtml.push(
        html`<div class="day" data-day="${day}" data-verdict="${row === undefined ? 'none' : (text(row, 'verdict') ?? 'none')}"><span class="n">${d}</span>${day === today ? html` <span class="muted">today</span>` : ''}<br>${
          row === undefined ? html`<span class="muted">${day > today ? '' : 'no run'}</span>` : html`<a href="${CONSOLE}/breaks${queryString({ date: day, status: 'all' })}">${verdictBadge(text(row, 'verdict'))}</a>${open > 0 ? html`<br>${open} open` : ''}`
        }</div>`,
      )
    }
    const totalOpen = cells.reduce((n, x) => n + x.count, 0)
    const totalAtStake = cells.reduce((n, x) => n + x.atStake, 0n)
    const classes = BREAK_CLASSES.filter((k) => cells.some((x) => x.class === k))
    const cellOf = (k: string, b: string) => cells.find((x) => x.class === k && x.bucket === b)
    const receivable = balances.filter((b) => b.account === 'gateway_receivable' && b.currency === 'THB' && b.date <= today)
    const dayList = receivable.map((b) => b.date)
    const chart = chartBlock(
      'receivable-chart',
      { title: 'Gateway receivable at the end of each day (baht)', yLabel: 'baht', xs: dayList.map(bangkokDaySeconds), series: [{ label: 'gateway receivable', color: '#0969da', values: receivable.map((b) => Number(b.closing) / 100) }] },
      html`<div class="scroll"><table><thead><tr><th>Day</th><th class="num">Receivable</th></tr></thead><tbody>${receivable.map((b) => html`<tr><td>${b.date}</td><td class="num">${baht(b.closing)}</td></tr>`)}</tbody></table></div>`,
    )
    const asOfValue = at.requested ? at.asOf.requested : undefined
    const body = html`<h1>Overview</h1>
${asOfForm(CONSOLE, asOfValue)}
${at.requested ? html`<p class="muted" id="as-of">As of ${at.asOf.requested}: the log up to position ${at.asOf.position ?? '(empty)'}; ages at ${at.asOf.instant.toISOString()}. The lag below is now.</p>` : ''}
<div class="cards">
<div class="card"><div class="muted">Open breaks</div><div class="big" id="open-breaks">${totalOpen.toLocaleString('en-US')}</div><a href="${CONSOLE}/breaks?status=open">see them</a></div>
<div class="card"><div class="muted">At stake (THB)</div><div class="big" id="at-stake">${baht(totalAtStake)}</div></div>
<div class="card"><div class="muted">Today (${today})</div><div class="big">${verdictBadge(byDay.has(today) ? text(byDay.get(today) ?? {}, 'verdict') : null)}</div></div>
</div>
<h2>Daily verdicts, ${String(month.year)}-${pad(month.month)}</h2>
<p><a href="${CONSOLE}${queryString({ month: shift(month, -1), as_of: asOfValue })}">← ${shift(month, -1)}</a> · <a href="${CONSOLE}${queryString({ month: shift(month, 1), as_of: asOfValue })}">${shift(month, 1)} →</a></p>
<div class="calendar" id="calendar">${['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => html`<div class="dow">${d}</div>`)}${cellsHtml}</div>
<h2>Open breaks by class and age (days)</h2>
${
  classes.length === 0
    ? html`<p>No break is open.</p>`
    : html`<div class="scroll"><table id="ageing"><thead><tr><th>Class</th>${AGE_BUCKETS.map((b) => html`<th class="num">${b}</th>`)}<th class="num">At stake</th></tr></thead><tbody>${classes.map(
        (k) => html`<tr><td><a href="${CONSOLE}/breaks${queryString({ class: k, status: 'open' })}">${k}</a></td>${AGE_BUCKETS.map((b) => html`<td class="num">${cellOf(k, b)?.count ?? 0}</td>`)}<td class="num">${baht(cells.filter((x) => x.class === k).reduce((n, x) => n + x.atStake, 0n))}</td></tr>`,
      )}</tbody></table></div>`
}
<h2>Receivable</h2>
${chart}
<h2>Lag</h2>
<div class="scroll"><table><thead><tr><th>Read model</th><th>State</th><th class="num">Events behind</th><th class="num">Seconds behind</th></tr></thead><tbody>
${lags.map((l) => html`<tr><td>${l.name}</td><td>${l.state}</td><td class="num">${l.eventsBehindCapped ? '≥ ' : ''}${l.eventsBehind.toLocaleString('en-US')}</td><td class="num">${l.secondsBehind.toFixed(1)}</td></tr>`)}
${relay.map((r) => html`<tr data-relay-topic="${r.topic}"><td>Kafka relay (${r.topic})</td>${r.state === 'never_ran' ? html`<td colspan="3">never ran against this database</td>` : html`<td>${r.state}</td><td class="num">${r.eventsBehindCapped ? '≥ ' : ''}${r.eventsBehind.toLocaleString('en-US')}</td><td class="num">${r.secondsBehind.toFixed(1)}</td>`}</tr>`)}
</tbody></table></div>`
    return sendPage(reply, 200, layout({ title: 'Overview', session, body, charts: true }))
  })
}
