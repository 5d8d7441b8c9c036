import type { FastifyInstance } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import { bangkokDateOf, daysInMonth, formatCalendarDate, parseCalendarDate } from '../../../domain/bangkok-time.ts'
import type { DayFigures } from '../../../domain/reconciliation/report/model.ts'
import { countText } from '../../../domain/reconciliation/report/people.ts'
import { addDays } from '../../../domain/subscription-schedule.ts'
import { readDayFigures } from '../../../projections/reconciliation/report.ts'
import { AGE_BUCKETS } from '../../../domain/reconciliation/ageing.ts'
import { BREAK_CLASSES } from '../../../domain/reconciliation/break-class.ts'
import { readRelayStatuses } from '../../../jobs/relay/relay-status.ts'
import { openBreaksByClassAndAge } from '../../../projections/reconciliation/console-reads.ts'
import { PROJECTIONS, projectionStatus } from '../../../projections/index.ts'
import { readDailyBalances } from '../../../projections/ledger/as-of.ts'
import { readDays } from '../../../projections/reconciliation/reads.ts'
import { withReadModelsAsOf, type ReadModelsAt } from '../../../projections/as-of.ts'
import { reconciliationProjection } from '../../../projections/reconciliation/projection.ts'
import type { ConsoleContext } from './deps.ts'
import { asOfForm, requestAsOf } from './item.ts'
import { pageSession } from './guard.ts'
import { html, type Html } from './html.ts'
import { baht, CONSOLE, layout, messagePage, queryString, sendPage } from './layout.ts'
import { bangkokDaySeconds, chartBlock, verdictBadge } from './style.ts'
import { stackTable } from './table.ts'

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

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
const weekdayOf = (day: string): string => WEEKDAYS[(new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7] ?? ''

const dayBefore = (day: string): string => {
  const d = parseCalendarDate(day)
  return E.isRight(d) ? formatCalendarDate(addDays(d.right, -1)) : day
}

/** The headline: how the last complete Bangkok business day closed, with its totals; today in progress beside it. */
const headline = (o: { readonly day: string; readonly verdict: string | null; readonly figures: DayFigures | null; readonly openNow: number; readonly today: string; readonly todayVerdict: string | null }): Html => {
  const f = o.figures
  const total = (label: string, id: string, count: number | null, amount: bigint | null): Html =>
    html`<div><dt>${label}</dt><dd id="${id}">${count === null ? '' : countText(count)}${count !== null && amount !== null ? html` · ` : ''}${amount === null ? '' : html`<span class="money">${baht(amount)}</span>`}</dd></div>`
  return html`<section class="headline" aria-label="How the last business day closed">
<div class="card" id="headline" data-day="${o.day}" data-verdict="${o.verdict ?? 'not_reconciled'}">
<h2>Yesterday, ${weekdayOf(o.day)} ${o.day} (Bangkok business day): ${verdictBadge(o.verdict)}</h2>
${
  f === null
    ? html`<p>No reconciliation run covered ${o.day}: run <code>satang reconcile</code> (it reconciles yesterday by default).</p>`
    : html`<dl class="totals">
${total('Payments matched', 'payments-matched', f.payments.matched.count, f.payments.matched.amount)}
${total('Refunds matched', 'refunds-matched', f.refunds.matched.count, f.refunds.matched.amount)}
${total('Healed', 'healed', f.outcomes.healed.count, f.outcomes.healed.amount)}
${total('Open breaks', 'day-open-breaks', o.openNow, null)}
${total('Money at stake', 'day-at-stake', null, f.atStake)}
</dl>`
}
<a href="${CONSOLE}/breaks${queryString({ date: o.day, status: 'all' })}">the breaks of ${o.day}</a></div>
<div class="card" id="today" data-day="${o.today}"><h2>Today, ${o.today}</h2><p><span class="badge v-not_reconciled">in progress</span></p><p class="muted">${o.todayVerdict === null ? 'Not reconciled yet: the day is not over.' : html`A run so far says ${verdictBadge(o.todayVerdict)}; the day is not over.`}</p></div>
</section>`
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
    const today = formatCalendarDate(bangkokDateOf(ref))
    const yesterday = dayBefore(today)
    const readHeadline = async (past: ReadModelsAt) => {
      const rows = await readDays({ pool: past.db, schema: past.schema }, c.merchantId, yesterday, today)
      const figures = await readDayFigures(past, c.store, c.merchantId, yesterday, at.requested ? at.asOf.position : null)
      return { row: rows.find((r) => text(r, 'day') === yesterday), todayRow: rows.find((r) => text(r, 'day') === today), figures }
    }
    // As of a past moment: the reconciliation read models rebuilt from the log up to it (rolled back after).
    const reconciliation = at.requested
      ? await withReadModelsAsOf(deps, [reconciliationProjection], at.asOf.position, async (past) =>
          Promise.all([readDays({ pool: past.db, schema: past.schema }, c.merchantId, first, last), openBreaksByClassAndAge(past, c.merchantId, at.asOf.instant), readHeadline(past)]),
        )
      : await Promise.all([readDays(rm, c.merchantId, first, last), openBreaksByClassAndAge({ db: rm.pool, schema: rm.schema }, c.merchantId, now), readHeadline({ db: rm.pool, schema: rm.schema })])
    const [days, cells, head] = reconciliation
    const [balances, lags, relay] = await Promise.all([
      readDailyBalances(deps, rm.schema, first, last, at.requested ? { position: at.asOf.position } : null),
      projectionStatus(c.store, rm.pool, rm.schema, PROJECTIONS, c.now),
      // The relay's own rows (checkpoint, heartbeat, lock), whatever this process's Kafka settings.
      readRelayStatuses(deps, rm.schema, c.relayTopic, c.now),
    ])
    const byDay = new Map(days.map((d) => [text(d, 'day') ?? '', d]))

    const lead = (new Date(Date.UTC(month.year, month.month - 1, 1)).getUTCDay() + 6) % 7
    const cellsHtml: Html[] = []
    for (let i = 0; i < lead; i++) cellsHtml.push(html`<div class="lead" aria-hidden="true"></div>`)
    for (let d = 1; d <= daysInMonth(month.year, month.month); d++) {
      const day = `${String(month.year)}-${pad(month.month)}-${pad(d)}`
      const row = byDay.get(day)
      const open = row === undefined ? 0 : num(row, 'open_breaks_now')
      cellsHtml.push(
        html`<div class="day" data-day="${day}" data-verdict="${row === undefined ? 'none' : (text(row, 'verdict') ?? 'none')}"><span class="wd">${weekdayOf(day)} </span><span class="n">${d}</span>${day === today ? html` <span class="muted">today</span>` : ''}<br>${
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
      { title: 'Gateway receivable at the end of each Bangkok day (THB)', yLabel: 'baht', xs: dayList.map(bangkokDaySeconds), series: [{ label: 'gateway receivable', color: '#0969da', values: receivable.map((b) => Number(b.closing) / 100) }] },
      stackTable({ columns: [{ label: 'Day (Bangkok)' }, { label: 'Receivable', money: true }], rows: receivable.map((b) => [{ html: b.date, header: true }, baht(b.closing)]) }),
    )
    const asOfValue = at.requested ? at.asOf.requested : undefined
    const body = html`<h1>Overview</h1>
${asOfForm(CONSOLE, asOfValue)}
${at.requested ? html`<p class="muted" id="as-of">As of ${at.asOf.requested}: the log up to position ${at.asOf.position ?? '(empty)'}; ages at ${at.asOf.instant.toISOString()}. The lag below is now.</p>` : ''}
${headline({ day: yesterday, verdict: head.row === undefined ? null : text(head.row, 'verdict'), figures: head.figures, openNow: head.row === undefined ? 0 : num(head.row, 'open_breaks_now'), today, todayVerdict: head.todayRow === undefined ? null : text(head.todayRow, 'verdict') })}
<div class="cards">
<div class="card"><div class="muted">Open breaks, every day</div><div class="big" id="open-breaks">${totalOpen.toLocaleString('en-US')}</div><a href="${CONSOLE}/breaks?status=open">see them</a></div>
<div class="card"><div class="muted">At stake in them</div><div class="big money" id="at-stake">${baht(totalAtStake)}</div></div>
</div>
<h2>Daily verdicts, ${String(month.year)}-${pad(month.month)}</h2>
<p><a href="${CONSOLE}${queryString({ month: shift(month, -1), as_of: asOfValue })}">← ${shift(month, -1)}</a> · <a href="${CONSOLE}${queryString({ month: shift(month, 1), as_of: asOfValue })}">${shift(month, 1)} →</a></p>
<div class="calendar" id="calendar">${['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => html`<div class="dow">${d}</div>`)}${cellsHtml}</div>
<h2>Open breaks by class and age</h2>
${
  classes.length === 0
    ? html`<p>No break is open.</p>`
    : stackTable({
        id: 'ageing',
        columns: [{ label: 'Class' }, ...AGE_BUCKETS.map((b) => ({ label: `${b} days`, num: true })), { label: 'At stake', money: true }],
        rows: classes.map((k) => [
          { html: html`<a href="${CONSOLE}/breaks${queryString({ class: k, status: 'open' })}">${k}</a>`, header: true },
          ...AGE_BUCKETS.map((b) => countText(cellOf(k, b)?.count ?? 0)),
          baht(cells.filter((x) => x.class === k).reduce((n, x) => n + x.atStake, 0n)),
        ]),
      })
}
<h2>Receivable</h2>
${chart}
<h2>Lag</h2>
${stackTable({
  id: 'lag',
  columns: [{ label: 'Read model' }, { label: 'State' }, { label: 'Events behind', num: true }, { label: 'Seconds behind', num: true }],
  rows: [
    ...lags.map((l) => [{ html: l.name, header: true }, l.state, `${l.eventsBehindCapped ? '≥ ' : ''}${l.eventsBehind.toLocaleString('en-US')}`, l.secondsBehind.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })]),
    // The relay's own rows (checkpoint, heartbeat, lock), whatever this process's Kafka settings.
    ...relay.map((r) => [
      { html: `Kafka relay (${r.topic})`, header: true },
      r.state === 'never_ran' ? 'never ran against this database' : r.state,
      r.state === 'never_ran' ? '—' : `${r.eventsBehindCapped ? '≥ ' : ''}${r.eventsBehind.toLocaleString('en-US')}`,
      r.state === 'never_ran' ? '—' : r.secondsBehind.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }),
    ]),
  ],
})}`
    return sendPage(reply, 200, layout({ title: 'Overview', session, body, charts: true }))
  })
}
