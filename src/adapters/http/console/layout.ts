import type { FastifyReply } from 'fastify'
import { bahtText, bangkokText, utcText } from '../../../domain/reconciliation/report/people.ts'
import { documentText, html, type Html } from './html.ts'
import type { ConsoleSession } from './session.ts'

/* The page shell of every console page, the headers every answer carries, and how times and amounts print. */

export const CONSOLE = '/console'

/** Scripts only from the console's own assets; no inline script, no frame, forms only to itself. */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

export type PageOptions = {
  readonly title: string
  readonly session: ConsoleSession | null
  readonly body: Html
  /** Loads the chart library and the charts script. */
  readonly charts?: boolean
}

export const layout = (o: PageOptions): string =>
  documentText(html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · satang console</title>
<link rel="stylesheet" href="${CONSOLE}/assets/console.css">
</head><body>
<header class="top"><span class="brand">satang</span>
${
  o.session === null
    ? ''
    : html`<nav><a href="${CONSOLE}">Overview</a><a href="${CONSOLE}/breaks?status=open">Breaks</a><a href="${CONSOLE}/ledger">Ledger</a></nav>
<form class="find" method="get" action="${CONSOLE}/find"><select name="kind" aria-label="kind"><option value="order">order</option><option value="refund">refund</option><option value="subscription">subscription</option></select> <input name="id" placeholder="id" aria-label="id" size="12" required> <button>Find</button></form>
<form method="post" action="${CONSOLE}/sign-out"><input type="hidden" name="csrf" value="${o.session.csrf}"><button>Sign out (${o.session.tokenName})</button></form>`
}
</header>
<main>
${o.body}
</main>
${o.charts === true ? html`<script src="${CONSOLE}/assets/uplot.js"></script><script src="${CONSOLE}/assets/charts.js"></script>` : ''}
</body></html>`)

/** Sends a page with the console's headers: no caching, no framing, no sniffing, no referrer to other sites. */
export const sendPage = (reply: FastifyReply, status: number, page: string): FastifyReply =>
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .send(page)

/** A simple page with a heading and a message (errors, refusals). */
export const messagePage = (reply: FastifyReply, status: number, session: ConsoleSession | null, title: string, message: Html): FastifyReply =>
  sendPage(reply, status, layout({ title, session, body: html`<h1>${title}</h1>${message}` }))

/** An instant in Bangkok wall time, labelled, with UTC in its tooltip and on a second line. */
export const bothTimes = (d: Date | null): Html =>
  d === null ? html`<span class="muted">—</span>` : html`<time datetime="${d.toISOString()}" title="${utcText(d)}">${bangkokText(d)}</time><br><span class="muted utc">${utcText(d)}</span>`

/** An instant in Bangkok wall time, labelled, UTC in its tooltip only (tables, sentences). */
export const bangkokTime = (d: Date | null): Html => (d === null ? html`<span class="muted">—</span>` : html`<time datetime="${d.toISOString()}" title="${utcText(d)}">${bangkokText(d)}</time>`)

/** Satang as a person reads baht: `฿1,234.56`. */
export const baht = (satang: bigint | number): string => bahtText(typeof satang === 'number' ? BigInt(satang) : satang)

/** A query string from parameters (empty values dropped), for links that keep filters. */
export const queryString = (params: Readonly<Record<string, string | null | undefined>>): string => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, v)
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}
