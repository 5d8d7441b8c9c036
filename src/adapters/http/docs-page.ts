import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyReply } from 'fastify'

/*
 * `/docs`: the reference of the merchant API, rendered in the browser by Swagger UI from the OpenAPI
 * document. The renderer comes from the npm package swagger-ui-dist and is served by satang itself,
 * never from a CDN, under the console's content security policy (scripts and styles from this origin
 * only, no inline script) plus `connect-src 'self'` for the document and "Try it out".
 */

export const DOCS = '/docs'

const require = createRequire(import.meta.url)

export const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type Asset = { readonly body: string; readonly type: string }

let cached: { readonly js: Asset; readonly css: Asset } | undefined

/** Swagger UI's bundle and stylesheet, read once from the installed package. */
const renderer = (): { readonly js: Asset; readonly css: Asset } => {
  cached ??= {
    js: { body: readFileSync(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'), 'utf8'), type: 'text/javascript; charset=utf-8' },
    css: { body: readFileSync(require.resolve('swagger-ui-dist/swagger-ui.css'), 'utf8'), type: 'text/css; charset=utf-8' },
  }
  return cached
}

const page = (): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>satang merchant API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${DOCS}/assets/swagger-ui.css">
</head><body>
<div id="reference"></div>
<script src="${DOCS}/assets/swagger-ui-bundle.js"></script>
<script src="${DOCS}/assets/start.js"></script>
</body></html>
`

const start = (documentPath: string): string =>
  `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(documentPath)}, dom_id: '#reference', deepLinking: true, tryItOutEnabled: false, validatorUrl: null });\n`

const send = (reply: FastifyReply, type: string, body: string, cache: string): FastifyReply =>
  reply
    .code(200)
    .header('content-type', type)
    .header('content-security-policy', DOCS_CONTENT_SECURITY_POLICY)
    .header('cache-control', cache)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .send(body)

/** `GET /docs` and its assets (no token: the document it renders needs none either). */
export const registerDocsRoutes = (app: FastifyInstance, documentPath: string): void => {
  app.get(DOCS, async (_request, reply) => send(reply, 'text/html; charset=utf-8', page(), 'no-store'))
  app.get(`${DOCS}/assets/swagger-ui-bundle.js`, async (_request, reply) => send(reply, renderer().js.type, renderer().js.body, 'public, max-age=3600'))
  app.get(`${DOCS}/assets/swagger-ui.css`, async (_request, reply) => send(reply, renderer().css.type, renderer().css.body, 'public, max-age=3600'))
  app.get(`${DOCS}/assets/start.js`, async (_request, reply) => send(reply, 'text/javascript; charset=utf-8', start(documentPath), 'no-store'))
}
