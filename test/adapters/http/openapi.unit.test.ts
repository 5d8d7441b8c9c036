import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterEach, describe, expect, it } from 'vitest'
import { clientTypesOf, openApiDocumentText } from '../../../scripts/openapi-document.ts'
import { PaymentView } from '../../../src/domain/order/view.ts'
import { RefundView } from '../../../src/application/refunds.ts'
import { SubscriptionView } from '../../../src/application/subscriptions.ts'
import { DOCS_CONTENT_SECURITY_POLICY } from '../../../src/adapters/http/docs-page.ts'
import { bearer, makeTestApi, type TestApi } from './support.ts'

type Media = { readonly schema: { readonly $ref?: string; readonly required?: ReadonlyArray<string>; readonly additionalProperties?: boolean }; readonly example?: unknown }
type Operation = {
  readonly operationId?: string
  readonly summary?: string
  readonly description?: string
  readonly security?: ReadonlyArray<Record<string, ReadonlyArray<string>>>
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly required?: boolean }>
  readonly requestBody?: { readonly content: Record<string, Media> }
  readonly responses: Record<string, { readonly content?: Record<string, Media> }>
}
type Document = {
  readonly openapi: string
  readonly info: { readonly title: string; readonly version: string }
  readonly components: { readonly securitySchemes: Record<string, { readonly type: string; readonly scheme?: string }>; readonly schemas: Record<string, Record<string, unknown>> }
  readonly paths: Record<string, Record<string, Operation>>
}

/** The routes of the docs/merchant-api.md table "Merchant API (`/v1`)", with their scope, in OpenAPI path syntax. */
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
      expect(op?.responses['401']?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' })
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

const operations = (doc: Document): ReadonlyArray<readonly [string, Operation]> => Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [`${method} ${path}`, op] as const))

describe('a document a client can be generated from', () => {
  it('every operation has a unique operationId and an example of its answer; every request body has one too', async () => {
    api = makeTestApi()
    const doc = await fetchDocument()
    const ids = operations(doc).map(([, op]) => op.operationId)
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id)), JSON.stringify(ids)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    for (const [name, op] of operations(doc)) {
      const examples = Object.entries(op.responses).filter(([status, r]) => status.startsWith('2') && r.content?.['application/json']?.example !== undefined)
      expect(examples.length, `${name}: an answer with an example`).toBeGreaterThan(0)
      if (op.requestBody !== undefined) expect(op.requestBody.content['application/json']?.example, `${name}: request example`).toBeDefined()
    }
  })

  it('every error answer refers to the one Error component', async () => {
    api = makeTestApi()
    const doc = await fetchDocument()
    const errorAnswers = operations(doc).flatMap(([name, op]) => Object.entries(op.responses).filter(([status]) => /^[45]/.test(status)).map(([status, r]) => [`${name} ${status}`, r.content?.['application/json']?.schema] as const))
    expect(errorAnswers.length).toBeGreaterThan(100)
    for (const [name, schema] of errorAnswers) expect(schema, name).toEqual({ $ref: '#/components/schemas/Error' })
    expect(doc.components.schemas['Error']).toMatchObject({ type: 'object', required: ['error'] })
  })

  it('payments, refunds and subscriptions answer closed schemas generated from the view codecs, not open objects', async () => {
    api = makeTestApi()
    const doc = await fetchDocument()
    const answers: ReadonlyArray<readonly [string, string, { readonly props: Readonly<Record<string, unknown>> }]> = [
      ['Payment', 'get /v1/payments/{merchant_order_id}', PaymentView],
      ['Refund', 'get /v1/refunds/{merchant_refund_id}', RefundView],
      ['Subscription', 'get /v1/subscriptions/{id}', SubscriptionView],
    ]
    for (const [component, operation, codec] of answers) {
      const schema = doc.components.schemas[component]
      expect(schema, component).toMatchObject({ type: 'object', additionalProperties: false, required: Object.keys(codec.props) })
      expect(Object.keys(schema?.['properties'] ?? {})).toEqual(expect.arrayContaining([...Object.keys(codec.props), 'served_from']))
      const op = operations(doc).find(([name]) => name === operation)?.[1]
      expect(op?.responses['200']?.content?.['application/json']?.schema).toEqual({ $ref: `#/components/schemas/${component}` })
    }
    expect(doc.components.schemas['Payment']?.['properties']).toMatchObject({ request: { anyOf: expect.arrayContaining([expect.objectContaining({ required: ['phase', 'accepted_at'] })]) }, paid: { type: 'boolean' } })
  })

  it('every example is valid against its schema (components strict: no field the codecs do not know)', async () => {
    api = makeTestApi()
    const doc = await fetchDocument()
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats.default(ajv)
    ajv.addSchema({ $id: 'satang', components: doc.components }, 'satang')
    const checked: string[] = []
    for (const [name, op] of operations(doc)) {
      const media = [...Object.entries(op.responses).map(([status, r]) => [status, r.content?.['application/json']] as const), ['body', op.requestBody?.content['application/json']] as const]
      for (const [where, m] of media) {
        if (m?.example === undefined) continue
        const schema = m.schema.$ref === undefined ? m.schema : { $ref: `satang${m.schema.$ref}` }
        const validate = ajv.compile(schema)
        expect(validate(m.example), `${name} ${where}: ${JSON.stringify(validate.errors)}`).toBe(true)
        checked.push(`${name} ${where}`)
      }
    }
    expect(checked.length).toBeGreaterThanOrEqual(operations(doc).length)
  })

  it('the generated client types committed in test/openapi/satang-api.ts are what openapi-typescript makes of the served document', async () => {
    api = makeTestApi()
    const served = await fetchDocument()
    const text = await openApiDocumentText('test')
    // the document of the script (no database) is the one the server serves
    expect(JSON.parse(text)).toEqual(served)
    const committed = readFileSync(new URL('../../openapi/satang-api.ts', import.meta.url), 'utf8')
    expect(committed, 'run npm run openapi:types').toBe(await clientTypesOf(text))
  })
})

describe('GET /docs', () => {
  it('serves the reference page and its renderer from satang itself, under the console\'s CSP (no inline script, nothing from elsewhere)', async () => {
    api = makeTestApi()
    const page = await api.app.inject({ method: 'GET', url: '/docs' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.headers['content-security-policy']).toBe(DOCS_CONTENT_SECURITY_POLICY)
    expect(DOCS_CONTENT_SECURITY_POLICY).toContain("script-src 'self';")
    expect(DOCS_CONTENT_SECURITY_POLICY).not.toContain('unsafe')
    expect(page.body).not.toMatch(/https?:\/\//)
    expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<]/)
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '').filter((src) => src !== 'data:,')
    expect(sources.length).toBe(3)
    for (const src of sources) {
      expect(src.startsWith('/docs/assets/'), src).toBe(true)
      const asset = await api.app.inject({ method: 'GET', url: src })
      expect(asset.statusCode, src).toBe(200)
      expect(asset.headers['content-type']).toMatch(/^text\/(javascript|css)/)
    }
    const start = await api.app.inject({ method: 'GET', url: '/docs/assets/start.js' })
    expect(start.body).toContain('"/v1/openapi.json"')
    const bundle = await api.app.inject({ method: 'GET', url: '/docs/assets/swagger-ui-bundle.js' })
    expect(bundle.body.length).toBeGreaterThan(500_000)
  })
})
