import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http'
import { parse as parseQuery } from 'node:querystring'
import { setTimeout as sleep } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { makeGatewayClient, type GatewayClient } from '../../src/adapters/gateway/client.ts'
import type { GatewayError } from '../../src/application/ports/gateway.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier, type Signer, type Verifier } from '../../src/domain/gateway/signing.ts'
import type { SandboxClock } from '../../src/sandbox/clock.ts'
import { makeSandbox, type Sandbox, type SandboxConfig } from '../../src/sandbox/sandbox.ts'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { silentLogger } from '../../src/logger.ts'
import { loadSigningVectors } from '../support/vectors.ts'

/** Shared by the sandbox tests (not a test file): keys of the signing vectors, a sandbox, a merchant's receiver. */

export const MERCHANT_ID = '140000000000000001'
export const OTHER_MERCHANT_ID = '140000000000000002'

const orThrow = <A>(e: E.Either<{ readonly message: string }, A>): A => {
  if (E.isLeft(e)) throw new Error(e.left.message)
  return e.right
}

const vectors = loadSigningVectors()
export const merchantPrivateKey = orThrow(loadPrivateKey(vectors.keys.merchant.private_key_pem))
export const merchantPublicKey = orThrow(loadPublicKey(vectors.keys.merchant.public_key_pem))
export const gatewayPrivateKey = orThrow(loadPrivateKey(vectors.keys.gateway.private_key_pem))
export const gatewayPublicKey = orThrow(loadPublicKey(vectors.keys.gateway.public_key_pem))
export const GATEWAY_PUBLIC_KEY_PEM = vectors.keys.gateway.public_key_pem
export const MERCHANT_PRIVATE_KEY_PEM = vectors.keys.merchant.private_key_pem
export const MERCHANT_PUBLIC_KEY_PEM = vectors.keys.merchant.public_key_pem

export const merchantSigner: Signer = makeSigner(satangCanonicalV1, merchantPrivateKey)
/** Verifies what the sandbox signs with the gateway key: redirect forms, notifications, answers. */
export const gatewayVerifier: Verifier = makeVerifier(satangCanonicalV1, gatewayPublicKey)

/** A sandbox on a free port with the vector keys, no rate limit and fast notification retries. */
export const startSandbox = (over: Partial<SandboxConfig> = {}, clock?: SandboxClock): Promise<Sandbox> =>
  makeSandbox(
    { log: silentLogger(), ...(clock === undefined ? {} : { clock }) },
    {
      port: 0,
      merchants: new Map([[MERCHANT_ID, merchantPublicKey]]),
      gatewayPrivateKey,
      rateLimit: { perSecond: 0, burst: 1 },
      notifications: { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 2000 },
      ...over,
    },
  )

/** The merchant-side client of src/adapters/gateway, signing with the vector merchant key and checking answer signatures. */
export const clientFor = (sandbox: Pick<Sandbox, 'url'>, over: { readonly signer?: Signer; readonly requestMs?: number; readonly verifier?: Verifier } = {}): GatewayClient =>
  makeGatewayClient({
    baseUrl: sandbox.url,
    merchantSigner: over.signer ?? merchantSigner,
    gatewayVerifier: over.verifier ?? gatewayVerifier,
    log: silentLogger(),
    timeouts: { connectMs: 2000, requestMs: over.requestMs ?? 10_000 },
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })

export const expectRight = <A>(r: E.Either<GatewayError, A>): A => {
  if (E.isLeft(r)) throw new Error(`expected success, got ${JSON.stringify(r.left, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`)
  return r.right
}

export const expectLeft = <A>(r: E.Either<GatewayError, A>): GatewayError => {
  if (E.isRight(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.right, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`)
  return r.left
}

/** One request the merchant's server received. */
export type Received = {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly contentType: string
  /** A JSON body parsed, a form body parsed (one value per field), else {}. */
  readonly fields: Readonly<Record<string, unknown>>
}

/** What the notification endpoint answers: `SUCCESS` (the acknowledgement) unless told otherwise. */
export type Ack = { readonly status: number; readonly body: string }

export type MerchantServer = {
  readonly url: string
  readonly received: ReadonlyArray<Received>
  /** Requests to `path` so far. */
  readonly at: (path: string) => ReadonlyArray<Received>
  /** Sets the answer of `/notify` per arrival index (0-based). */
  readonly acknowledge: (ack: (index: number, r: Received) => Ack) => void
  /** Waits until `path` has received `n` requests (or fails after `timeoutMs`). */
  readonly waitFor: (path: string, n: number, timeoutMs?: number) => Promise<ReadonlyArray<Received>>
  /** Waits for the first request to `path` that `match` accepts. */
  readonly waitForMatch: (path: string, match: (r: Received) => boolean, timeoutMs?: number) => Promise<Received>
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })

const parseFields = (contentType: string, body: string): Record<string, unknown> => {
  if (contentType.startsWith('application/json')) {
    const json: unknown = JSON.parse(body)
    return t.UnknownRecord.is(json) ? json : {}
  }
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    return Object.fromEntries(Object.entries(parseQuery(body)).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]))
  }
  return {}
}

/**
 * A merchant's web server: `/notify` takes notifications (answers `SUCCESS`), `/return` takes redirect
 * forms, `/cancelled` is a cancel_url, `/shop?to=URL` is a page linking to a checkout (a Referer).
 */
export const startMerchantServer = async (): Promise<MerchantServer> => {
  const received: Received[] = []
  let ack: (index: number, r: Received) => Ack = () => ({ status: 200, body: 'SUCCESS' })
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? '/', 'http://merchant')
      const contentType = req.headers['content-type'] ?? ''
      const r: Received = { method: req.method ?? '', path: url.pathname, headers: req.headers, contentType, fields: parseFields(contentType, body) }
      received.push(r)
      if (url.pathname === '/notify') {
        const a = ack(received.filter((x) => x.path === '/notify').length - 1, r)
        res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body)
      } else if (url.pathname === '/shop') {
        const to = url.searchParams.get('to') ?? '/'
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en"><title>Shop</title><a id="checkout" href="${to}">Go to checkout</a></html>`)
      } else {
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en"><title>Merchant ${url.pathname}</title><h1>Merchant ${url.pathname}</h1></html>`)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const at = (path: string): ReadonlyArray<Received> => received.filter((r) => r.path === path)
  return {
    url: `http://127.0.0.1:${String(port)}`,
    received,
    at,
    acknowledge: (a) => {
      ack = a
    },
    waitFor: async (path, n, timeoutMs = 5000) => {
      const until = Date.now() + timeoutMs
      while (at(path).length < n) {
        if (Date.now() > until) throw new Error(`merchant server: ${String(at(path).length)} of ${String(n)} requests to ${path} after ${String(timeoutMs)} ms`)
        await sleep(10)
      }
      return at(path)
    },
    waitForMatch: async (path, match, timeoutMs = 5000) => {
      const until = Date.now() + timeoutMs
      for (;;) {
        const found = at(path).find(match)
        if (found !== undefined) return found
        if (Date.now() > until) throw new Error(`merchant server: no matching request to ${path} after ${String(timeoutMs)} ms`)
        await sleep(10)
      }
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** JSON of the control API. */
export const control = async (sandbox: Pick<Sandbox, 'controlUrl'>, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<{ readonly status: number; readonly json: Record<string, unknown> }> => {
  const res = await fetch(`${sandbox.controlUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  })
  const json: unknown = await res.json()
  return { status: res.status, json: t.UnknownRecord.is(json) ? json : {} }
}

/** The answer of a raw gateway request: HTTP status, headers, the envelope. */
export type RawAnswer = { readonly status: number; readonly headers: Headers; readonly envelope: Record<string, unknown> }

/**
 * A request to `{url}/gateway` without the client (which refuses to send invalid fields): POST as JSON
 * or GET as query parameters, signed with `signer` (default the merchant's) unless `sign` is given.
 */
export const rawGateway = async (
  sandbox: Pick<Sandbox, 'gatewayUrl'>,
  method: 'GET' | 'POST',
  fields: Readonly<Record<string, unknown>>,
  opts: { readonly signer?: Signer; readonly sign?: string; readonly headers?: Readonly<Record<string, string>> } = {},
): Promise<RawAnswer> => {
  const sign = opts.sign ?? (opts.signer ?? merchantSigner).sign(fields)
  const headers = { 'content-type': 'application/json', 'sign-type': 'RSA', sign, ...opts.headers }
  const url = new URL(sandbox.gatewayUrl)
  if (method === 'GET') for (const [k, v] of Object.entries(fields)) url.searchParams.append(k, String(v))
  const res = await fetch(url, { method, headers, ...(method === 'POST' ? { body: JSON.stringify(fields) } : {}) })
  const json: unknown = await res.json()
  return { status: res.status, headers: res.headers, envelope: t.UnknownRecord.is(json) ? json : {} }
}
