import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import type { Cause } from '../../application/deps.ts'
import type { UseCaseResult } from '../../application/results.ts'
import { CHARACTER_RULES } from '../../domain/gateway/text-rules.ts'
import { BREAK_CLASSES, isBreakClass, type BreakClass } from '../../domain/reconciliation/break-class.ts'
import { BREAK_STATUSES, BreakStatus } from '../../domain/reconciliation/lifecycle.ts'
import type { Violation } from '../../domain/violations.ts'
import { readBreak, readBreaks, readDays, readRun, readRuns, type BreakFilters, type PageCursor } from '../../projections/reconciliation/reads.ts'
import type { ReadModels } from '../../projections/types.ts'
import type { TokenMatcher } from './api-tokens.ts'
import { requireScope, tokenOf } from './auth.ts'
import { invalidRequest, sendError } from './errors.ts'
import { errors, route, withExample } from './openapi.ts'
import { dateRules, queryOf, reader, type Query } from './query-params.ts'
import { replyWith } from './replies.ts'

/**
 * The reconciliation under `/v1/reconciliation` (docs/finance.md "Reconciliation"): runs, breaks, the verdict
 * of each business day (scope `read`), and acknowledging a break (scope `reconcile:write`; the token's
 * name is recorded as the actor).
 */
export type ReconciliationRouteDeps = {
  readonly readModels: ReadModels
  readonly merchantId: string
  readonly tokens: TokenMatcher
  readonly acknowledge: (breakId: string, actor: string, reason: string, cause: Cause) => Promise<UseCaseResult>
}

export const MAX_PAGE = 500
export const DEFAULT_PAGE = 50
const MAX_DAYS_RANGE = 366

const CursorJson = t.tuple([t.string, t.string])

export const encodePageCursor = (c: PageCursor): string => Buffer.from(JSON.stringify([c.at, c.id]), 'utf8').toString('base64url')

export const decodePageCursor = (s: string): PageCursor | null => {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (!CursorJson.is(parsed)) return null
  const [at, id] = parsed
  return Number.isNaN(Date.parse(at)) || id === '' ? null : { at, id }
}

const limitRules = (s: string): ReadonlyArray<string> => (/^\d{1,4}$/.test(s) && Number(s) >= 1 && Number(s) <= MAX_PAGE ? [] : [`must be a whole number from 1 to ${String(MAX_PAGE)}`])
const classRules = (s: string): ReadonlyArray<string> => (isBreakClass(s) ? [] : [`must be one of ${BREAK_CLASSES.join(', ')}`])
const statusRules = (s: string): ReadonlyArray<string> => (s === 'open' || BreakStatus.is(s) ? [] : [`must be open or one of ${BREAK_STATUSES.join(', ')}`])
const ageRules = (s: string): ReadonlyArray<string> => (/^\d{1,5}$/.test(s) ? [] : ['must be a whole number of days'])
// PostgreSQL cannot even compare a text holding NUL: an id breaking the text rules is refused before any read.
const idRules = (s: string): ReadonlyArray<string> => [...CHARACTER_RULES.flatMap((rule) => rule(s) ?? []), ...(s.length <= 128 ? [] : ['must be at most 128 characters'])]

type PageRequest = { readonly limit: number; readonly after: PageCursor | null }

const pageOf = (r: ReturnType<typeof reader>): PageRequest => {
  const limit = r.text('limit', limitRules)
  const cursor = r.text('cursor', () => [])
  const after = cursor === null ? null : decodePageCursor(cursor)
  if (cursor !== null && after === null) r.fail('cursor', 'must be a next_cursor returned by this route')
  return { limit: limit === null ? DEFAULT_PAGE : Number(limit), after }
}

export const runsRequestOf = (q: Query): E.Either<ReadonlyArray<Violation>, PageRequest> => {
  const r = reader(q, ['limit', 'cursor'])
  const page = pageOf(r)
  return r.violations.length > 0 ? E.left(r.violations) : E.right(page)
}

export const breaksRequestOf = (q: Query): E.Either<ReadonlyArray<Violation>, { readonly filters: BreakFilters; readonly page: PageRequest }> => {
  const r = reader(q, ['class', 'status', 'min_age_days', 'date', 'item_id', 'limit', 'cursor'])
  const cls = r.text('class', classRules)
  const status = r.text('status', statusRules)
  const minAge = r.text('min_age_days', ageRules)
  const filters: BreakFilters = {
    class: cls !== null && isBreakClass(cls) ? (cls satisfies BreakClass) : null,
    status: status === 'open' ? 'open' : BreakStatus.is(status) ? status : null,
    minAgeDays: minAge === null ? null : Number(minAge),
    date: r.text('date', dateRules),
    itemId: r.text('item_id', idRules),
  }
  const page = pageOf(r)
  return r.violations.length > 0 ? E.left(r.violations) : E.right({ filters, page })
}

export const daysRequestOf = (q: Query): E.Either<ReadonlyArray<Violation>, { readonly from: string; readonly to: string }> => {
  const r = reader(q, ['from', 'to'])
  const from = r.text('from', dateRules)
  const to = r.text('to', dateRules)
  if (q['from'] === undefined) r.fail('from', 'is required (yyyy-MM-dd, Asia/Bangkok)')
  if (q['to'] === undefined) r.fail('to', 'is required (yyyy-MM-dd, Asia/Bangkok)')
  if (from !== null && to !== null) {
    if (to < from) r.fail('to', 'must not be before from')
    else if ((Date.parse(to) - Date.parse(from)) / 86_400_000 >= MAX_DAYS_RANGE) r.fail('to', `must be at most ${String(MAX_DAYS_RANGE)} days after from`)
  }
  return r.violations.length > 0 || from === null || to === null ? E.left(r.violations) : E.right({ from, to })
}

const paramOf = (request: FastifyRequest, name: string): string => {
  const value = t.UnknownRecord.is(request.params) ? request.params[name] : undefined
  return typeof value === 'string' ? value : ''
}

/** The violations of the `id` in the path (a run or break id), before it is looked up. */
const idViolations = (request: FastifyRequest): ReadonlyArray<Violation> => idRules(paramOf(request, 'id')).map((rule) => ({ path: 'id', rule }))

const readFailed = (request: FastifyRequest, reply: FastifyReply, e: unknown): FastifyReply => {
  const code = typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined
  if (code === '42P01' || code === '3F000') return sendError(reply, 503, { error: 'unavailable', message: 'the reconciliation read models do not exist yet: run satang migrate (or satang up)', retriable: true })
  request.log.error({ err: e }, 'reconciliation read failed')
  return sendError(reply, 503, { error: 'unavailable', message: 'the reconciliation read models could not be read', retriable: true })
}

/** The body of an acknowledgement (more fields are ignored; every key still keeps the text rules, json-body.ts). */
export const AckBody = t.type({ reason: t.string })

export const registerReconciliationRoutes =
  (deps: ReconciliationRouteDeps) =>
  (app: FastifyInstance): void => {
    const read = (schema: FastifySchema) => ({ schema, preHandler: requireScope(deps.tokens, 'read') })
    const guarded = async (request: FastifyRequest, reply: FastifyReply, answer: () => Promise<FastifyReply>): Promise<FastifyReply> => {
      try {
        return await answer()
      } catch (e) {
        return readFailed(request, reply, e)
      }
    }

    app.get('/v1/reconciliation/runs', read(RECONCILIATION_DOCS.runs), async (request, reply) => {
      const req = runsRequestOf(queryOf(request))
      if (E.isLeft(req)) return invalidRequest(reply, req.left)
      return guarded(request, reply, async () => {
        const page = await readRuns(deps.readModels, deps.merchantId, req.right)
        return reply.code(200).send({ runs: page.items, next_cursor: page.next === null ? null : encodePageCursor(page.next) })
      })
    })

    app.get('/v1/reconciliation/runs/:id', read(RECONCILIATION_DOCS.run), async (request, reply) => {
      const bad = idViolations(request)
      if (bad.length > 0) return invalidRequest(reply, bad)
      return guarded(request, reply, async () => {
        const run = await readRun(deps.readModels, deps.merchantId, paramOf(request, 'id'))
        return run === null ? sendError(reply, 404, { error: 'not_found', message: `no reconciliation run ${paramOf(request, 'id')}` }) : reply.code(200).send(run)
      })
    })

    app.get('/v1/reconciliation/breaks', read(RECONCILIATION_DOCS.breaks), async (request, reply) => {
      const req = breaksRequestOf(queryOf(request))
      if (E.isLeft(req)) return invalidRequest(reply, req.left)
      return guarded(request, reply, async () => {
        const page = await readBreaks(deps.readModels, deps.merchantId, req.right.filters, req.right.page)
        return reply.code(200).send({ breaks: page.items, next_cursor: page.next === null ? null : encodePageCursor(page.next) })
      })
    })

    app.get('/v1/reconciliation/breaks/:id', read(RECONCILIATION_DOCS.break), async (request, reply) => {
      const bad = idViolations(request)
      if (bad.length > 0) return invalidRequest(reply, bad)
      return guarded(request, reply, async () => {
        const b = await readBreak(deps.readModels, deps.merchantId, paramOf(request, 'id'))
        return b === null ? sendError(reply, 404, { error: 'not_found', message: `no break ${paramOf(request, 'id')}` }) : reply.code(200).send(b)
      })
    })

    app.get('/v1/reconciliation/days', read(RECONCILIATION_DOCS.days), async (request, reply) => {
      const req = daysRequestOf(queryOf(request))
      if (E.isLeft(req)) return invalidRequest(reply, req.left)
      return guarded(request, reply, async () => reply.code(200).send({ from: req.right.from, to: req.right.to, days: await readDays(deps.readModels, deps.merchantId, req.right.from, req.right.to) }))
    })

    app.post('/v1/reconciliation/breaks/:id/acknowledge', { schema: RECONCILIATION_DOCS.acknowledge, preHandler: requireScope(deps.tokens, 'reconcile:write') }, async (request, reply) => {
      const body = AckBody.decode(request.body)
      if (E.isLeft(body)) return invalidRequest(reply, [{ path: 'reason', rule: 'is required: a JSON body { "reason": "…" } saying why the break is closed' }])
      const token = tokenOf(request)
      const cause: Cause = { correlationId: request.id, causationId: request.id, ...(token === undefined ? {} : { actor: token.name }) }
      return replyWith(reply, await deps.acknowledge(paramOf(request, 'id'), token?.name ?? 'unknown', body.right.reason, cause))
    })
  }

/* OpenAPI documentation of the routes (documentation-only schemas, as openapi.ts explains). */

type JsonSchema = { readonly [keyword: string]: unknown }

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra })
const open = (description: string): JsonSchema => ({ type: 'object', description, additionalProperties: true })
const dateParam = (description: string): JsonSchema => str(description, { format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' })
const pageParams = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE },
  cursor: str('next_cursor of the previous page'),
}
const idParams = (what: string): JsonSchema => ({ type: 'object', required: ['id'], properties: { id: str(what) } })
const run = open(
  'run_id, scope { kind, from, to }, started_by, parameters, status (running, completed, superseded), verdict, items_in_scope, counts { checked, matched, healed, pending, unchecked, acknowledged, open_breaks, breaks: { class: count } }, totals { checked_satang, healed_satang, at_stake_satang, unchecked_satang }, started_at, completed_at',
)
const breakSchema = open(
  'break_id, class, status (new, persisting, resolved, acknowledged), item { kind, id, merchant_order_id, merchant_refund_id, merchant_subscribe_id, stream }, day, amount_at_stake_satang, satang_view, gateway_view, detail, evidence, first_seen_at, last_seen_at, times_seen, age_days, age_bucket (0-1, 2-7, 8-30, >30), resolved_at, resolution, acknowledged_at, acknowledged_by, acknowledgement_reason',
)

const RUN_EXAMPLE = {
  run_id: '5d0e2c4a-1f7b-4b61-9d8e-2b1f0c3a4e51',
  scope: { kind: 'days', from: '2026-11-20', to: '2026-11-20' },
  started_by: { trigger: 'scheduler', actor: 'scheduler' },
  status: 'completed',
  verdict: 'breaks',
  items_in_scope: 2,
  counts: { checked: 2, matched: 1, healed: 0, pending: 0, unchecked: 0, acknowledged: 0, open_breaks: 1, breaks: { missing_internal: 1 } },
  totals: { checked_satang: 37050, healed_satang: 0, at_stake_satang: 12050, unchecked_satang: 0 },
  started_at: '2026-11-21T01:00:00.000Z',
  completed_at: '2026-11-21T01:00:09.000Z',
}
const BREAK_EXAMPLE = {
  break_id: 'order:ORD-2',
  class: 'missing_internal',
  status: 'new',
  item: { kind: 'order', id: 'ORD-2', merchant_order_id: 'ORD-2', merchant_refund_id: null, merchant_subscribe_id: null, stream: 'order-140000000000000001-ORD-2' },
  day: '2026-11-20',
  amount_at_stake_satang: 12050,
  first_seen_at: '2026-11-21T01:00:09.000Z',
  last_seen_at: '2026-11-21T01:00:09.000Z',
  times_seen: 1,
  age_days: 0,
  age_bucket: '0-1',
}

export const RECONCILIATION_DOCS = {
  runs: route('Reconciliation runs, newest first', 'read', {
    operationId: 'listReconciliationRuns',
    querystring: { type: 'object', additionalProperties: false, properties: pageParams },
    response: { 200: withExample({ description: 'a page of runs', type: 'object', properties: { runs: { type: 'array', items: run }, next_cursor: { type: 'string', nullable: true } } }, { runs: [RUN_EXAMPLE], next_cursor: null }), ...errors(400, 503) },
  }),
  run: route('One reconciliation run, with the breaks it saw and the items it healed', 'read', {
    operationId: 'getReconciliationRun',
    params: idParams('run_id'),
    response: { 200: withExample(open('the run, plus breaks (each break it detected, saw again or resolved) and healed ({ item, day, from, to, amount_satang, healed_at })'), { ...RUN_EXAMPLE, breaks: [BREAK_EXAMPLE], healed: [] }), ...errors(404, 503) },
  }),
  breaks: route(
    'Reconciliation breaks',
    'read',
    {
      operationId: 'listReconciliationBreaks',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          class: str('only this class', { enum: [...BREAK_CLASSES] }),
          status: str('open (new or persisting) or one lifecycle status', { enum: ['open', ...BREAK_STATUSES] }),
          min_age_days: { type: 'integer', minimum: 0, description: 'first seen at least this many days ago' },
          date: dateParam("the item's Asia/Bangkok business day"),
          item_id: str('merchant_order_id, merchant_refund_id or <merchant_subscribe_id>@<date>'),
          ...pageParams,
        },
      },
      response: { 200: withExample({ description: 'a page of breaks', type: 'object', properties: { breaks: { type: 'array', items: breakSchema }, next_cursor: { type: 'string', nullable: true } } }, { breaks: [BREAK_EXAMPLE], next_cursor: null }), ...errors(400, 503) },
    },
    'Oldest first sighting first. Age: whole days from first seen to now (to the resolution or acknowledgement for a closed break).',
  ),
  break: route('One reconciliation break', 'read', { operationId: 'getReconciliationBreak', params: idParams('break_id'), response: { 200: withExample(breakSchema, BREAK_EXAMPLE), ...errors(404, 503) } }),
  days: route('The reconciliation verdict of each business day', 'read', {
    operationId: 'listReconciliationDays',
    querystring: { type: 'object', additionalProperties: false, required: ['from', 'to'], properties: { from: dateParam('first Asia/Bangkok day'), to: dateParam('last day, inclusive (at most 366 days)') } },
    response: {
      200: withExample({
        description: 'the verdict of each day',
        type: 'object',
        properties: {
          from: str('from'),
          to: str('to'),
          days: { type: 'array', items: open('day, verdict (reconciled, reconciled_with_pending, breaks, incomplete) of the last run covering it, run_id, reconciled_at, counts, totals, open_breaks_now') },
        },
      }, { from: '2026-11-20', to: '2026-11-20', days: [{ day: '2026-11-20', verdict: 'breaks', run_id: RUN_EXAMPLE.run_id, reconciled_at: '2026-11-21T01:00:09.000Z', open_breaks_now: 1 }] }),
      ...errors(400, 503),
    },
  }),
  acknowledge: route(
    'Acknowledge (close) a break with a reason',
    'reconcile:write',
    {
      operationId: 'acknowledgeReconciliationBreak',
      params: idParams('break_id'),
      body: withExample({ type: 'object', required: ['reason'], additionalProperties: false, properties: { reason: str('why the break is closed (1 to 1000 characters)') } }, { reason: 'refunded by bank transfer, ticket FIN-42' }),
      response: {
        200: withExample(open('break_id, class, status acknowledged, acknowledged_by (the token name), reason, acknowledged_at, already_acknowledged'), {
          break_id: BREAK_EXAMPLE.break_id,
          class: BREAK_EXAMPLE.class,
          status: 'acknowledged',
          acknowledged_by: 'finance',
          reason: 'refunded by bank transfer, ticket FIN-42',
          acknowledged_at: '2026-11-21T08:30:00.000Z',
          already_acknowledged: false,
        }),
        ...errors(400, 404, 409, 503),
      },
    },
    'The token name is recorded as the actor. Acknowledging again changes nothing; a resolved break answers 409.',
  ),
} as const satisfies Readonly<Record<string, FastifySchema>>
