import type { FastifyInstance, FastifyRequest } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { readAuditTrail, type AuditEntry, type AuditUndecodable } from '../../../application/audit.ts'
import type { Cause } from '../../../application/deps.ts'
import { MAX_REASON_LENGTH } from '../../../application/reconciliation-acknowledge.ts'
import type { Json, JsonObject } from '../../../application/ports/event-store.ts'
import { isJsonObject } from '../../../domain/events/json.ts'
import { isCleanText } from '../../../domain/gateway/text-rules.ts'
import { BREAK_CLASSES } from '../../../domain/reconciliation/break-class.ts'
import { BREAK_STATUSES } from '../../../domain/reconciliation/lifecycle.ts'
import { breakStreamName } from '../../../domain/reconciliation/stream.ts'
import { projectionCaughtUp } from '../../../projections/catch-up.ts'
import { readBreak, readBreaks } from '../../../projections/reconciliation/reads.ts'
import { queryOf } from '../query-params.ts'
import { breaksRequestOf, encodePageCursor } from '../reconciliation-routes.ts'
import type { ConsoleContext } from './deps.ts'
import { observationAnchor } from './item.ts'
import { formField, formSession, pageSession } from './guard.ts'
import { html, type Html } from './html.ts'
import { baht, bothTimes, CONSOLE, layout, messagePage, queryString, sendPage } from './layout.ts'
import type { ConsoleSession } from './session.ts'

/*
 * Breaks: filtered by class, status, age and day; each with satang's and the gateway's view side by
 * side (differences marked in words, not colour alone), its evidence (links to the item's events) and,
 * while it is open, the acknowledge form (a reason is required; CSRF token; scope reconcile:write).
 */

const PAGE = 50

const str = (o: JsonObject, k: string): string | null => {
  const v = o[k]
  return typeof v === 'string' ? v : null
}
const obj = (o: JsonObject, k: string): JsonObject => {
  const v = o[k]
  return v !== undefined && isJsonObject(v) ? v : {}
}
const int = (o: JsonObject, k: string): number => {
  const v = o[k]
  return typeof v === 'number' ? v : 0
}

const shown = (v: Json | undefined): string => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v))

/** Both views, key by key. */
const viewsTable = (satang: JsonObject, gateway: JsonObject): Html => {
  const keys = [...new Set([...Object.keys(satang), ...Object.keys(gateway)])].sort()
  return html`<div class="scroll"><table class="views-table"><thead><tr><th>Field</th><th>satang</th><th>gateway</th><th></th></tr></thead><tbody>${keys.map((k) => {
    const a = shown(satang[k])
    const b = shown(gateway[k])
    return html`<tr><td>${k}</td><td>${a}</td><td>${b}</td><td>${a === b ? '' : html`<b>differs</b>`}</td></tr>`
  })}</tbody></table></div>`
}

/** Where the item's page is. */
export const itemHref = (item: JsonObject): string | null => {
  const kind = str(item, 'kind')
  const order = str(item, 'merchant_order_id')
  const refund = str(item, 'merchant_refund_id')
  const sub = str(item, 'merchant_subscribe_id')
  if ((kind === 'payment' || kind === 'unmatched_callback') && order !== null) return `${CONSOLE}/orders/${encodeURIComponent(order)}`
  if (kind === 'refund' && refund !== null) return `${CONSOLE}/refunds/${encodeURIComponent(refund)}`
  if (kind === 'subscription' && sub !== null) return `${CONSOLE}/subscriptions/${encodeURIComponent(sub)}`
  return null
}

const ackForm = (b: JsonObject, session: ConsoleSession): Html => {
  const id = str(b, 'break_id') ?? ''
  if (!session.scopes.includes('reconcile:write')) return html`<p class="muted">Acknowledging needs a token with the scope reconcile:write.</p>`
  return html`<form class="ack" method="post" action="${CONSOLE}/breaks/${encodeURIComponent(id)}/acknowledge">
<input type="hidden" name="csrf" value="${session.csrf}">
<label>Reason (required)<textarea name="reason" required maxlength="${MAX_REASON_LENGTH}" rows="2" cols="40"></textarea></label>
<button>Acknowledge</button></form>`
}

export const breakCard = (b: JsonObject, session: ConsoleSession, detailLink: boolean): Html => {
  const id = str(b, 'break_id') ?? ''
  const item = obj(b, 'item')
  const evidence = obj(b, 'evidence')
  const href = itemHref(item)
  const status = str(b, 'status') ?? ''
  const open = status === 'new' || status === 'persisting'
  const observation = str(evidence, 'observationKey')
  return html`<article class="break" data-break-id="${id}" data-class="${str(b, 'class') ?? ''}" data-status="${status}">
<h3>${detailLink ? html`<a href="${CONSOLE}/breaks/${encodeURIComponent(id)}">${str(b, 'class')}</a>` : str(b, 'class')} · <span class="status">${status}</span> · ${str(item, 'kind')} ${href === null ? str(item, 'id') : html`<a href="${href}">${str(item, 'id')}</a>`}</h3>
<p>Business day ${str(b, 'day')} · at stake <b>${baht(int(b, 'amount_at_stake_satang'))}</b> THB · age ${int(b, 'age_days')} d (${str(b, 'age_bucket')}) · seen ${int(b, 'times_seen')}×</p>
<p>${str(b, 'detail')}</p>
<div class="views"><div><b>satang</b><pre>${JSON.stringify(obj(b, 'satang_view'), null, 2)}</pre></div><div><b>gateway</b><pre>${JSON.stringify(obj(b, 'gateway_view'), null, 2)}</pre></div></div>
<details><summary>Field by field</summary>${viewsTable(obj(b, 'satang_view'), obj(b, 'gateway_view'))}</details>
<p class="muted">Evidence: trace id ${str(evidence, 'traceId') ?? '—'}${observation === null ? '' : html`; observation ${href === null ? observation : html`<a href="${href}#${observationAnchor(observation)}">${observation}</a>`}`}${href === null ? '' : html` — <a href="${href}#timeline">the item's events</a>`}; first seen ${str(b, 'first_seen_at')} (run ${str(b, 'first_seen_run_id')}), last seen ${str(b, 'last_seen_at')} (run ${str(b, 'last_seen_run_id')})${
    str(b, 'acknowledged_at') === null ? '' : html`; acknowledged by ${str(b, 'acknowledged_by')}: “${str(b, 'acknowledgement_reason')}”`
  }${str(b, 'resolution') === null ? '' : html`; resolved (${str(b, 'resolution')})`}</p>
${open ? ackForm(b, session) : ''}
</article>`
}

const select = (name: string, options: ReadonlyArray<string>, current: string | null, any: string): Html =>
  html`<select name="${name}"><option value="">${any}</option>${options.map((o) => html`<option value="${o}"${o === current ? html` selected` : ''}>${o}</option>`)}</select>`

const q = (request: FastifyRequest): Readonly<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(queryOf(request))) if (typeof v === 'string' && v !== '') out[k] = v
  return out
}

const eventLine = (e: AuditEntry | AuditUndecodable): Html =>
  'undecodable' in e ? html`<li>revision ${e.stream_revision}: undecodable (${e.undecodable})</li>` : html`<li data-type="${e.type}"><b>${e.type}</b> · ${e.source} · actor ${shown(e.metadata['actor'])}<br>${bothTimes(new Date(e.recorded_at))}<pre>${JSON.stringify(e.data, null, 2)}</pre></li>`

export const registerBreaks = (app: FastifyInstance, c: ConsoleContext): void => {
  app.get(`${CONSOLE}/breaks`, async (request, reply) => {
    const session = pageSession(c.sessions, request, reply, 'read', c.now())
    if (session === undefined) return reply
    const query = q(request)
    const status = query['status'] === 'all' ? undefined : (query['status'] ?? 'open')
    const req = breaksRequestOf({ ...query, limit: String(PAGE), ...(status === undefined ? { status: undefined } : { status }) })
    const filters = (cls: string | null) => html`<form class="filters" method="get" action="${CONSOLE}/breaks">
<label>Class ${select('class', BREAK_CLASSES, cls, 'any class')}</label>
<label>Status ${select('status', ['open', ...BREAK_STATUSES, 'all'], query['status'] ?? 'open', 'open')}</label>
<label>At least (days old)<input name="min_age_days" inputmode="numeric" size="4" value="${query['min_age_days'] ?? ''}"></label>
<label>Business day<input name="date" type="date" value="${query['date'] ?? ''}"></label>
<button>Filter</button></form>`
    if (E.isLeft(req)) {
      return sendPage(reply, 400, layout({ title: 'Breaks', session, body: html`<h1>Breaks</h1>${filters(null)}<ul class="error">${req.left.map((v) => html`<li>${v.path}: ${v.rule}</li>`)}</ul>` }))
    }
    const page = await readBreaks(c.readModels, c.merchantId, req.right.filters, req.right.page)
    const next = page.next === null ? null : `${CONSOLE}/breaks${queryString({ ...query, cursor: encodePageCursor(page.next) })}`
    const body = html`<h1>Breaks</h1>
${filters(req.right.filters.class)}
<p class="muted">Oldest first sighting first; ${PAGE} per page.</p>
<div id="breaks">${page.items.length === 0 ? html`<p>No break matches.</p>` : page.items.map((b) => breakCard(b, session, true))}</div>
${next === null ? '' : html`<p><a href="${next}" rel="next">Next page →</a></p>`}`
    return sendPage(reply, 200, layout({ title: 'Breaks', session, body }))
  })

  app.get(`${CONSOLE}/breaks/:id`, async (request, reply) => {
    const session = pageSession(c.sessions, request, reply, 'read', c.now())
    if (session === undefined) return reply
    const id = t.UnknownRecord.is(request.params) && typeof request.params['id'] === 'string' ? request.params['id'] : ''
    // No break id holds a control character or a lone surrogate (and PostgreSQL cannot compare one with NUL).
    const b = isCleanText(id) ? await readBreak(c.readModels, c.merchantId, id) : null
    if (b === null) return messagePage(reply, 404, session, 'No such break', html`<p>There is no break ${id}.</p>`)
    const trail = await readAuditTrail({ store: c.store }, breakStreamName(c.merchantId, id))()
    const events = E.isRight(trail) ? (trail.right?.events ?? []) : []
    const body = html`<h1>Break ${id}</h1>${breakCard(b, session, false)}
<h2>Audit trail of the break</h2>
${E.isLeft(trail) ? html`<p class="error">The event log could not be read.</p>` : events.length === 0 ? html`<p>No event about this break beyond the runs that saw it.</p>` : html`<ol class="timeline" id="break-trail">${events.map(eventLine)}</ol>`}
<p class="muted">Stream ${breakStreamName(c.merchantId, id)}; the runs that saw it are in their own streams (run ids above).</p>`
    return sendPage(reply, 200, layout({ title: `Break ${id}`, session, body }))
  })

  app.post(`${CONSOLE}/breaks/:id/acknowledge`, async (request, reply) => {
    const session = formSession(c.sessions, request, reply, 'reconcile:write', c.now())
    if (session === undefined) return reply
    const id = t.UnknownRecord.is(request.params) && typeof request.params['id'] === 'string' ? request.params['id'] : ''
    // The reason as typed: the acknowledgement's own rules (required, length, the text rules) answer below, naming it.
    const reason = formField(request, 'reason') ?? ''
    const cause: Cause = { correlationId: request.id, causationId: request.id, actor: session.tokenName }
    const result = await c.acknowledge(id, session.tokenName, reason, cause)
    switch (result._tag) {
      case 'Ok':
        // The page after shows the read model: give the projector a moment to apply the acknowledgement.
        await projectionCaughtUp({ store: c.store, pool: c.readModels.pool }, c.readModels.schema, 'reconciliation', 3000)
        return reply.code(303).header('location', `${CONSOLE}/breaks/${encodeURIComponent(id)}`).header('cache-control', 'no-store').send()
      case 'NotFound':
        return messagePage(reply, 404, session, 'No such break', html`<p>${result.message}</p>`)
      case 'Conflict':
        return messagePage(reply, 409, session, 'Not acknowledged', html`<p>${result.message}</p>`)
      case 'InvalidRequest':
        return messagePage(
          reply,
          400,
          session,
          'Not acknowledged',
          html`<ul class="error">${result.violations.map((v) => html`<li>${v.path}: ${v.rule}</li>`)}</ul><p>Say why the break is closed (1 to ${MAX_REASON_LENGTH} characters). <a href="${CONSOLE}/breaks/${encodeURIComponent(id)}">Back to the break</a></p>`,
        )
      case 'GatewayRejected':
      case 'GatewayUnavailable':
      case 'Unavailable':
        return messagePage(reply, 503, session, 'Not acknowledged', html`<p>${result.message}: try again.</p>`)
    }
  })
}
