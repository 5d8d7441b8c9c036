import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { parseAsOf, streamOfKind, viewAsOf, type AsOf } from '../../../application/as-of.ts'
import { readAuditTrail, type AuditEntry, type AuditUndecodable } from '../../../application/audit.ts'
import type { Json, JsonObject } from '../../../application/ports/event-store.ts'
import { isJsonObject } from '../../../domain/events/json.ts'
import { redactPayerData } from '../../../domain/events/redaction.ts'
import { MerchantOrderId } from '../../../domain/gateway/fields.ts'
import { makeReadModelQueries } from '../../../projections/queries.ts'
import { AsOfRefused, headOf, resolveAsOf } from '../../../projections/as-of.ts'
import { breaksOfItem, postingsOf, refundStreamsOf, type ItemKind } from '../../../projections/reconciliation/console-reads.ts'
import type { ConsoleContext } from './deps.ts'
import { pageSession } from './guard.ts'
import { html, type Html } from './html.ts'
import { bangkokTime, baht, bothTimes, CONSOLE, layout, messagePage, queryString, sendPage } from './layout.ts'
import type { ConsoleSession } from './session.ts'
import { stateSummary } from './state-summary.ts'
import { stackTable } from './table.ts'

/*
 * One order, refund or subscription: its state (now, or as of an instant or log position), the
 * timeline of its events (an order's includes its refunds'), each with its source, its time in Bangkok
 * and UTC, the signature result of callbacks and the payload with payer data redacted; its ledger
 * postings; its breaks.
 */

const PATHS: ReadonlyArray<readonly [ItemKind, string]> = [
  ['order', 'orders'],
  ['refund', 'refunds'],
  ['subscription', 'subscriptions'],
]

type TimelineEvent = { readonly stream: string; readonly entry: AuditEntry | AuditUndecodable }

const signatureText = (s: Json): Html => {
  if (!isJsonObject(s)) return html`<span class="muted">not a callback</span>`
  const verified = s['verified']
  const reason = s['reason']
  return verified === true ? html`<b>signature verified</b>` : html`<b class="error">signature NOT verified</b>${typeof reason === 'string' ? html`: ${reason}` : ''}`
}

/** The anchor of the event holding an observation (a break's evidence names its observation key). */
export const observationAnchor = (observationKey: string): string => `obs-${createHash('sha256').update(observationKey).digest('hex').slice(0, 16)}`

const eventItem = (e: TimelineEvent): Html => {
  const x = e.entry
  if ('undecodable' in x) return html`<li>${e.stream} revision ${x.stream_revision} at ${x.position}: undecodable (${x.undecodable})</li>`
  const payload = redactPayerData(x.data)
  const key = x.data['observationKey']
  return html`<li id="event-${x.event_id}" data-type="${x.type}" data-position="${x.position}">${typeof key === 'string' ? html`<a id="${observationAnchor(key)}"></a>` : ''}
<b>${x.type}</b> v${x.schema_version} · source <b>${x.source}</b> · ${signatureText(x.signature)}<br>
${bothTimes(new Date(x.recorded_at))}<br><span class="muted">${e.stream} #${x.stream_revision} · position ${x.position}${x.trace_id === null ? '' : ` · trace ${shown(x.trace_id)}`}</span>
<details><summary>payload (payer data redacted)</summary><pre>${JSON.stringify(payload, null, 2)}</pre></details></li>`
}

const shown = (v: Json): string => (typeof v === 'string' ? v : JSON.stringify(v))

const stateTable = (view: JsonObject): Html =>
  html`<dl class="summary" id="state">${stateSummary(view).map((l) => html`<dt>${l.label}</dt><dd${l.money ? html` class="money"` : ''}>${l.value}</dd>`)}</dl>
<details class="raw"><summary>The state as the API answers it (JSON)</summary><pre>${JSON.stringify(view, null, 2)}</pre></details>`

const idOf = (request: FastifyRequest): string => (t.UnknownRecord.is(request.params) && typeof request.params['id'] === 'string' ? request.params['id'] : '')

const asOfText = (request: FastifyRequest): string | undefined => {
  const q = request.query
  return t.UnknownRecord.is(q) && typeof q['as_of'] === 'string' && q['as_of'] !== '' ? q['as_of'] : undefined
}

/** The as-of of a request (`?as_of=`), or now (the log's head); a refusal is sent when it is not one. */
export const requestAsOf = async (c: ConsoleContext, request: FastifyRequest, reply: FastifyReply, session: ConsoleSession): Promise<{ readonly asOf: AsOf; readonly requested: boolean } | undefined> => {
  const text = asOfText(request)
  if (text === undefined) return { asOf: { position: await headOf(c.store), instant: c.now(), requested: 'now' }, requested: false }
  const parsed = parseAsOf(text)
  if (E.isLeft(parsed)) {
    void messagePage(reply, 400, session, 'Bad request', html`<p>as_of ${parsed.left}.</p>`)
    return undefined
  }
  try {
    return { asOf: await resolveAsOf({ store: c.store, pool: c.readModels.pool }, c.readModels.schema, parsed.right, c.now()), requested: true }
  } catch (e) {
    if (!(e instanceof AsOfRefused)) throw e
    void messagePage(reply, 400, session, 'Bad request', html`<p>as_of: ${e.message}.</p>`)
    return undefined
  }
}

export const asOfForm = (action: string, value: string | undefined): Html =>
  html`<form class="filters" method="get" action="${action}"><label>As of (instant with offset, or log position)<input name="as_of" size="30" placeholder="2026-11-20T17:00:00+07:00" value="${value ?? ''}"></label><button>Show</button>${value === undefined ? '' : html` <a href="${action}">now</a>`}</form>`

export const registerItemPages = (app: FastifyInstance, c: ConsoleContext): void => {
  app.get(`${CONSOLE}/find`, async (request, reply) => {
    const session = pageSession(c.sessions, request, reply, 'read', c.now())
    if (session === undefined) return reply
    const query = t.UnknownRecord.is(request.query) ? request.query : {}
    const kind = query['kind']
    const id = typeof query['id'] === 'string' ? query['id'].trim() : ''
    const path = PATHS.find(([k]) => k === kind)?.[1]
    if (path === undefined || id === '') return messagePage(reply, 400, session, 'Find', html`<p>Give a kind (order, refund or subscription) and an id.</p>`)
    return reply.code(303).header('location', `${CONSOLE}/${path}/${encodeURIComponent(id)}`).send()
  })

  for (const [kind, path] of PATHS) {
    app.get(`${CONSOLE}/${path}/:id`, async (request, reply) => {
      const session = pageSession(c.sessions, request, reply, 'read', c.now())
      if (session === undefined) return reply
      const id = idOf(request)
      if (E.isLeft(MerchantOrderId.decode(id))) return messagePage(reply, 400, session, 'Bad request', html`<p>${id} is not an id satang uses (1 to 64 letters, digits, dash, underline).</p>`)
      const at = await requestAsOf(c, request, reply, session)
      if (at === undefined) return reply
      const { asOf } = at
      const stream = streamOfKind(kind, c.merchantId, id)
      const state = await viewAsOf(c.store, kind, stream, asOf)
      const rm = { db: c.readModels.pool, schema: c.readModels.schema }
      const streams = kind === 'order' ? [stream, ...(await refundStreamsOf(rm, c.merchantId, id))] : [stream]
      const canAudit = session.scopes.includes('audit')
      const timeline: TimelineEvent[] = []
      if (canAudit) {
        const queries = makeReadModelQueries(c.readModels)
        for (const s of streams) {
          const trail = await readAuditTrail({ store: c.store, readModels: queries }, s)()
          if (E.isLeft(trail)) throw new Error(`the audit trail of ${s} could not be read`, { cause: trail.left })
          for (const entry of trail.right?.events ?? []) if (asOf.position !== null && entry.position <= asOf.position) timeline.push({ stream: s, entry })
        }
        timeline.sort((a, b) => (a.entry.position < b.entry.position ? -1 : a.entry.position > b.entry.position ? 1 : 0))
      }
      const postings = await postingsOf(rm, c.merchantId, kind, id, asOf.position)
      const breaks = await breaksOfItem(rm, c.merchantId, kind, id)
      const title = `${kind[0]?.toUpperCase() ?? ''}${kind.slice(1)} ${id}`
      const self = `${CONSOLE}/${path}/${encodeURIComponent(id)}`
      const body = html`<h1>${title}</h1>
${asOfForm(self, asOfText(request))}
<p class="muted">${at.requested ? html`As of ${asOf.requested}: the log up to position ${asOf.position ?? '(empty)'} (${bangkokTime(asOf.instant)}).` : html`Now: the log up to position ${asOf.position ?? '(empty)'}.`}</p>
<h2>State</h2>
${state._tag === 'Ok' ? stateTable(state.body) : state._tag === 'NotFound' ? html`<p>No such ${kind}${at.requested ? ' at that moment' : ''}.</p>` : html`<p class="error">${'message' in state ? state.message : 'could not be read'}</p>`}
<h2 id="timeline">Timeline</h2>
${canAudit ? (timeline.length === 0 ? html`<p>No events.</p>` : html`<ol class="timeline">${timeline.map(eventItem)}</ol>`) : html`<p class="muted">The timeline needs a token with the scope audit.</p>`}
<h2>Ledger postings</h2>
${
  postings.length === 0
    ? html`<p>None.</p>`
    : stackTable({
        id: 'postings',
        columns: [{ label: 'Posted' }, { label: 'Kind' }, { label: 'Account' }, { label: 'Channel' }, { label: 'Debit', money: true }, { label: 'Credit', money: true }, { label: 'Event' }],
        rows: postings.map((p) => [bangkokTime(p.postedAt), p.kind, p.account, p.channel, baht(p.debit), baht(p.credit), canAudit ? html`<a href="#event-${p.eventId}">${p.eventId.slice(0, 8)}</a>` : p.eventId.slice(0, 8)]),
      })
}
<h2>Breaks</h2>
${
  breaks.length === 0
    ? html`<p>None.</p>`
    : stackTable({
        id: 'item-breaks',
        columns: [{ label: 'Break' }, { label: 'Class' }, { label: 'Status' }, { label: 'Day' }, { label: 'At stake', money: true }, { label: 'Detail' }],
        rows: breaks.map((b) => [html`<a href="${CONSOLE}/breaks/${encodeURIComponent(b.breakId)}">${b.breakId.slice(0, 8)}</a>`, b.class, b.status, b.day, baht(b.atStake), b.detail]),
      })
}
<p class="muted">Streams: ${streams.join(', ')}. <a href="${CONSOLE}/breaks${queryString({ status: 'all' })}">All breaks</a></p>`
      return sendPage(reply, 200, layout({ title, session, body }))
    })
  }
}
