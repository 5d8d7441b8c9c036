import type { FastifyInstance } from 'fastify'
import type { Pool } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTokenMatcher } from '../../src/adapters/http/api-tokens.ts'
import { registerLedgerRoutes } from '../../src/adapters/http/ledger-routes.ts'
import { makeHttpServer, makeMetricsRegistry } from '../../src/adapters/http/server.ts'
import { silentLogger } from '../../src/logger.ts'
import { ledgerProjection } from '../../src/projections/ledger/projection.ts'
import { bearer, TOKENS } from '../adapters/http/support.ts'
import { ledgerScenario } from '../domain/ledger/scenario.ts'
import { freshEventStoreSchema, type TestSchema } from '../support/postgres.ts'
import { applyInTransaction, createProjectionTables } from './support.ts'

let db: TestSchema
let pool: Pool
let app: FastifyInstance
let missing: FastifyInstance

const appOver = (schema: string): FastifyInstance =>
  makeHttpServer({
    log: silentLogger(),
    version: 'test',
    metrics: makeMetricsRegistry(),
    checks: [],
    routes: [registerLedgerRoutes({ readModels: { pool, schema }, tokens: makeTokenMatcher(TOKENS) })],
  })

beforeAll(async () => {
  db = await freshEventStoreSchema('ledger_http')
  pool = db.pool()
  await createProjectionTables(pool, db.schema, ledgerProjection)
  for (const batch of ledgerScenario()) await applyInTransaction(pool, db.schema, ledgerProjection, batch)
  app = appOver(db.schema)
  missing = appOver(`${db.schema}_none`)
  await app.ready()
  await missing.ready()
})

afterAll(async () => {
  await app.close()
  await missing.close()
  await db.drop()
})

type Json = Record<string, unknown>
const get = async (url: string, who: Parameters<typeof bearer>[0] = 'reader', on: FastifyInstance = app) => {
  const r = await on.inject({ method: 'GET', url, headers: bearer(who) })
  return { status: r.statusCode, body: r.json<Json>() }
}
const violations = (body: Json) => body['violations'] as ReadonlyArray<{ path: string; rule: string }>

describe('GET /v1/ledger/balances', () => {
  it('needs a token with the scope read', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/ledger/balances' })).statusCode).toBe(401)
    const r = await get('/v1/ledger/balances', 'writer')
    expect(r.status).toBe(403)
    expect(r.body['required_scope']).toBe('read')
  })

  it('the trial balance: every account, channel and currency, in satang and baht, balanced', async () => {
    const r = await get('/v1/ledger/balances')
    expect(r.status).toBe(200)
    expect(r.body['as_of']).toEqual({ date_bangkok: null, until_utc: null })
    expect(r.body['balanced']).toBe(true)
    expect(r.body['totals']).toEqual([{ currency: 'THB', debit_satang: 59000, credit_satang: 59000, balance_satang: 0, debit: '590.00', credit: '590.00', balance: '0.00', balanced: true }])
    const balances = r.body['balances'] as ReadonlyArray<Json>
    expect(balances.find((b) => b['account'] === 'gateway_receivable' && b['channel'] === 'svc.thaiqr.pay')).toEqual({
      account: 'gateway_receivable',
      normal_balance: 'debit',
      channel: 'svc.thaiqr.pay',
      currency: 'THB',
      debit_satang: 25000,
      credit_satang: 4000,
      balance_satang: 21000,
      debit: '250.00',
      credit: '40.00',
      balance: '210.00',
    })
    const receivable = balances.filter((b) => b['account'] === 'gateway_receivable').reduce((s, b) => s + Number(b['balance_satang']), 0)
    expect(receivable).toBe(25000 + 10000 - 4000 - 100 + 19900)
  })

  it('?date= gives balances as of the end of that Bangkok day; ?channel= and ?currency= filter', async () => {
    const jan5 = await get('/v1/ledger/balances?date=2026-01-05')
    expect(jan5.body['as_of']).toEqual({ date_bangkok: '2026-01-05', until_utc: '2026-01-05T17:00:00.000Z' })
    expect((jan5.body['balances'] as ReadonlyArray<Json>).map((b) => [b['account'], b['channel'], b['balance']])).toEqual([
      ['gateway_receivable', 'svc.thaiqr.pay', '250.00'],
      ['sales', 'svc.thaiqr.pay', '-250.00'],
    ])
    const sub = await get('/v1/ledger/balances?channel=subscription&currency=THB')
    expect((sub.body['balances'] as ReadonlyArray<Json>).map((b) => b['account'])).toEqual(['gateway_receivable', 'subscription_sales'])
    expect(sub.body['filters']).toEqual({ currency: 'THB', channel: 'subscription' })
    const none = await get('/v1/ledger/balances?currency=USD')
    expect(none.body).toMatchObject({ balances: [], totals: [], balanced: true })
  })

  it('a 400 names every bad parameter and the rule it breaks', async () => {
    const r = await get('/v1/ledger/balances?date=2026-02-30&currency=thb&channel=no%20spaces&bogus=x')
    expect(r.status).toBe(400)
    expect(r.body['error']).toBe('invalid_request')
    expect(violations(r.body)).toEqual([
      { path: 'bogus', rule: 'is not a parameter of this route (known: date, currency, channel, as_of)' },
      { path: 'date', rule: 'day must be 01 to 28 in 2026-02' },
      { path: 'currency', rule: 'must be a three-letter currency code such as THB' },
      { path: 'channel', rule: expect.stringMatching(/^must be 1 to 64 letters/) as unknown as string },
    ])
    const twice = await get('/v1/ledger/balances?date=2026-01-05&date=2026-01-06')
    expect(violations(twice.body)).toEqual([{ path: 'date', rule: 'must be given once' }])
    const shape = await get('/v1/ledger/balances?date=05/01/2026')
    expect(violations(shape.body)).toEqual([{ path: 'date', rule: 'must be a date yyyy-MM-dd (Asia/Bangkok)' }])
  })

  it('503 when the read model does not exist yet', async () => {
    const r = await get('/v1/ledger/balances', 'reader', missing)
    expect(r.status).toBe(503)
    expect(r.body).toMatchObject({ error: 'unavailable', retriable: true })
    expect(String(r.body['message'])).toMatch(/does not exist yet: run satang migrate/)
  })
})

describe('GET /v1/ledger/entries', () => {
  it('pages through every line in log order with next_cursor', async () => {
    const ids: string[] = []
    let url = '/v1/ledger/entries?limit=4'
    for (let pages = 0; pages < 10; pages++) {
      const r = await get(url)
      expect(r.status).toBe(200)
      ids.push(...(r.body['entries'] as ReadonlyArray<Json>).map((e) => String(e['entry_id'])))
      const next = r.body['next_cursor']
      if (next === null) break
      url = `/v1/ledger/entries?limit=4&cursor=${String(next)}`
    }
    expect(ids).toHaveLength(10)
    expect(new Set(ids).size).toBe(10)
    const first = (await get('/v1/ledger/entries')).body
    expect(first['limit']).toBe(100)
    expect(first['next_cursor']).toBeNull()
    expect((first['entries'] as ReadonlyArray<Json>)[0]).toMatchObject({
      line: 1,
      posting_kind: 'order_paid',
      merchant_order_id: 'A',
      account: 'gateway_receivable',
      normal_balance: 'debit',
      channel: 'svc.thaiqr.pay',
      currency: 'THB',
      debit_satang: 25000,
      credit_satang: 0,
      debit: '250.00',
      credit: '0.00',
      posted_at: '2026-01-05T16:30:00.000Z',
      posting_date_bangkok: '2026-01-05',
    })
  })

  it('filters by account, channel, order and Bangkok dates', async () => {
    const r = await get('/v1/ledger/entries?account=gateway_receivable&merchant_order_id=A&from=2026-01-06&to=2026-01-06')
    expect((r.body['entries'] as ReadonlyArray<Json>).map((e) => [e['posting_kind'], e['merchant_refund_id'], e['credit']])).toEqual([['refund_succeeded', 'R-1', '40.00']])
    const unknown = await get('/v1/ledger/entries?channel=unknown')
    expect((unknown.body['entries'] as ReadonlyArray<Json>).map((e) => e['account'])).toEqual(['refunds', 'gateway_receivable'])
    const jan5 = await get('/v1/ledger/entries?to=2026-01-05')
    expect((jan5.body['entries'] as ReadonlyArray<Json>).map((e) => e['merchant_order_id'])).toEqual(['A', 'A'])
  })

  it('a 400 names every bad parameter: account, limit, dates, cursor', async () => {
    const r = await get('/v1/ledger/entries?account=cash&limit=1001&from=2026-01-07&to=2026-01-06&cursor=bogus!')
    expect(r.status).toBe(400)
    expect(violations(r.body)).toEqual([
      { path: 'account', rule: 'must be one of gateway_receivable, refunds, sales, subscription_sales' },
      { path: 'to', rule: 'must not be before from' },
      { path: 'limit', rule: 'must be a whole number from 1 to 1000' },
      { path: 'cursor', rule: 'must be a next_cursor returned by this route' },
    ])
    for (const limit of ['0', 'abc', '-1', '1.5', '']) {
      const bad = await get(`/v1/ledger/entries?limit=${limit}`)
      expect(bad.status).toBe(400)
      expect(violations(bad.body)[0]?.path).toBe('limit')
    }
    const forged = Buffer.from(JSON.stringify(['x', 0])).toString('base64url')
    expect(violations((await get(`/v1/ledger/entries?cursor=${forged}`)).body)).toEqual([{ path: 'cursor', rule: 'must be a next_cursor returned by this route' }])
  })
})

describe('OpenAPI', () => {
  it('documents both routes in /v1/openapi.json', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, Record<string, Json>> }>()
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/ledger/balances', '/v1/ledger/entries']))
    const params = doc.paths['/v1/ledger/entries']?.['get']?.['parameters'] as ReadonlyArray<{ name: string }>
    expect(params.map((p) => p.name)).toEqual(['account', 'channel', 'currency', 'merchant_order_id', 'from', 'to', 'limit', 'cursor'])
  })
})
