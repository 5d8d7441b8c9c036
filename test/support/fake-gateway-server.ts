import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

/** One request as the fake gateway received it: the exact bytes of the body, the parsed query. */
export type ReceivedRequest = {
  readonly method: string
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/**
 * What the fake does with one request, after reading it whole:
 * - `json`: answer with `body` as JSON (after `delayMs`);
 * - `raw`: answer with `body` as it is;
 * - `reset`: cut the connection with a TCP RST (after `delayMs`), no answer;
 * - `truncated`: send the status line, headers announcing `body` and half of `body`, then cut the connection;
 * - `hang`: never answer (the client has to time out).
 */
export type Reply =
  | { readonly kind: 'json'; readonly body: unknown; readonly status?: number; readonly delayMs?: number; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'raw'; readonly body: string; readonly status?: number; readonly delayMs?: number; readonly contentType?: string }
  | { readonly kind: 'reset'; readonly delayMs?: number }
  | { readonly kind: 'truncated'; readonly body: string }
  | { readonly kind: 'hang' }

export type Responder = (request: ReceivedRequest, index: number) => Reply

export type FakeGatewayServer = {
  /** `http://127.0.0.1:<port>`: the client's `baseUrl`. */
  readonly baseUrl: string
  readonly requests: ReadonlyArray<ReceivedRequest>
  /** TCP connections accepted so far (to observe keep-alive). */
  readonly connections: () => number
  /** Answers the next requests with these replies in order; the last one repeats. */
  readonly reply: (...replies: ReadonlyArray<Reply>) => void
  readonly respond: (responder: Responder) => void
  readonly close: () => Promise<void>
}

export const envelope = (fields: { code?: number; message?: string; traceId?: string; data?: unknown } = {}): Record<string, unknown> => ({
  code: fields.code ?? 200000,
  message: fields.message ?? 'Success',
  ...(fields.data === undefined ? {} : { data: fields.data }),
  trace_id: fields.traceId ?? 'trace-fake',
})

export const ok = (data?: unknown, traceId = 'trace-ok'): Reply => ({ kind: 'json', body: envelope({ data, traceId }) })

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })

const portOf = (server: Server): number => {
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('fake gateway: not listening on TCP')
  return address.port
}

/** A real node:http server on 127.0.0.1 and an ephemeral port, scripted per test. */
export const startFakeGateway = async (): Promise<FakeGatewayServer> => {
  const requests: ReceivedRequest[] = []
  const timers = new Set<NodeJS.Timeout>()
  let connections = 0
  let responder: Responder = () => ok()

  const later = (ms: number | undefined, f: () => void): void => {
    if (ms === undefined || ms <= 0) return f()
    const timer = setTimeout(() => {
      timers.delete(timer)
      f()
    }, ms)
    timers.add(timer)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req)
    const url = new URL(req.url ?? '/', 'http://fake')
    const received: ReceivedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
    }
    requests.push(received)
    const reply = responder(received, requests.length - 1)
    switch (reply.kind) {
      case 'json':
        return later(reply.delayMs, () => {
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers })
          res.end(JSON.stringify(reply.body))
        })
      case 'raw':
        return later(reply.delayMs, () => {
          res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'text/plain' })
          res.end(reply.body)
        })
      case 'reset':
        return later(reply.delayMs, () => req.socket.resetAndDestroy())
      case 'truncated': {
        const bytes = Buffer.from(reply.body, 'utf8')
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes.length) })
        res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => req.socket.destroy())
        return
      }
      case 'hang':
        return
      default:
        return reply satisfies never
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      res.destroy(e instanceof Error ? e : new Error(String(e)))
    })
  })
  server.on('connection', () => {
    connections += 1
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    baseUrl: `http://127.0.0.1:${portOf(server)}`,
    requests,
    connections: () => connections,
    reply: (...replies) => {
      const offset = requests.length
      responder = (_req, index) => {
        const reply = replies[Math.min(index - offset, replies.length - 1)]
        if (reply === undefined) throw new Error('reply() needs at least one reply')
        return reply
      }
    },
    respond: (r) => {
      responder = r
    },
    close: async () => {
      timers.forEach(clearTimeout)
      timers.clear()
      server.closeAllConnections()
      await new Promise<void>((resolve, reject) => server.close((e) => (e === undefined ? resolve() : reject(e))))
    },
  }
}

/** A port on 127.0.0.1 on which nothing listens (bound, then released), for "connection refused". */
export const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = portOf(server)
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
