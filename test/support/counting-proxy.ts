import { createServer, request, type Server } from 'node:http'

/**
 * An HTTP proxy in front of a gateway (the sandbox) that counts what reaches it: every request is
 * forwarded unchanged and its answer returned unchanged; a JSON body's `service` field is counted,
 * so a test can say how many creates arrived at the gateway, whatever satang believes it sent.
 */
export type CountingProxy = {
  readonly url: string
  /** Requests that reached the gateway, by the `service` of their JSON body (`-` without one). */
  readonly count: (service: string) => number
  readonly reset: () => void
  readonly close: () => Promise<void>
}

const serviceOf = (body: Buffer): string => {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'))
    return typeof parsed === 'object' && parsed !== null && 'service' in parsed && typeof parsed.service === 'string' ? parsed.service : '-'
  } catch {
    // Not JSON (a form, a GET): counted as no service.
    return '-'
  }
}

export const startCountingProxy = async (target: string): Promise<CountingProxy> => {
  const to = new URL(target)
  const counts = new Map<string, number>()
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const service = serviceOf(body)
      counts.set(service, (counts.get(service) ?? 0) + 1)
      const upstream = request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      upstream.on('error', () => res.destroy())
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the counting proxy is not listening on a TCP port')
  const port = address.port
  return {
    url: `http://127.0.0.1:${String(port)}${to.pathname === '/' ? '' : to.pathname}`,
    count: (service) => counts.get(service) ?? 0,
    reset: () => counts.clear(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((e) => (e === undefined ? resolve() : reject(e)))
      }),
  }
}
