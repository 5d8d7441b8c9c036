import { createServer } from 'node:net'

/** A TCP port on 127.0.0.1 held by a listener until `release` (to test what happens when a port is taken). */
export const takenPort = (): Promise<{ readonly port: number; readonly release: () => Promise<void> }> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      const release = (): Promise<void> => new Promise((closed) => server.close(() => closed()))
      if (port > 0) resolve({ port, release })
      else void release().then(() => reject(new Error('no port assigned')))
    })
  })

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export const freePort = async (): Promise<number> => {
  const taken = await takenPort()
  await taken.release()
  return taken.port
}
