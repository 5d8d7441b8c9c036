import { afterEach, describe, expect, it } from 'vitest'
import { bearer, makeTestApi, type TestApi } from './support.ts'

type Operation = {
  readonly summary?: string
  readonly description?: string
  readonly security?: ReadonlyArray<Record<string, ReadonlyArray<string>>>
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly required?: boolean }>
  readonly requestBody?: { readonly content: Record<string, { readonly schema: { readonly required?: ReadonlyArray<string>; readonly additionalProperties?: boolean } }> }
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema: { readonly required?: ReadonlyArray<string> } }> }>
}
type Document = {
  readonly openapi: string
  readonly info: { readonly title: string; readonly version: string }
  readonly components: { readonly securitySchemes: Record<string, { readonly type: string; readonly scheme?: string }> }
  readonly paths: Record<string, Record<string, Operation>>
}

/** The routes of the README table "Merchant API (`/v1`)", with their scope, in OpenAPI path syntax. */
const README_ROUTES = [
  ['post', '/v1/payments', 'payments:write'],
  ['post', '/v1/checkouts', 'payments:write'],
  ['get', '/v1/payments/{merchant_order_id}', 'read'],
  ['post', '/v1/refunds', 'payments:write'],
  ['get', '/v1/refunds/{merchant_refund_id}', 'read'],
  ['post', '/v1/subscriptions', 'payments:write'],
  ['put', '/v1/subscriptions/{id}', 'payments:write'],
  ['delete', '/v1/subscriptions/{id}', 'payments:write'],
  ['post', '/v1/subscriptions/{id}/cancel', 'payments:write'],
  ['get', '/v1/subscriptions/{id}', 'read'],
  ['get', '/v1/ledger/balances', 'read'],
  ['get', '/v1/ledger/entries', 'read'],
  ['get', '/v1/audit/{kind}/{id}', 'audit'],
  ['get', '/v1/reconciliation/runs', 'read'],
  ['get', '/v1/reconciliation/runs/{id}', 'read'],
  ['get', '/v1/reconciliation/breaks', 'read'],
  ['get', '/v1/reconciliation/breaks/{id}', 'read'],
  ['get', '/v1/reconciliation/days', 'read'],
  ['post', '/v1/reconciliation/breaks/{id}/acknowledge', 'reconcile:write'],
] as const

let api: TestApi
afterEach(async () => {
  await api.app.close()
})

const fetchDocument = async (): Promise<Document> => {
  const r = await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })
  expect(r.statusCode).toBe(200)
  expect(r.headers['content-type']).toMatch(/^application\/json/)
  return r.json<Document>()
}

describe('GET /v1/openapi.json', () => {
  it('is served without a token, as OpenAPI 3 with a bearer security scheme', async () => {
    api = makeTestApi()
    const doc = await fetchDocument()
    expect(doc.openapi).toMatch(/^3\./)
    expect(doc.info).toEqual(expect.objectContaining({ title: 'satang merchant API', version: 'test' }))
    expect(doc.components.securitySchemes['bearer']).toEqual({ type: 'http', scheme: 'bearer' })
    expect(doc.paths['/v1/openapi.json']?.['get']?.security).toEqual([])
  })

  it('lists exactly the /v1 routes of the README, each with bearer security, its scope, and the error body', async () => {
    api = makeTestApi()
    const doc = await fetchDocument()
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`))
    expect(listed.sort()).toEqual([...README_ROUTES.map(([m, p]) => `${m} ${p}`), 'get /v1/openapi.json'].sort())
    for (const [method, path, scope] of README_ROUTES) {
      const op = doc.paths[path]?.[method]
      expect(op, `${method} ${path}`).toBeDefined()
      expect(op?.security, `${method} ${path}`).toEqual([{ bearer: [] }])
      expect(op?.description, `${method} ${path}`).toContain(`\`${scope}\``)
      expect(op?.summary).toBeTruthy()
      expect(Object.keys(op?.responses ?? {}), `${method} ${path}`).toEqual(expect.arrayContaining(['200', '401', '403']))
      expect(op?.responses['401']?.content?.['application/json']?.schema.required).toEqual(['error'])
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      expect((op?.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, p.required]), `${method} ${path}`).toEqual(pathParams.map((n) => [n, true]))
    }
    for (const path of ['/v1/payments/{merchant_order_id}', '/v1/refunds/{merchant_refund_id}']) {
      expect(doc.paths[path]?.['get']?.parameters).toContainEqual(expect.objectContaining({ name: 'refresh', in: 'query' }))
    }
    const create = doc.paths['/v1/checkouts']?.['post']
    expect(Object.keys(create?.responses ?? {})).toEqual(expect.arrayContaining(['201', '202', '400', '409', '415', '422']))
    expect(create?.requestBody?.content['application/json']?.schema).toMatchObject({ additionalProperties: false, required: expect.arrayContaining(['merchant_order_id', 'order_amount', 'customer']) })
    // The HTTP service's other routes are not part of the merchant API document.
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/v1/'))).toEqual([])
  })
})

describe('the documentation schemas change no behaviour', () => {
  it('a bad body still gets the codecs\' 400 invalid_request with every violation', async () => {
    api = makeTestApi()
    const r = await api.app.inject({
      method: 'POST',
      url: '/v1/checkouts',
      headers: bearer('all'),
      payload: { merchant_order_id: 'bad id!', order_amount: '-1.005', order_currency: 'thb', customer: { merchant_user_id: 'u' }, surprise: true },
    })
    expect(r.statusCode).toBe(400)
    const { error, violations } = r.json<{ error: string; violations: Array<{ path: string; rule: string }> }>()
    expect(error).toBe('invalid_request')
    expect(violations.map((v) => v.path)).toEqual(['merchant_order_id', 'order_amount', 'order_amount', 'order_currency', 'order_desc', 'surprise'])
    expect(violations).toContainEqual({ path: 'surprise', rule: 'is not a field of svc.checkout.apply' })
  })

  it('query and path values are still checked by the routes, and error bodies keep their extra fields', async () => {
    api = makeTestApi()
    const refresh = await api.app.inject({ method: 'GET', url: '/v1/payments/WEB-1?refresh=maybe', headers: bearer('all') })
    expect(refresh.json()).toEqual({ error: 'invalid_request', violations: [{ path: 'refresh', rule: 'must be true or false' }] })
    const kind = await api.app.inject({ method: 'GET', url: '/v1/audit/invoice/X', headers: bearer('all') })
    expect(kind.json()).toEqual({ error: 'invalid_request', violations: [{ path: 'kind', rule: 'must be order, refund or subscription' }] })
    const forbidden = await api.app.inject({ method: 'GET', url: '/v1/payments/WEB-1', headers: bearer('writer') })
    expect(forbidden.json()).toMatchObject({ error: 'forbidden', required_scope: 'read' })
  })
})
