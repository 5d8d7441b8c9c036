import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy on a fixed local port in front of a server (PostgreSQL): `stop` closes the port and cuts
 * every connection through it, as a database that went away; `start` opens the same port again.
 */
export type TcpProxy = {
  readonly port: number
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

export const tcpProxy = async (target: { readonly host: string; readonly port: number }, port = 0): Promise<TcpProxy> => {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let boundPort = port
  const start = async (): Promise<void> => {
    const s = createServer((client) => {
      const upstream = connect(target.port, target.host)
      sockets.add(client)
      sockets.add(upstream)
      const end = (): void => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on('error', end).on('close', end)
      upstream.on('error', end).on('close', end)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject)
      s.listen(boundPort, '127.0.0.1', () => resolve())
    })
    const address = s.address()
    if (address === null || typeof address === 'string') throw new Error('the TCP proxy is not listening on a TCP port')
    boundPort = address.port
    server = s
  }
  const stop = async (): Promise<void> => {
    const s = server
    server = undefined
    for (const socket of sockets) socket.destroy()
    sockets.clear()
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()))
  }
  await start()
  return {
    get port() {
      return boundPort
    },
    start,
    stop,
  }
}
