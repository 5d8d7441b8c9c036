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
import { asOfForm, observationAnchor, requestAsOf } from './item.ts'
import { withReadModelsAsOf } from '../../../projections/as-of.ts'
import { reconciliationProjection } from '../../../projections/reconciliation/projection.ts'
import { formField, formSession, pageSession } from './guard.ts'
import { html, type Html } from './html.ts'
import { alignedFields, breakSentence, guidanceOf, type AlignedField } from '../../../domain/reconciliation/report/explain.ts'
import { bahtText } from '../../../domain/reconciliation/report/people.ts'
import { bangkokTime, bothTimes, CONSOLE, layout, messagePage, queryString, sendPage } from './layout.ts'
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

/** Both views aligned by meaning: the differing fields first, highlighted (and said in words); money in baht, times in Bangkok. */
const alignedTable = (fields: ReadonlyArray<AlignedField>): Html => {
  const value = (f: AlignedField, v: string | null): Html => {
    if (v === null) return html`<span class="muted">—</span>`
    if (f.kind === 'money') return html`<span class="money">${bahtText(BigInt(v))}</span>`
    if (f.kind === 'time') {
      const d = new Date(v)
      return Number.isNaN(d.getTime()) ? html`${v}` : bangkokTime(d)
    }
    return html`${v}`
  }
  const cls = (f: AlignedField): string => (f.kind === 'money' ? 'num money' : '')
  return html`<table class="stack aligned"><caption>satang and the gateway, field by field</caption><thead><tr><th scope="col">Field</th><th scope="col">satang recorded</th><th scope="col">the gateway says</th></tr></thead><tbody>${fields.map(
    (f) =>
      html`<tr${f.differs ? html` class="differs" data-differs="true"` : ''} data-field="${f.label}"><th scope="row" data-label="Field">${f.label}</th><td class="${cls(f)}" data-label="satang recorded">${value(f, f.satang)}</td><td class="${cls(f)}" data-label="the gateway says">${value(f, f.gateway)}</td></tr>`,
  )}</tbody></table>`
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
  const cls = str(b, 'class') ?? ''
  const atStake = BigInt(int(b, 'amount_at_stake_satang'))
  const fields = alignedFields(str(item, 'kind') ?? '', obj(b, 'satang_view'), obj(b, 'gateway_view'))
  const guidance = guidanceOf(cls)
  const when = (k: string): Html => {
    const v = str(b, k)
    return v === null ? html`—` : bangkokTime(new Date(v))
  }
  return html`<article class="break" data-break-id="${id}" data-class="${cls}" data-status="${status}">
<h3>${detailLink ? html`<a href="${CONSOLE}/breaks/${encodeURIComponent(id)}">${cls}</a>` : cls} · <span class="status">${status}</span> · ${str(item, 'kind')} ${href === null ? str(item, 'id') : html`<a href="${href}">${str(item, 'id')}</a>`}</h3>
<p class="sentence">${breakSentence(fields, atStake, str(b, 'detail') ?? '')}</p>
<p>Business day ${str(b, 'day')} (Bangkok) · at stake <b class="money">${bahtText(atStake)}</b> · age ${int(b, 'age_days')} d (${str(b, 'age_bucket')}) · seen ${int(b, 'times_seen')}×</p>
${alignedTable(fields)}
${guidance === null ? '' : html`<div class="guidance"><p><b>What it means:</b> ${guidance.meaning}.</p><p><b>What to do:</b> ${guidance.action}.</p></div>`}
<p class="muted">The run said: ${str(b, 'detail')}</p>
<details class="raw"><summary>Both views as recorded (JSON)</summary><div class="views"><div><b>satang</b><pre>${JSON.stringify(obj(b, 'satang_view'), null, 2)}</pre></div><div><b>gateway</b><pre>${JSON.stringify(obj(b, 'gateway_view'), null, 2)}</pre></div></div></details>
<p class="muted">Evidence: trace id ${str(evidence, 'traceId') ?? '—'}${observation === null ? '' : html`; observation ${href === null ? observation : html`<a href="${href}#${observationAnchor(observation)}">${observation}</a>`}`}${href === null ? '' : html` — <a href="${href}#timeline">the item's events</a>`}; first seen ${when('first_seen_at')} (run ${str(b, 'first_seen_run_id')}), last seen ${when('last_seen_at')} (run ${str(b, 'last_seen_run_id')})${
    str(b, 'acknowledged_at') === null ? '' : html`; acknowledged by ${str(b, 'acknowledged_by')} at ${when('acknowledged_at')}: “${str(b, 'acknowledgement_reason')}”`
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
  'undecodable' in e
    ? html`<li>revision ${e.stream_revision}: undecodable (${e.undecodable})</li>`
    : html`<li data-type="${e.type}"><b>${e.type}</b> · ${e.source} · actor ${shown(e.metadata['actor'])}${typeof e.data['reason'] === 'string' ? html` · reason “${e.data['reason']}”` : ''}<br>${bothTimes(new Date(e.recorded_at))}<details><summary>the event (JSON)</summary><pre>${JSON.stringify(e.data, null, 2)}</pre></details></li>`

export const registerBreaks = (app: FastifyInstance, c: ConsoleContext): void => {
  app.get(`${CONSOLE}/breaks`, async (request, reply) => {
    const session = pageSession(c.sessions, request, reply, 'read', c.now())
    if (session === undefined) return reply
    const query = q(request)
    const at = await requestAsOf(c, request, reply, session)
    if (at === undefined) return reply
    const asOfValue = at.requested ? query['as_of'] : undefined
    const status = query['status'] === 'all' ? undefined : (query['status'] ?? 'open')
    const { as_of: _asOf, ...filterQuery } = query
    const req = breaksRequestOf({ ...filterQuery, limit: String(PAGE), ...(status === undefined ? { status: undefined } : { status }) })
    const filters = (cls: string | null) => html`<form class="filters" method="get" action="${CONSOLE}/breaks">
<label>Class ${select('class', BREAK_CLASSES, cls, 'any class')}</label>
<label>Status ${select('status', ['open', ...BREAK_STATUSES, 'all'], query['status'] ?? 'open', 'open')}</label>
<label>At least (days old)<input name="min_age_days" inputmode="numeric" size="4" value="${query['min_age_days'] ?? ''}"></label>
<label>Business day<input name="date" type="date" value="${query['date'] ?? ''}"></label>
${asOfValue === undefined ? '' : html`<input type="hidden" name="as_of" value="${asOfValue}">`}<button>Filter</button></form>`
    if (E.isLeft(req)) {
      return sendPage(reply, 400, layout({ title: 'Breaks', session, body: html`<h1>Breaks</h1>${filters(null)}<ul class="error">${req.left.map((v) => html`<li>${v.path}: ${v.rule}</li>`)}</ul>` }))
    }
    const filtersOk = req.right
    // As of a past moment: the reconciliation read model rebuilt from the log up to it (rolled back after).
    const page = at.requested
      ? await withReadModelsAsOf({ store: c.store, pool: c.readModels.pool }, [reconciliationProjection], at.asOf.position, (past) => readBreaks({ pool: past.db, schema: past.schema }, c.merchantId, filtersOk.filters, filtersOk.page))
      : await readBreaks(c.readModels, c.merchantId, req.right.filters, req.right.page)
    const next = page.next === null ? null : `${CONSOLE}/breaks${queryString({ ...query, cursor: encodePageCursor(page.next) })}`
    const body = html`<h1>Breaks</h1>
${filters(req.right.filters.class)}
${asOfForm(`${CONSOLE}/breaks`, asOfValue)}
${at.requested ? html`<p class="muted" id="as-of">As of ${at.asOf.requested}: the breaks as the log up to position ${at.asOf.position ?? '(empty)'} left them (${bangkokTime(at.asOf.instant)}); ages are counted to now.</p>` : ''}
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
