import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { LEDGER_ACCOUNTS, isLedgerAccount, normalSideOf } from '../../domain/ledger/accounts.ts'
import { satangNumber, trialBalanceJson, type BalanceRow, type BalanceScope } from '../../domain/ledger/report.ts'
import type { AsOf } from '../../application/as-of.ts'
import { CHARACTER_RULES } from '../../domain/gateway/text-rules.ts'
import { formatAmount } from '../../domain/money.ts'
import type { Violation } from '../../domain/violations.ts'
import { readEntries, readTrialBalance, type EntryCursor, type EntryFilters, type LedgerEntry } from '../../projections/ledger/reads.ts'
import type { ReadModels } from '../../projections/types.ts'
import type { TokenMatcher } from './api-tokens.ts'
import { requireScope } from './auth.ts'
import { invalidRequest, sendError } from './errors.ts'
import { errors, route, withExample } from './openapi.ts'
import { dateRules, queryOf, reader, type Query } from './query-params.ts'

/**
 * `GET /v1/ledger/balances` and `GET /v1/ledger/entries`: the double-entry ledger, read from the
 * `ledger` read model (scope `read`). Amounts are satang (JSON integers) and baht text ("250.00").
 * Query parameters are checked all at once: a 400 names every bad parameter and the rule it breaks.
 */
export type LedgerRouteDeps = {
  readonly readModels: ReadModels
  readonly tokens: TokenMatcher
  /** `?as_of=` on the trial balance: the ledger as the log stood at an instant or position. */
  readonly asOf?: {
    readonly resolve: (text: string) => Promise<E.Either<string, AsOf>>
    readonly trialBalance: (scope: BalanceScope, position: AsOf['position']) => Promise<ReadonlyArray<BalanceRow>>
  }
}

export const MAX_ENTRIES_LIMIT = 1000
export const DEFAULT_ENTRIES_LIMIT = 100

const currencyRules = (s: string): ReadonlyArray<string> => (/^[A-Z]{3}$/.test(s) ? [] : ['must be a three-letter currency code such as THB'])
const channelRules = (s: string): ReadonlyArray<string> =>
  /^[A-Za-z0-9._-]{1,64}$/.test(s) ? [] : ['must be 1 to 64 letters, digits, dots, dashes or underlines (a channel such as svc.thaiqr.pay, subscription or unknown)']
const accountRules = (s: string): ReadonlyArray<string> => (isLedgerAccount(s) ? [] : [`must be one of ${LEDGER_ACCOUNTS.join(', ')}`])
const idRules = (s: string): ReadonlyArray<string> => [...CHARACTER_RULES.flatMap((rule) => rule(s) ?? []), ...(s.length <= 64 ? [] : ['must be at most 64 characters'])]
const limitRules = (s: string): ReadonlyArray<string> =>
  /^[0-9]{1,7}$/.test(s) && Number(s) >= 1 && Number(s) <= MAX_ENTRIES_LIMIT ? [] : [`must be a whole number from 1 to ${String(MAX_ENTRIES_LIMIT)}`]

const CursorJson = t.tuple([t.string, t.number])

/** A page cursor as the API hands it out: opaque base64url text of where the page ended. */
export const encodeCursor = (c: EntryCursor): string => Buffer.from(JSON.stringify([c.position, c.line]), 'utf8').toString('base64url')

export const decodeCursor = (s: string): EntryCursor | null => {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (!CursorJson.is(json)) return null
  const [position, line] = json
  return position !== '' && Number.isInteger(line) && line >= 1 && line <= 32767 ? { position, line } : null
}

// as_of is read by the route itself (the trial balance as the log stood then).
const BALANCE_PARAMS = ['date', 'currency', 'channel', 'as_of']
const ENTRY_PARAMS = ['account', 'channel', 'currency', 'merchant_order_id', 'from', 'to', 'limit', 'cursor']

/** The scope of `GET /v1/ledger/balances`, or every violation of its query. */
export const balanceScopeOf = (query: Query): E.Either<ReadonlyArray<Violation>, BalanceScope> => {
  const r = reader(query, BALANCE_PARAMS)
  const scope: BalanceScope = { date: r.text('date', dateRules), currency: r.text('currency', currencyRules), channel: r.text('channel', channelRules) }
  return r.violations.length > 0 ? E.left(r.violations) : E.right(scope)
}

export type EntriesRequest = { readonly filters: EntryFilters; readonly limit: number; readonly after: EntryCursor | null }

/** The filters and page of `GET /v1/ledger/entries`, or every violation of its query. */
export const entriesRequestOf = (query: Query): E.Either<ReadonlyArray<Violation>, EntriesRequest> => {
  const r = reader(query, ENTRY_PARAMS)
  const filters: EntryFilters = {
    account: r.text('account', accountRules),
    channel: r.text('channel', channelRules),
    currency: r.text('currency', currencyRules),
    merchantOrderId: r.text('merchant_order_id', idRules),
    from: r.text('from', dateRules),
    to: r.text('to', dateRules),
  }
  if (filters.from !== null && filters.to !== null && filters.to < filters.from) r.fail('to', 'must not be before from')
  const limit = r.text('limit', limitRules)
  let after: EntryCursor | null = null
  const cursor = r.text('cursor', () => [])
  if (cursor !== null) {
    after = decodeCursor(cursor)
    if (after === null) r.fail('cursor', 'must be a next_cursor returned by this route')
  }
  return r.violations.length > 0 ? E.left(r.violations) : E.right({ filters, limit: limit === null ? DEFAULT_ENTRIES_LIMIT : Number(limit), after })
}

/** One entry as the API shows it. */
export const entryJson = (e: LedgerEntry) => ({
  entry_id: e.entryId,
  event_id: e.eventId,
  line: e.line,
  position: e.position,
  stream_name: e.streamName,
  posting_kind: e.kind,
  merchant_id: e.merchantId,
  merchant_order_id: e.merchantOrderId,
  merchant_refund_id: e.merchantRefundId,
  merchant_subscribe_id: e.merchantSubscribeId,
  account: e.account,
  normal_balance: normalSideOf(e.account),
  channel: e.channel,
  currency: e.currency,
  debit_satang: satangNumber(e.debit),
  credit_satang: satangNumber(e.credit),
  debit: formatAmount(e.debit),
  credit: formatAmount(e.credit),
  posted_at: e.postedAt.toISOString(),
  posting_date_bangkok: e.postingDateBangkok,
  recorded_at: e.recordedAt.toISOString(),
  description: e.description,
})

const pgCodeOf = (e: unknown): string | undefined => (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined)

/** A failed read: 503, saying whether the read model is missing or the database failed. */
const readFailed = (request: FastifyRequest, reply: FastifyReply, e: unknown): FastifyReply => {
  const code = pgCodeOf(e)
  // 42P01 undefined_table, 3F000 invalid_schema_name: the projector has not created the ledger yet.
  if (code === '42P01' || code === '3F000') {
    request.log.warn({ code }, 'ledger read model missing')
    return sendError(reply, 503, { error: 'unavailable', message: 'the ledger read model does not exist yet: run satang migrate (or satang up)', retriable: true })
  }
  request.log.error({ err: e }, 'ledger read failed')
  return sendError(reply, 503, { error: 'unavailable', message: 'the ledger read model could not be read', retriable: true })
}

export const registerLedgerRoutes =
  (deps: LedgerRouteDeps) =>
  (app: FastifyInstance): void => {
    const read = (schema: FastifySchema) => ({ schema, preHandler: requireScope(deps.tokens, 'read') })

    app.get('/v1/ledger/balances', read(LEDGER_DOCS.balances), async (request, reply) => {
      const query = queryOf(request)
      const asOfText = query['as_of']
      const scope = balanceScopeOf(query)
      if (E.isLeft(scope)) return invalidRequest(reply, scope.left)
      if (asOfText !== undefined) {
        if (typeof asOfText !== 'string' || asOfText === '') return invalidRequest(reply, [{ path: 'as_of', rule: 'must be given once, not empty' }])
        if (deps.asOf === undefined) return invalidRequest(reply, [{ path: 'as_of', rule: 'is not served by this process' }])
        const asOf = await deps.asOf.resolve(asOfText)
        if (E.isLeft(asOf)) return invalidRequest(reply, [{ path: 'as_of', rule: asOf.left }])
        let past
        try {
          past = await deps.asOf.trialBalance(scope.right, asOf.right.position)
        } catch (e) {
          return readFailed(request, reply, e)
        }
        const log = { requested: asOf.right.requested, position: asOf.right.position, instant: asOf.right.instant.toISOString() }
        return reply.code(200).send({ ...trialBalanceJson(past, scope.right), as_of_log: log })
      }
      let rows
      try {
        rows = await readTrialBalance(deps.readModels, scope.right)
      } catch (e) {
        return readFailed(request, reply, e)
      }
      return reply.code(200).send(trialBalanceJson(rows, scope.right))
    })

    app.get('/v1/ledger/entries', read(LEDGER_DOCS.entries), async (request, reply) => {
      const req = entriesRequestOf(queryOf(request))
      if (E.isLeft(req)) return invalidRequest(reply, req.left)
      const { filters, limit, after } = req.right
      let page
      try {
        page = await readEntries(deps.readModels, filters, { limit, after })
      } catch (e) {
        return readFailed(request, reply, e)
      }
      return reply.code(200).send({
        filters: {
          account: filters.account,
          channel: filters.channel,
          currency: filters.currency,
          merchant_order_id: filters.merchantOrderId,
          from: filters.from,
          to: filters.to,
        },
        limit,
        entries: page.entries.map(entryJson),
        next_cursor: page.next === null ? null : encodeCursor(page.next),
      })
    })
  }

/*
 * OpenAPI documentation of the two routes, in the style of openapi.ts (documentation-only schemas
 * under `schema.documentation`; the routes validate with the rules above).
 */

type JsonSchema = { readonly [keyword: string]: unknown }

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra })
const int = (description: string): JsonSchema => ({ type: 'integer', description })
const nullableStr = (description: string): JsonSchema => ({ type: 'string', nullable: true, description })

const amountProps = (what: string): Readonly<Record<string, JsonSchema>> => ({
  debit_satang: int(`${what} debits, satang`),
  credit_satang: int(`${what} credits, satang`),
  debit: str(`${what} debits, baht with two decimals`),
  credit: str(`${what} credits, baht with two decimals`),
})
const balanceProps = {
  ...amountProps('total'),
  balance_satang: int('debits minus credits, satang (negative for an account whose normal balance is credit)'),
  balance: str('debits minus credits, baht with two decimals'),
}

const dateParam = (description: string): JsonSchema => str(description, { format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' })
const currencyParam = str('only this currency', { pattern: '^[A-Z]{3}$', example: 'THB' })
const channelParam = str('only this channel: an order service such as svc.thaiqr.pay, subscription, or unknown', { pattern: '^[A-Za-z0-9._-]{1,64}$' })

const receivable = { account: 'gateway_receivable', normal_balance: 'debit', channel: 'svc.checkout.apply', currency: 'THB' }
const BALANCES_EXAMPLE = {
  as_of: { date_bangkok: null, until_utc: null },
  filters: { currency: null, channel: null },
  balances: [
    { ...receivable, debit_satang: 25000, credit_satang: 0, debit: '250.00', credit: '0.00', balance_satang: 25000, balance: '250.00' },
    { account: 'sales', normal_balance: 'credit', channel: 'svc.checkout.apply', currency: 'THB', debit_satang: 0, credit_satang: 25000, debit: '0.00', credit: '250.00', balance_satang: -25000, balance: '-250.00' },
  ],
  totals: [{ currency: 'THB', debit_satang: 25000, credit_satang: 25000, debit: '250.00', credit: '250.00', balance_satang: 0, balance: '0.00', balanced: true }],
  balanced: true,
}
const ENTRIES_EXAMPLE = {
  filters: { account: null, channel: null, currency: null, merchant_order_id: 'ORD-1', from: null, to: null },
  limit: 100,
  entries: [
    {
      entry_id: '9a3f4a52-52b4-4d8e-9a55-0d0e4a6b7c03/1',
      event_id: '9a3f4a52-52b4-4d8e-9a55-0d0e4a6b7c03',
      line: 1,
      position: '0000000000000004',
      stream_name: 'order-140000000000000001-ORD-1',
      posting_kind: 'order_paid',
      merchant_id: '140000000000000001',
      merchant_order_id: 'ORD-1',
      merchant_refund_id: null,
      merchant_subscribe_id: null,
      ...receivable,
      debit_satang: 25000,
      credit_satang: 0,
      debit: '250.00',
      credit: '0.00',
      posted_at: '2026-11-20T10:02:13.000Z',
      posting_date_bangkok: '2026-11-20',
      recorded_at: '2026-11-20T10:02:13.204Z',
      description: 'ORD-1 paid',
    },
  ],
  next_cursor: null,
}

/** The `schema` of each ledger route, for `/v1/openapi.json`. */
export const LEDGER_DOCS = {
  balances: route(
    'The trial balance of the ledger',
    'read',
    {
      operationId: 'getLedgerBalances',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          date: dateParam('Asia/Bangkok date: entries posted on it or before'),
          currency: currencyParam,
          channel: channelParam,
          as_of: { type: 'string', description: 'the ledger as the event log stood at an instant (ISO-8601 with its offset) or a global log position; the answer adds as_of_log { requested, position, instant }' },
        },
      },
      response: {
        200: withExample({
          description: 'the trial balance',
          type: 'object',
          required: ['as_of', 'filters', 'balances', 'totals', 'balanced'],
          properties: {
            as_of: {
              type: 'object',
              properties: { date_bangkok: nullableStr('the date asked for, or null for every entry'), until_utc: nullableStr('the instant that date ends (UTC), or null') },
            },
            filters: { type: 'object', properties: { currency: nullableStr('currency filter'), channel: nullableStr('channel filter') } },
            balances: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  account: str('gateway_receivable, refunds, sales or subscription_sales', { enum: [...LEDGER_ACCOUNTS] }),
                  normal_balance: str('debit or credit', { enum: ['debit', 'credit'] }),
                  channel: str('the order service, subscription, or unknown'),
                  currency: str('e.g. THB'),
                  ...balanceProps,
                },
              },
            },
            totals: {
              type: 'array',
              items: { type: 'object', properties: { currency: str('e.g. THB'), ...balanceProps, balanced: { type: 'boolean', description: 'debits = credits' } } },
            },
            balanced: { type: 'boolean', description: 'debits = credits in every currency' },
          },
        }, BALANCES_EXAMPLE),
        ...errors(400, 503),
      },
    },
    'One row per account, channel and currency with its total debits, credits and balance (debits minus credits), and totals per currency (debits = credits). With `date`: as of the end of that Bangkok date.',
  ),
  entries: route(
    'Ledger entries (posting lines)',
    'read',
    {
      operationId: 'listLedgerEntries',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          account: str('only this account', { enum: [...LEDGER_ACCOUNTS] }),
          channel: channelParam,
          currency: currencyParam,
          merchant_order_id: str('only lines of this order (its payment and its refunds)'),
          from: dateParam('Asia/Bangkok posting date, inclusive'),
          to: dateParam('Asia/Bangkok posting date, inclusive; not before from'),
          limit: { type: 'integer', minimum: 1, maximum: MAX_ENTRIES_LIMIT, default: DEFAULT_ENTRIES_LIMIT },
          cursor: str('next_cursor of the previous page'),
        },
      },
      response: {
        200: withExample({
          description: 'a page of posting lines',
          type: 'object',
          required: ['filters', 'limit', 'entries', 'next_cursor'],
          properties: {
            filters: { type: 'object', additionalProperties: true, description: 'the filters applied (null: none)' },
            limit: int('page size'),
            next_cursor: nullableStr('pass as cursor for the next page; null on the last page'),
            entries: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  entry_id: str('<event_id>/<line>'),
                  event_id: str('the event the posting comes from', { format: 'uuid' }),
                  line: int('line of the posting, 1 or 2'),
                  position: str("the event's global position in the log"),
                  stream_name: str('the stream of the event'),
                  posting_kind: str('order_paid, refund_succeeded or subscription_charged', { enum: ['order_paid', 'refund_succeeded', 'subscription_charged'] }),
                  merchant_id: str('merchant'),
                  merchant_order_id: nullableStr('the order paid or refunded'),
                  merchant_refund_id: nullableStr('the refund'),
                  merchant_subscribe_id: nullableStr('the subscription charged'),
                  account: str('account', { enum: [...LEDGER_ACCOUNTS] }),
                  normal_balance: str('debit or credit'),
                  channel: str('the order service, subscription, or unknown'),
                  currency: str('e.g. THB'),
                  ...amountProps('line'),
                  posted_at: str('when the money moved (UTC): the gateway complete time if reported, else when observed', { format: 'date-time' }),
                  posting_date_bangkok: str('the Asia/Bangkok date of posted_at', { format: 'date' }),
                  recorded_at: str('when the event was stored (UTC)', { format: 'date-time' }),
                  description: str('for people'),
                },
              },
            },
          },
        }, ENTRIES_EXAMPLE),
        ...errors(400, 503),
      },
    },
    `One line per row, in log order (global position, then line). Keyset pages: pass \`next_cursor\` as \`cursor\` for the next page; \`next_cursor\` is null on the last. \`limit\` 1 to ${String(MAX_ENTRIES_LIMIT)} (default ${String(DEFAULT_ENTRIES_LIMIT)}).`,
  ),
} as const satisfies Readonly<Record<string, FastifySchema>>
