import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { parseCalendarDate, bangkokDateOf, formatCalendarDate } from '../../../domain/bangkok-time.ts'
import { currencyTotals, type BalanceRow } from '../../../domain/ledger/report.ts'
import { trialBalanceCsv } from '../../report/csv.ts'
import { normalSideOf } from '../../../domain/ledger/accounts.ts'
import { readTrialBalanceAsOf, readDailyBalances } from '../../../projections/ledger/as-of.ts'
import { readTrialBalance } from '../../../projections/ledger/reads.ts'
import { addDays } from '../../../domain/subscription-schedule.ts'
import type { ConsoleContext } from './deps.ts'
import { pageSession } from './guard.ts'
import { html } from './html.ts'
import { asOfForm, requestAsOf } from './item.ts'
import { baht, CONSOLE, layout, messagePage, queryString, sendPage } from './layout.ts'
import { bangkokDaySeconds, chartBlock } from './style.ts'
import { stackTable } from './table.ts'

/* The ledger: the trial balance at the end of a Bangkok date (now, or as of an instant or log position), each account's daily balance over the 31 days before it as a chart, and the CSV. */

const COLORS = ['#0969da', '#1a7f37', '#cf222e', '#8250df', '#bf8700', '#57606a']

const dateParam = (request: FastifyRequest): string | null | undefined => {
  const q = request.query
  const d = t.UnknownRecord.is(q) ? q['date'] : undefined
  if (d === undefined || d === '') return null
  return typeof d === 'string' && E.isRight(parseCalendarDate(d)) ? d : undefined
}

export const registerLedger = (app: FastifyInstance, c: ConsoleContext): void => {
  const balancesOf = async (date: string | null, asOf: Awaited<ReturnType<typeof requestAsOf>>): Promise<ReadonlyArray<BalanceRow>> =>
    asOf?.requested === true
      ? readTrialBalanceAsOf({ store: c.store, pool: c.readModels.pool }, c.readModels.schema, { date, currency: null, channel: null }, asOf.asOf.position)
      : readTrialBalance(c.readModels, { date, currency: null, channel: null })

  /** The session, date, as-of and trial balance a ledger request asks for; undefined once a refusal is sent. */
  const ledgerRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = pageSession(c.sessions, request, reply, 'read', c.now())
    if (session === undefined) return undefined
    const date = dateParam(request)
    if (date === undefined) {
      void messagePage(reply, 400, session, 'Bad request', html`<p>date must be yyyy-MM-dd (Asia/Bangkok).</p>`)
      return undefined
    }
    const at = await requestAsOf(c, request, reply, session)
    if (at === undefined) return undefined
    return { session, date, at, rows: await balancesOf(date, at) }
  }

  app.get(`${CONSOLE}/ledger`, async (request, reply) => {
    const asked = await ledgerRequest(request, reply)
    if (asked === undefined) return reply
    const { session, date, at, rows } = asked
    const totals = currencyTotals(rows)
    const end = date ?? formatCalendarDate(bangkokDateOf(c.now()))
    const endDate = parseCalendarDate(end)
    const start = E.isRight(endDate) ? formatCalendarDate(addDays(endDate.right, -30)) : end
    const daily = await readDailyBalances({ store: c.store, pool: c.readModels.pool }, c.readModels.schema, start, end, at.requested ? { position: at.asOf.position } : null)
    const accounts = [...new Set(daily.filter((d) => d.currency === 'THB').map((d) => d.account))]
    const days = [...new Set(daily.map((d) => d.date))].sort()
    const chart = chartBlock(
      'balances-chart',
      {
        title: `Daily closing balance per account, ${start} to ${end} (Bangkok days; THB, debits minus credits)`,
        yLabel: 'baht',
        xs: days.map(bangkokDaySeconds),
        series: accounts.map((a, i) => ({ label: a, color: COLORS[i % COLORS.length] ?? '#000', values: days.map((d) => Number(daily.find((x) => x.account === a && x.date === d)?.closing ?? 0n) / 100) })),
      },
      html`<p class="muted">The chart needs JavaScript; the trial balance above is the end of the period.</p>`,
    )
    const asOfValue = t.UnknownRecord.is(request.query) && typeof request.query['as_of'] === 'string' && request.query['as_of'] !== '' ? request.query['as_of'] : undefined
    const csvHref = `${CONSOLE}/ledger.csv${queryString({ date, as_of: asOfValue })}`
    const body = html`<h1>Ledger</h1>
<form class="filters" method="get" action="${CONSOLE}/ledger"><label>At the end of (Bangkok date)<input type="date" name="date" value="${date ?? ''}"></label>${asOfValue === undefined ? '' : html`<input type="hidden" name="as_of" value="${asOfValue}">`}<button>Show</button></form>
${asOfForm(`${CONSOLE}/ledger`, asOfValue)}
<p class="muted">${date === null ? 'Every entry' : `Entries posted up to the end of ${date} (Asia/Bangkok)`}${at.requested ? `, as the ledger stood at ${at.asOf.requested} (log position ${at.asOf.position ?? 'empty'})` : ''}. A balance is debits minus credits.</p>
<h2>Trial balance</h2>
${stackTable({
  id: 'trial-balance',
  columns: [{ label: 'Account' }, { label: 'Normal' }, { label: 'Channel' }, { label: 'Currency' }, { label: 'Debit', money: true }, { label: 'Credit', money: true }, { label: 'Balance', money: true }],
  empty: 'No ledger entries.',
  rows: rows.map((r) => [{ html: r.account, header: true }, normalSideOf(r.account) ?? '', r.channel, r.currency, baht(r.debit), baht(r.credit), baht(r.debit - r.credit)]),
  foot: totals.map((x) => [{ html: 'Total', header: true }, '', '', x.currency, baht(x.debit), baht(x.credit), x.debit === x.credit ? 'balanced' : html`<span class="error">NOT balanced</span>`]),
})}
<p><a href="${csvHref}" download>Download CSV</a></p>
<h2>Daily balances</h2>
${chart}`
    return sendPage(reply, 200, layout({ title: 'Ledger', session, body, charts: true }))
  })

  app.get(`${CONSOLE}/ledger.csv`, async (request, reply) => {
    const asked = await ledgerRequest(request, reply)
    if (asked === undefined) return reply
    const { date, rows } = asked
    const csv = trialBalanceCsv(rows)
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="trial-balance-${date ?? 'all'}.csv"`)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(csv)
  })
}
