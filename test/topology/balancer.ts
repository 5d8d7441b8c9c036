import { createServer, request, type IncomingMessage, type Server } from 'node:http'

/**
 * The "balancer" of a topology run: a round-robin HTTP proxy over the API processes, as a load
 * balancer in front of `api` replicas would be. A backend that refuses the connection (its process is
 * down) is skipped for the next one: nothing was sent, so that is safe for any request. A backend that
 * fails after the request was sent answers 502, as a real balancer does: the client (the load, or the
 * sandbox delivering a notification) retries, and satang's idempotency makes that safe.
 */
export type Balancer = {
  readonly url: string
  /** Requests each backend answered, by its index. */
  readonly served: () => ReadonlyArray<number>
  /** 502s (a backend failed mid-request) and 503s (every backend refused) the balancer answered itself. */
  readonly failed: () => number
  readonly close: () => Promise<void>
}

const bodyOf = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })

type Forwarded = { readonly status: number; readonly headers: IncomingMessage['headers']; readonly body: Buffer }

const forward = (port: number, req: IncomingMessage, body: Buffer): Promise<Forwarded> =>
  new Promise((resolve, reject) => {
    const out = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${String(port)}`, 'content-length': String(body.length) }, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }))
        res.on('error', reject)
      },
    )
    out.on('timeout', () => out.destroy(new Error('backend timed out')))
    out.on('error', reject)
    out.end(body)
  })

const refused = (e: unknown): boolean => e instanceof Error && 'code' in e && e.code === 'ECONNREFUSED'

export const startBalancer = async (backendPorts: ReadonlyArray<number>): Promise<Balancer> => {
  const served = backendPorts.map(() => 0)
  let failed = 0
  let next = 0
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req)
      const first = next
      next = (next + 1) % backendPorts.length
      for (let tried = 0; tried < backendPorts.length; tried++) {
        const i = (first + tried) % backendPorts.length
        const port = backendPorts[i]
        if (port === undefined) break
        try {
          const r = await forward(port, req, body)
          served[i] = (served[i] ?? 0) + 1
          const headers = { ...r.headers }
          delete headers['transfer-encoding']
          delete headers['connection']
          res.writeHead(r.status, { ...headers, 'content-length': String(r.body.length) })
          res.end(r.body)
          return
        } catch (e) {
          if (refused(e)) continue
          failed += 1
          res.writeHead(502, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ error: 'bad_gateway', message: e instanceof Error ? e.message : String(e) }))
          return
        }
      }
      failed += 1
      res.writeHead(503, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: 'no_backend', message: 'every API process refused the connection' }))
    })().catch((e: unknown) => {
      res.destroy(e instanceof Error ? e : new Error(String(e)))
    })
  })
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${String(port)}`,
    served: () => [...served],
    failed: () => failed,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((e) => (e === undefined ? resolve() : reject(e)))
      }),
  }
}
